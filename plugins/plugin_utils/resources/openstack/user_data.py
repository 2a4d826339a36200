# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The user data a server boots with, from its ``user_data`` and
``user_data_format``, for cloud-init, as Heat 27 builds it (the Nova client
plugin's ``build_userdata``):

- ``RAW``: the ``user_data`` as given.
- ``HEAT_CFNTOOLS`` (Heat's default): a MIME multipart in which the ``user_data``
  runs once, at first boot.  Heat hands it to a helper of its own that runs it and
  logs to ``/var/log/heat-provision.log``; here cloud-init runs it as a shell-script
  part (its output goes to cloud-init's log).  Heat's parts for its cfn tools (the
  metadata server's address, credentials of the stack's user) are not given: with
  no metadata server, ``cfn-init``, ``cfn-hup`` and ``cfn-signal`` have nothing to
  reach.
- ``SOFTWARE_CONFIG``: a MIME multipart of the ``user_data``'s own parts when it is
  one, else of the ``user_data`` as one part (cloud-init tells a script from a
  cloud-config by its first line), as Heat does.  Heat's metadata for
  os-collect-config is not given: hotplay's software deployments reach the server
  over SSH.

An empty ``user_data`` gives none (Heat would still send its tools' parts).
"""

from __future__ import annotations

import base64
import email
import hashlib
from collections.abc import Mapping
from email.message import Message
from email.mime.multipart import MIMEMultipart
from email.mime.text import MIMEText
from typing import Any


def server_user_data(properties: Mapping[str, Any]) -> str:
    """The user data to send for the server's ``user_data`` and ``user_data_format``
    (empty: send none)."""
    text = str(properties.get("user_data") or "")
    data_format = properties.get("user_data_format") or "HEAT_CFNTOOLS"
    if not text or data_format == "RAW":
        return text
    if data_format == "SOFTWARE_CONFIG":
        parts = _own_parts(text)
    else:
        parts = [_part(text, "cfn-userdata", "x-shellscript")]
    return _multipart(parts, text)


def encoded_user_data(properties: Mapping[str, Any]) -> str:
    """``server_user_data`` as Nova takes it (base64; empty: send none)."""
    return base64.b64encode(server_user_data(properties).encode()).decode()


def _own_parts(text: str) -> list[MIMEText]:
    """The parts of a multipart ``user_data`` (each kept with its name and subtype),
    or the whole text as one plain part."""
    message = email.message_from_string(text)
    if not message.is_multipart():
        return [_part(text, "", "plain")]
    return [_part(str(part.get_payload()), part.get_filename() or "", part.get_content_subtype())
            for part in message.get_payload() if isinstance(part, Message)]


def _part(content: str, filename: str, subtype: str) -> MIMEText:
    try:
        content.encode("us-ascii")
        charset = "us-ascii"
    except UnicodeEncodeError:
        charset = "utf-8"
    part = MIMEText(content, _subtype=subtype, _charset=charset)
    if filename:
        part.add_header("Content-Disposition", "attachment", filename=filename)
    return part


def _multipart(parts: list[MIMEText], text: str) -> str:
    # A boundary of the content's own: the same user_data always gives the same bytes.
    boundary = "===============" + hashlib.sha256(text.encode()).hexdigest()[:20] + "=="
    message = MIMEMultipart(boundary=boundary)
    for part in parts:
        message.attach(part)
    return message.as_string()
