"""`musify-text` behaves as Moore Threads documents: -c writes <file>.mt, -i rewrites in place,
-t prints; -m tables on top of the defaults (later ones win); --clear-mapping; -d m2c; exclusion
markers; and, unlike the original, comments and strings stay as written (unless --text-mode)."""

from __future__ import annotations

import json
import logging

import pytest

from musify.text_compat.cli import LOG, main
from musify.text_compat.textmode import replace_text, trie_regex
from tests.conftest import install_rules

RULES_YAML = """schema: musify-rules/1
library: cudart
kind: function
status: renamed
rules:
  - {cuda: cudaMalloc, musa: musaMalloc}
  - {cuda: cudaFree, musa: musaFree}
  - {cuda: cudaMemcpy, musa: musaMemcpy}
  - {cuda: cuda_runtime.h, musa: musa_runtime.h, kind: header}
"""

SOURCE = """#include <cuda_runtime.h>
// cudaMalloc in a comment stays
const char* msg = "cudaFree failed";
void f(float* p) {
  cudaMalloc(&p, 4); myAlloc(p);
  cudaFree(p); // MUSIFY_EXCL_LINE
  // MUSIFY_EXCL_START
  cudaMemcpy(p, p, 4, 0);
  // MUSIFY_EXCL_STOP
  cudaMemcpy(p, p, 4, 0);
}
"""

PORTED = """#include <musa_runtime.h>
// cudaMalloc in a comment stays
const char* msg = "cudaFree failed";
void f(float* p) {
  musaMalloc(&p, 4); myAlloc(p);
  cudaFree(p); // MUSIFY_EXCL_LINE
  // MUSIFY_EXCL_START
  cudaMemcpy(p, p, 4, 0);
  // MUSIFY_EXCL_STOP
  musaMemcpy(p, p, 4, 0);
}
"""


@pytest.fixture(autouse=True)
def tiny_rules(tmp_path, monkeypatch):
    install_rules(tmp_path, monkeypatch, RULES_YAML)
    yield
    LOG.handlers.clear()


@pytest.fixture
def src(tmp_path):
    path = tmp_path / "k.cu"
    path.write_text(SOURCE)
    return path


def test_create_is_the_default_and_writes_mt_beside_the_source(src):
    assert main(["--", str(src)]) == 0
    assert src.read_text() == SOURCE  # the source itself is untouched
    assert (src.parent / "k.cu.mt").read_text() == PORTED
    assert not (src.parent / "k.mu").exists()  # musify-text never renames


def test_inplace_rewrites_the_source(src):
    assert main(["-i", "--", str(src)]) == 0
    assert src.read_text() == PORTED
    assert not (src.parent / "k.cu.mt").exists()


def test_terminal_prints(src, capsysbinary):
    assert main(["-t", "--", str(src)]) == 0
    assert capsysbinary.readouterr().out == PORTED.encode()
    assert not (src.parent / "k.cu.mt").exists()


def test_user_table_adds_and_overrides_later_ones_win(src, tmp_path):
    first = tmp_path / "first.json"
    first.write_text(json.dumps({"myAlloc": "first_alloc", "cudaMalloc": "firstMalloc"}))
    second = tmp_path / "second.json"
    second.write_text(json.dumps({"myAlloc": "mtAlloc"}))
    assert main(["-c", "-m", str(first), str(second), "--", str(src)]) == 0
    out = (src.parent / "k.cu.mt").read_text()
    assert "firstMalloc(&p, 4); mtAlloc(p);" in out
    assert "// cudaMalloc in a comment stays" in out
    assert "musaMemcpy(p, p, 4, 0);\n}" in out  # the defaults still apply


def test_clear_mapping_keeps_only_the_user_tables(src, tmp_path):
    table = tmp_path / "my.json"
    table.write_text(json.dumps({"cudaFree": "musaFree", "cudaMemcpy": "musaMemcpy"}))
    assert main(["-i", "--clear-mapping", "-m", str(table), "--", str(src)]) == 0
    out = src.read_text()
    assert "cudaMalloc(&p, 4)" in out and "#include <cuda_runtime.h>" in out
    assert out.endswith("  musaMemcpy(p, p, 4, 0);\n}\n")


def test_m2c_runs_the_tables_backwards(tmp_path):
    path = tmp_path / "k.cu"  # musify-text ports keep their .cu names
    path.write_text(PORTED)
    assert main(["-i", "-d", "m2c", "--", str(path)]) == 0
    assert path.read_text() == SOURCE


def test_text_mode_replaces_everywhere_with_word_boundaries(src):
    assert main(["-i", "--text-mode", "--", str(src)]) == 0
    out = src.read_text()
    assert "// musaMalloc in a comment stays" in out and '"musaFree failed"' in out
    assert "  cudaFree(p); // MUSIFY_EXCL_LINE" in out  # exclusions hold in text mode too
    assert "  cudaMemcpy(p, p, 4, 0);\n  // MUSIFY_EXCL_STOP" in out


def test_logs_in_musify_text_shapes(src, capsys):
    src.write_text(SOURCE + "// MUSIFY_EXCL_STOP\n// MUSIFY_EXCL_START\n")
    assert main(["-c", "-l", "INFO", "--", str(src)]) == 0
    err = capsys.readouterr().err
    assert f"] Processing {src}" in err
    assert "[INFO] [" in err and "musify single line exclusion at line 6" in err
    assert "musify exclusion block opened at line 7" in err
    assert "musify exclusion block closed at line 9" in err
    assert "[WARNING] [" in err and "close musify exclusion block when it is already closed at line 12" in err
    assert "musify exclusion block not closed when file ends." in err


def test_warning_level_hides_info(src, capsys):
    assert main(["-l", "WARNING", "--", str(src)]) == 0
    assert "Processing" not in capsys.readouterr().err


def test_bad_table_names_the_file(src, tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    assert main(["-m", str(bad), "--", str(src)]) == 2
    assert f"{bad}:1:" in capsys.readouterr().err


def test_missing_source_fails_but_others_are_done(src, tmp_path):
    assert main(["--", str(tmp_path / "nope.cu"), str(src)]) == 1
    assert (src.parent / "k.cu.mt").exists()


def test_output_flags_are_exclusive(src):
    with pytest.raises(SystemExit) as exc:
        main(["-t", "-i", "--", str(src)])
    assert exc.value.code == 2


@pytest.mark.parametrize("text, expected", [
    ("cudaMalloc(p)", "musaMalloc(p)"),
    ("my_cudaMalloc cudaMallocX xcudaMalloc", "my_cudaMalloc cudaMallocX xcudaMalloc"),
    ("cudaMallocAsync(p)", "musaMallocAsync(p)"),  # leftmost-longest
    ("#include <cuda_runtime.h>", "#include <musa_runtime.h>"),
    ("a.cudaMalloc-cudaMalloc", "a.musaMalloc-musaMalloc"),
    ("é cudaMalloc", "é musaMalloc"),
])
def test_text_mode_algorithm(text, expected):
    table = {"cudaMalloc": "musaMalloc", "cudaMallocAsync": "musaMallocAsync", "cuda_runtime.h": "musa_runtime.h",
             "cuda": "musa"}
    assert replace_text(text, table)[0] == expected


def test_trie_regex_prefers_the_longest_key():
    pattern = trie_regex(["ab", "abc", "abcd", "b"])
    assert [m.group() for m in pattern.finditer("abcd abc ab b")] == ["abcd", "abc", "ab", "b"]
    assert trie_regex([]) is None


def test_log_level_debug_shows_options(src, capsys):
    assert main(["-l", "DEBUG", "--", str(src)]) == 0
    assert "[DEBUG]" in capsys.readouterr().err
    assert LOG.level == logging.DEBUG
