"""`--rules FILE` on migrate and check: user tables add names, override built-in records and mark
names unsupported; later files win; a bad table is a usage error naming file:line."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from musify.cli import main
from tests.conftest import install_rules

BUILTIN = """schema: musify-rules/1
library: cudart
kind: function
status: renamed
rules:
  - {cuda: cudaMalloc, musa: musaMalloc}
  - {cuda: cudaFree, musa: musaFree}
  - {cuda: cudaMemcpy, musa: musaMemcpy}
"""
SOURCE = "void f() { cudaMalloc(0, 1); cudaFree(0); cudaMemcpy(0, 0, 1, 0); myLegacyAlloc(0); }\n"


@pytest.fixture(autouse=True)
def builtin_rules(tmp_path, monkeypatch):
    install_rules(tmp_path, monkeypatch, BUILTIN)


@pytest.fixture
def src(tmp_path):
    path = tmp_path / "k.cu"
    path.write_text(SOURCE)
    return path


def _stdout(*args):
    result = CliRunner().invoke(main, ["migrate", "--stdout", "-q", *args])
    return result


def test_yaml_user_table_adds_overrides_and_marks_unsupported(src, tmp_path):
    mine = tmp_path / "mine.yaml"
    mine.write_text("""schema: musify-rules/1
library: project
kind: function
status: renamed
rules:
  - {cuda: myLegacyAlloc, musa: myMusaAlloc}
  - {cuda: cudaFree, musa: musaFreeAsyncSafe, library: cudart}
  - {cuda: cudaMemcpy, status: unsupported, library: cudart, note: "use our own copy engine"}
""")
    result = _stdout(str(src), "--rules", str(mine))
    assert result.exit_code == 0, result.output
    assert "musaMalloc(0, 1); musaFreeAsyncSafe(0); cudaMemcpy(0, 0, 1, 0); myMusaAlloc(0);" in result.output
    assert "MU1002: 'cudaMemcpy' (cudart) has no MUSA counterpart; left unchanged: use our own copy engine" \
        in result.output


def test_flat_json_table_and_later_files_win(src, tmp_path):
    first = tmp_path / "first.json"
    first.write_text('{"myLegacyAlloc": "firstAlloc", "cudaMalloc": "mtMalloc"}')
    second = tmp_path / "second.json"
    second.write_text('{"myLegacyAlloc": "secondAlloc"}')
    result = _stdout(str(src), "--rules", str(first), "--rules", str(second))
    assert result.exit_code == 0, result.output
    assert "mtMalloc(0, 1); musaFree(0); musaMemcpy(0, 0, 1, 0); secondAlloc(0);" in result.output


def test_check_uses_user_tables_too(src, tmp_path):
    mine = tmp_path / "mine.json"
    mine.write_text('{"myLegacyAlloc": "myMusaAlloc"}')
    src.write_text("void f() { myLegacyAlloc(0); }\n")
    assert CliRunner().invoke(main, ["check", str(src), "-q", "--no-rename"]).exit_code == 0
    assert CliRunner().invoke(main, ["check", str(src), "-q", "--no-rename", "--rules", str(mine)]).exit_code == 1


@pytest.mark.parametrize("body, line, message", [
    (("schema: musify-rules/1\nlibrary: p\nkind: function\nstatus: renamed\nrules:\n"
     "  - {cuda: a, musa: b}\n  - {cuda: c, musa: d, colour: red}\n"), 7, "unknown key 'colour'"),
    (("schema: musify-rules/1\nlibrary: p\nkind: function\nrules:\n  - {cuda: a, musa: b, status: renamed}\n"
     "  - {cuda: c, status: unsupported, musa: d}\n"), 6, "an unsupported record has no 'musa' name"),
    ("schema: musify-rules/1\nrules:\n  - {cuda: a, musa: b\n", 4, "not valid YAML"),
])
def test_yaml_errors_name_file_and_line(src, tmp_path, body, line, message):
    bad = tmp_path / "bad.yaml"
    bad.write_text(body)
    result = CliRunner().invoke(main, ["migrate", "--stdout", str(src), "--rules", str(bad)])
    assert result.exit_code == 2
    assert f"{bad}:{line}: " in result.output and message in result.output


def test_bad_json_table_is_a_usage_error_naming_the_file(src, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"cudaMalloc": 3}')
    result = CliRunner().invoke(main, ["migrate", "--stdout", str(src), "--rules", str(bad)])
    assert result.exit_code == 2
    assert f"{bad}:1: a flat mapping table is a JSON object of string to string" in result.output
