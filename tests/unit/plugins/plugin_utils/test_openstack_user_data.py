# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a server boots with for each user_data_format (resources/openstack/user_data.py):
read back the way cloud-init reads it, as a MIME message."""

from __future__ import annotations

import email
from email.mime.multipart import MIMEMultipart
from email.mime.text import MIMEText

from ansible_collections.hotplay.stacks.plugins.plugin_utils.resources.openstack.user_data import server_user_data

SCRIPT = "#!/bin/sh\necho hello > /tmp/hello\n"


def parts(user_data: str) -> list[tuple[str, str | None, str]]:
    message = email.message_from_string(user_data)
    assert message.is_multipart()
    return [(part.get_content_type(), part.get_filename(), part.get_payload(decode=True).decode())
            for part in message.get_payload()]


def test_raw_is_sent_as_given() -> None:
    assert server_user_data({"user_data": SCRIPT, "user_data_format": "RAW"}) == SCRIPT


def test_no_user_data_sends_none_whatever_the_format() -> None:
    for data_format in ("RAW", "HEAT_CFNTOOLS", "SOFTWARE_CONFIG", None):
        assert server_user_data({"user_data": "", "user_data_format": data_format}) == ""


def test_heat_cfntools_runs_the_user_data_as_a_first_boot_script() -> None:
    built = server_user_data({"user_data": SCRIPT, "user_data_format": "HEAT_CFNTOOLS"})
    assert parts(built) == [("text/x-shellscript", "cfn-userdata", SCRIPT)]
    assert built == server_user_data({"user_data": SCRIPT})  # Heat's default format


def test_software_config_keeps_a_multipart_s_own_parts() -> None:
    given = MIMEMultipart()
    for content, name, subtype in (("#cloud-config\npackages: [git]\n", "config", "cloud-config"),
                                   (SCRIPT, "run.sh", "x-shellscript")):
        part = MIMEText(content, _subtype=subtype)
        part.add_header("Content-Disposition", "attachment", filename=name)
        given.attach(part)
    built = server_user_data({"user_data": given.as_string(), "user_data_format": "SOFTWARE_CONFIG"})
    assert parts(built) == [("text/cloud-config", "config", "#cloud-config\npackages: [git]\n"),
                            ("text/x-shellscript", "run.sh", SCRIPT)]


def test_software_config_sends_other_user_data_as_one_plain_part() -> None:
    built = server_user_data({"user_data": "#cloud-config\nruncmd: [ls]\n", "user_data_format": "SOFTWARE_CONFIG"})
    assert parts(built) == [("text/plain", None, "#cloud-config\nruncmd: [ls]\n")]


def test_text_beyond_ascii_is_kept_and_the_same_user_data_gives_the_same_bytes() -> None:
    text = "#!/bin/sh\necho 'héllo wörld'\n"
    built = server_user_data({"user_data": text})
    assert parts(built) == [("text/x-shellscript", "cfn-userdata", text)]
    assert built == server_user_data({"user_data": text})
