# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Files a task writes on the controller that hold secrets in the clear (Heat's
abandon data of a stack: its hidden parameter values, its generated passwords).

Such a file is always a new file, private to the user (0600, whatever the umask and
whatever the mode of a file it replaces), written in the destination's directory and
renamed over the destination: a reader sees the old file or the whole new one, and
never the new content under an old, readable mode."""

from __future__ import annotations

import os
import tempfile

from ..errors import HotplayError

PRIVATE_FILE_MODE = 0o600


def write_private(path: str, text: str) -> None:
    """Write ``text`` to ``path`` as a new file only its owner may read; a file, or a
    symbolic link, at ``path`` is replaced (a link's target is left as it is)."""
    directory, name = os.path.split(os.path.abspath(path))
    try:
        descriptor, temporary = tempfile.mkstemp(dir=directory, prefix=f".{name}.", suffix=".tmp")
    except OSError as error:
        raise HotplayError(f"cannot write {path}: {error.strerror or error}") from None
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            os.fchmod(handle.fileno(), PRIVATE_FILE_MODE)  # mkstemp's already: said, not assumed
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException as error:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        if isinstance(error, OSError):
            raise HotplayError(f"cannot write {path}: {error.strerror or error}") from None
        raise
