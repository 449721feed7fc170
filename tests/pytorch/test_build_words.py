"""`may_rewrite_word` answers False only for words `rewrite_word` leaves alone.

The Python pass asks it of every one-word string literal before looking at the literal's text
(musify/passes/python_setup.py `_plain_string`), so a False for a word that `rewrite_word` would
have changed or reported on would lose an edit or a diagnostic without a trace. Generated words
are built from the toolchain's own vocabulary (flags, variables, install roots, the compiler,
libraries, source names) cut and joined at random, so every step of `rewrite_word` is reached;
the string literals of the bundled PyTorch corpora are checked as they are.
"""

from __future__ import annotations

import ast
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from musify.frontend.scanner import LineIndex, Scan
from musify.options import Options
from musify.passes._base import PassContext, ProjectInfo
from musify.passes.build_files import may_rewrite_word, rewrite_word, toolchain

CORPORA = Path(__file__).resolve().parents[2] / "corpora"


def _ctx() -> PassContext:
    project = ProjectInfo(header_renames={"csrc/kernel.cu": "csrc/kernel.mu", "k.cuh": "k.muh"},
                          files=frozenset({"csrc/kernel.cu", "k.cuh", "setup.py"}))
    return PassContext("setup.py", "", Scan(), None, Options(), project, LineIndex(""))


def _fragments() -> list[str]:
    tc = toolchain()
    words = ["nvcc", "/usr/bin/nvcc", "-lcudart", "-lcublas", "-x", "cu", "-O3", "-I", "-L", "lib64", "/lib64",
             "kernel.cu", "k.cuh", "$(SRC:.cu=.o)", "$CUDA_HOME", "${CUDA_HOME}", "=", ":=", "+=", "'", '"',
             "-arch=sm_80", "-gencode", "arch=compute_80,code=sm_80", "8.0;8.6", "float16", "cpu", "cuda:0",
             "musa", "/usr/local/musa", "MUSA_HOME", "-DNDEBUG", "--use_fast_math", "sm_90a", ".", "/", "_"]
    words += list(tc.flags) + list(tc.variables) + [r["cuda"] for r in tc.paths] + list(tc.libraries)
    words += list(tc.arch_flags) + list(tc.extensions)
    return words


_WORD = st.lists(st.sampled_from(_fragments()) | st.text("abcuda-_=./:;$'\"0189lLxX", max_size=6),
                 min_size=1, max_size=4).map("".join).filter(lambda w: " " not in w and "\t" not in w)


@settings(max_examples=3000, deadline=None)
@given(_WORD)
def test_a_word_it_passes_over_is_one_rewrite_word_leaves_alone(word):
    if not may_rewrite_word(word):
        assert rewrite_word(_ctx(), word, None) is None


def test_the_corpora_string_literals():
    """Every one-word string literal of the bundled Python sources, and what it says of them."""
    ctx = _ctx()
    seen = passed = 0
    for path in sorted(CORPORA.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value \
                    and " " not in node.value and "\t" not in node.value:
                seen += 1
                if not may_rewrite_word(node.value):
                    assert rewrite_word(ctx, node.value, None) is None, node.value
                else:
                    passed += 1
    assert seen > 50 and 0 < passed < seen  # (the corpora hold build words and other words)


def test_each_step_is_reached_by_a_word_it_lets_through():
    """The words `rewrite_word` changes, one for each of its steps, all pass."""
    for word in ("nvcc", "/usr/local/cuda/bin/nvcc", "-lcublas", "--use_fast_math", "-lineinfo", "CUDA_HOME",
                 "CUDA_HOME=/opt/cuda", "/usr/local/cuda", "$MUSA_HOME/lib64", "csrc/kernel.cu", "k.cuh"):
        assert may_rewrite_word(word), word
        assert rewrite_word(_ctx(), word, None) is not None, word
