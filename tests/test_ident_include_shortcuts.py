"""The identifier and include passes' shortcuts give what the paths they replace give: the
include pass's per-path memo (`includes.run`) against every include asked in full
(`includes.include_edits`), and the compiled `named_positions` against the line table's bisection."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from musify.frontend.lines import LineIndex
from musify.options import Options
from musify.passes import includes
from musify.passes._base import PassContext, ProjectInfo
from musify.passes.languages import scan_c
from musify.rules import load_ruleset

RULES = load_ruleset()

# include paths of every kind the pass answers: no rule, a rename, a directory rule, a rule that
# keeps the name, an unsupported header, project headers (plain, relative, absolute, odd)
_RULED = [k for k, r in RULES.headers.items() if r.replacement][:6]
_UNSUPPORTED = [k for k, r in RULES.headers.items() if r.status == "unsupported"][:3]
_KEPT = [k for k, r in RULES.headers.items() if r.replacement is None and r.status != "unsupported"][:3]
_DIRS = [k + "x/y.h" for k in RULES.headers if k.endswith("/")][:3]
_PATHS = ["cstdio", "vector", "util.cuh", "sub/util.cuh", "../util.cuh", "./util.cuh", "/abs/util.cuh",
          "kern.cuh", "lib/kern.cuh", "cuda_runtime.h", "a//b.h", "sub/", "", *_RULED, *_UNSUPPORTED, *_KEPT,
          *_DIRS]
_FILES = ["util.cuh", "sub/util.cuh", "lib/kern.cuh", "src/lib/kern.cuh", "src/cuda_runtime.h", "a.cu",
          "src/a.cu", *_RULED[:2]]


def _project(r: random.Random) -> ProjectInfo:
    if r.random() < 0.2:
        return ProjectInfo()
    files = r.sample(_FILES, r.randint(1, len(_FILES)))
    renames = {f: f.rsplit(".", 1)[0] + ".muh" for f in files if f.endswith(".cuh") and r.random() < 0.7}
    if r.random() < 0.15:  # made by hand, without the suffix index: every path asked in full
        return ProjectInfo(header_renames=renames, files=frozenset(files))
    return includes.build_project_info(files, renames)


def _text(r: random.Random) -> str:
    lines = []
    for _ in range(r.randint(0, 8)):
        path = r.choice(_PATHS)
        lines.append(f'#include <{path}>' if r.random() < 0.5 else f'#include "{path}"')
        if r.random() < 0.2:
            lines.append("int x; // #include <cuda.h>")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("seed", range(40))
def test_the_include_pass_is_every_include_asked_in_full(seed):
    r = random.Random(seed)
    project = _project(r)
    for _ in range(15):  # the memo shared by the files of one project, as in a run
        text = _text(r)
        path = r.choice(["a.cu", "src/a.cu", "src/lib/b.cu", "other/c.cpp"])
        sc = scan_c(text, RULES)
        ours, theirs = (PassContext(path, text, sc, RULES, Options(), project, LineIndex(text)) for _ in range(2))
        assert includes.run(ours) == includes.include_edits(theirs), (text, path, project)
        assert ours.found == theirs.found


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet="ab\n\r \u00e9\u4e00\U0001F600", max_size=80),
       offsets=st.lists(st.integers(0, 90), max_size=8), ordered=st.booleans())
def test_named_positions_are_the_line_tables(text, offsets, ordered):
    named = [(o, f"n{i}") for i, o in enumerate(sorted(offsets) if ordered else offsets)]
    assert LineIndex(text).named_positions(named) == LineIndex(text).named_positions_python(named)


def test_named_positions_leave_odd_input_to_python():
    lines = LineIndex("a\nb\n")
    for named in ([(True, "x")], [(-1, "x")], [(1 << 70, "x")], [[1, "x"]]):
        assert lines.named_positions(named) == lines.named_positions_python(named)
