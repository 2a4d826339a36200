# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A ``digest`` with an algorithm hashlib does not know: the task says which one."""

from __future__ import annotations

from conftest import store_rows, write_template

TEMPLATE = """\
    heat_template_version: 2021-04-16
    resources:
      fingerprint:
        type: OS::Heat::Value
        properties:
          value: {digest: [sha999, some text]}
    """


def test_unknown_algorithm_named_with_the_allowed_ones(run_tasks, tmp_path, store_url):
    template = str(write_template(tmp_path, "digest.yaml", TEMPLATE))
    run = run_tasks([{"hotplay.stacks.stack": {"name": "fp", "template": template},
                      "register": "applied"}])
    applied = run.results["applied"]
    assert applied["failed"] is True
    message = applied["msg"]
    assert 'Unknown algorithm "sha999"' in message
    assert "Algorithm must be one of" in message and "sha256" in message
    assert "resources.fingerprint.properties.value.digest" in message
    assert "stack_status" not in applied
    assert store_rows(store_url, "SELECT count(*) FROM stacks") == [(0,)]
