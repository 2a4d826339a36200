# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Offline stand-in for the pip bootstrap script ansible-test downloads.

ansible-test fetches ``get-pip.py`` from a site these machines cannot reach and
runs it in a fresh virtual environment made without pip, with pip-install
arguments (``--disable-pip-version-check pip==X --no-setuptools --no-wheel``).
scripts/sanity.sh puts this file where ansible-test caches that download.  It
installs the pip bundled with CPython (``ensurepip``, no network), and that pip
then installs what was asked for from the package index.
"""

import ensurepip
import os
import subprocess
import sys

WITHOUT = {"--no-setuptools": "setuptools", "--no-wheel": "wheel"}


def main(arguments: list[str]) -> int:
    environment = dict(os.environ)  # ensurepip changes os.environ (PIP_CONFIG_FILE)
    wanted = [arg for arg in arguments if arg not in WITHOUT]
    wanted += [package for flag, package in WITHOUT.items() if flag not in arguments]
    ensurepip.bootstrap(upgrade=True)
    return subprocess.call([sys.executable, "-m", "pip", "install", "--upgrade", *wanted], env=environment)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
