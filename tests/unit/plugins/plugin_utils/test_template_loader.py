# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reading templates: Heat's YAML rules, limits, and which files are collected."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest

from ansible_collections.hotplay.stacks.plugins.plugin_utils.errors import TemplateError
from ansible_collections.hotplay.stacks.plugins.plugin_utils.language.template import loader
from ansible_collections.hotplay.stacks.plugins.plugin_utils.language.template.loader import (
    load_template,
    load_yaml,
)

FIXTURES = Path(__file__).parent / "fixtures" / "templates"


# -- YAML rules ------------------------------------------------------------------------------


def test_version_date_stays_a_string():
    # Heat: template_format.yaml_loader reads timestamps as strings.
    data = load_yaml("heat_template_version: 2013-05-23\nwhen: 2001-12-14t21:59:43.10-05:00\n", "t")
    assert data == {"heat_template_version": "2013-05-23", "when": "2001-12-14t21:59:43.10-05:00"}


def test_json_is_read_first():
    # Heat: simple_parse tries JSON before YAML; YAML 1.1 would read 1e3 as a string.
    assert load_yaml('{"n": 1e3}', "t") == {"n": 1000.0}


def test_yaml_11_booleans_and_empty_document():
    assert load_yaml("a: yes\nb: off\n", "t") == {"a": True, "b": False}
    assert load_yaml("", "t") == {}


def test_unsafe_tags_are_refused():
    with pytest.raises(TemplateError, match="Error parsing template"):
        load_yaml("a: !!python/object/apply:os.system ['true']\n", "t.yaml")


def test_syntax_error_is_one_line_with_line_and_column():
    with pytest.raises(TemplateError) as info:
        load_yaml("resources:\n  a: [1, 2\n  b: 3\n", "bad.yaml")
    error = info.value
    assert error.source == "bad.yaml"
    assert "\n" not in error.message
    assert error.message.startswith("Error parsing template: line 3, column ")


def test_size_limit_uses_heats_wording():
    text = "a: " + "x" * loader.MAX_TEMPLATE_SIZE
    with pytest.raises(TemplateError) as info:
        load_yaml(text, "big.yaml")
    assert info.value.message == (
        f"Template size ({len(text)} bytes) exceeds maximum allowed size (10485760 bytes)."
    )


def test_nesting_limit():
    with pytest.raises(TemplateError, match="nested deeper than the maximum"):
        load_yaml("a: " + "[" * 150 + "]" * 150, "deep.yaml")


def test_alias_expansion_limit():
    lines = ['a0: &a0 ["x","x","x","x","x","x","x","x","x","x"]']
    for i in range(1, 9):
        lines.append(f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 10) + "]")
    with pytest.raises(TemplateError, match="values once YAML aliases are expanded"):
        load_yaml("\n".join(lines) + "\n", "laughs.yaml")


def test_recursive_alias_is_refused():
    with pytest.raises(TemplateError, match="recursive YAML alias"):
        load_yaml("a: &a [*a]\n", "loop.yaml")


def test_template_that_is_not_a_mapping(tmp_path):
    path = tmp_path / "list.yaml"
    path.write_text("- 1\n")
    with pytest.raises(TemplateError) as info:
        load_template(str(path))
    assert info.value.message == "The template is not a JSON object or YAML mapping."


def test_bad_utf8_names_the_file(tmp_path):
    path = tmp_path / "latin.yaml"
    path.write_bytes(b"heat_template_version: 2013-05-23\ndescription: caf\xe9\n")
    with pytest.raises(TemplateError) as info:
        load_template(str(path))
    assert info.value.source == str(path)
    assert "not valid UTF-8" in info.value.message


# -- files ------------------------------------------------------------------------------


def test_collects_get_file_and_provider_templates_recursively():
    source = load_template(str(FIXTURES / "top.yaml"))
    assert source.path == str(FIXTURES / "top.yaml")
    assert source.data["heat_template_version"] == "2018-08-31"
    # Keyed as written in the referencing document; provider's own files too.
    assert set(source.files) == {"scripts/boot.sh", "nested/server.yaml", "motd.txt"}
    assert source.files["scripts/boot.sh"] == "#!/bin/sh\necho booted\n"
    assert source.files["motd.txt"] == "welcome\n"
    assert source.files["nested/server.yaml"].startswith("heat_template_version:")


def test_type_that_is_not_a_file_is_ignored_and_functions_are_not_files(tmp_path):
    (tmp_path / "t.yaml").write_text(
        "heat_template_version: 2018-08-31\n"
        "resources:\n"
        "  r: {type: OS::Heat::None, properties: {x: {get_file: {get_param: p}}}}\n"
    )
    assert load_template(str(tmp_path / "t.yaml")).files == {}


def test_binary_file_is_base64_as_heatclient_sends_it(tmp_path):
    (tmp_path / "blob.bin").write_bytes(b"\xff\xfe\x00")
    (tmp_path / "t.yaml").write_text(
        "heat_template_version: 2018-08-31\noutputs: {o: {value: {get_file: blob.bin}}}\n"
    )
    files = load_template(str(tmp_path / "t.yaml")).files
    assert files["blob.bin"] == base64.encodebytes(b"\xff\xfe\x00").decode()


def test_missing_file_names_file_and_place(tmp_path):
    (tmp_path / "t.yaml").write_text(
        "heat_template_version: 2018-08-31\noutputs: {o: {value: {get_file: gone.sh}}}\n"
    )
    with pytest.raises(TemplateError) as info:
        load_template(str(tmp_path / "t.yaml"))
    error = info.value
    assert error.source == str(tmp_path / "t.yaml")
    assert error.path == "outputs.o.value.get_file"
    assert error.message.startswith("Could not fetch contents for gone.sh")


@pytest.mark.parametrize("reference", ["../secret.txt", "/etc/hostname", "sub/../../secret.txt"])
def test_paths_outside_the_template_tree_are_refused(tmp_path, reference):
    (tmp_path / "secret.txt").write_text("s")
    root = tmp_path / "stack"
    (root / "sub").mkdir(parents=True)
    (root / "t.yaml").write_text(
        f"heat_template_version: 2018-08-31\noutputs: {{o: {{value: {{get_file: '{reference}'}}}}}}\n"
    )
    with pytest.raises(TemplateError) as info:
        load_template(str(root / "t.yaml"))
    assert "outside the template's directory" in info.value.message
    assert info.value.path == "outputs.o.value.get_file"


def test_allowed_roots_widen_the_tree(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "common.sh").write_text("common")
    root = tmp_path / "stack"
    root.mkdir()
    (root / "t.yaml").write_text(
        "heat_template_version: 2018-08-31\n"
        "outputs: {o: {value: {get_file: ../shared/common.sh}}}\n"
    )
    files = load_template(str(root / "t.yaml"), allowed_roots=[str(shared)]).files
    assert files == {"../shared/common.sh": "common"}


def test_symlink_leading_out_is_refused(tmp_path):
    (tmp_path / "secret.txt").write_text("s")
    root = tmp_path / "stack"
    root.mkdir()
    os.symlink(tmp_path / "secret.txt", root / "link.txt")
    (root / "t.yaml").write_text(
        "heat_template_version: 2018-08-31\noutputs: {o: {value: {get_file: link.txt}}}\n"
    )
    with pytest.raises(TemplateError, match="outside the template's directory"):
        load_template(str(root / "t.yaml"))


@pytest.mark.parametrize("url", ["http://example.com/x.yaml", "file:///etc/passwd"])
def test_urls_are_refused(tmp_path, url):
    (tmp_path / "t.yaml").write_text(
        f"heat_template_version: 2018-08-31\nresources: {{r: {{type: '{url}'}}}}\n"
        if url.endswith(".yaml")
        else f"heat_template_version: 2018-08-31\noutputs: {{o: {{value: {{get_file: '{url}'}}}}}}\n"
    )
    with pytest.raises(TemplateError) as info:
        load_template(str(tmp_path / "t.yaml"))
    assert info.value.message == f"Could not fetch contents for {url}: URLs are not read"


def test_provider_template_that_does_not_parse_names_that_file(tmp_path):
    (tmp_path / "child.yaml").write_text("resources: [\n")
    (tmp_path / "t.yaml").write_text(
        "heat_template_version: 2018-08-31\nresources: {r: {type: child.yaml}}\n"
    )
    with pytest.raises(TemplateError) as info:
        load_template(str(tmp_path / "t.yaml"))
    assert info.value.source.endswith("child.yaml")


def test_self_referencing_provider_terminates(tmp_path):
    (tmp_path / "t.yaml").write_text(
        "heat_template_version: 2018-08-31\nresources: {r: {type: t.yaml}}\n"
    )
    assert set(load_template(str(tmp_path / "t.yaml")).files) == {"t.yaml"}
