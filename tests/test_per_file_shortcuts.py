"""The per-file path's shortcuts for files with little in them give what the full steps give:
the record of a file without edits, the identifier pass on a file without candidate names, the
line count of a file whose line starts were never needed, and the hand-written `Findings`."""

from __future__ import annotations

import dataclasses
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from musify import runner
from musify.engine.edits import EditList
from musify.frontend.scanner import LineIndex, line_starts_python
from musify.options import Options
from musify.passes import identifiers
from musify.passes._base import Findings, PassContext, ProjectInfo
from musify.passes.languages import scan_c
from musify.records import FileResult
from musify.rules import load_ruleset
from musify.spool import Spool

RULES = load_ruleset()
# texts with comments, literals, directives and words, none of them a rule's name
PLAIN = st.text(alphabet="int x;y=0/*\"'\n\r#define abc()\\ \t", max_size=120)


def _fill_reference(result: FileResult, ctx: PassContext, text: str, size: int) -> None:
    """What `_fill` did for every file before its no-edit shortcut: the figures of the empty
    list from `_figures`, every field written."""
    edits = EditList()
    packed, touched, replaced, by_lib, by_kind, renamed, includes, shims, inferred, converted, _ = \
        runner._figures(edits, text, LineIndex(text), size == len(text), not ctx.options.json_lite, RULES)
    found = ctx.found
    result.edit_count = 0
    result.edits = packed
    result.references = {"converted": converted, "unconverted": sum(found.unconverted.values())}
    result.include_rewrites, result.shim_includes, result.inferred_edits = includes, shims, inferred
    result.edits_by_library, result.edits_by_kind, result.renamed = by_lib, by_kind, renamed
    result.unconverted = dict(sorted(found.unconverted.items()))
    result.lines_total = len(LineIndex(text)._starts) if text else 0
    result.lines_changed, result.bytes_changed = touched, replaced
    result.facts = dict(sorted(found.facts.items()))
    result.diagnostics.extend(found.diagnostics)
    result.declared = sorted(found.declared)
    result.pending_unknown = list(found.pending_unknown)


@pytest.mark.parametrize("lite", [False, True])
@pytest.mark.parametrize("text", ["", "int x;\n", "a\r\nb", "é\n", "\n\n", "this_cluster(x);\n",
                                  "int y; // cudaMalloc\n#pragma unroll\n"])
def test_a_file_without_edits_is_recorded_as_the_full_figures_record_it(text, lite):
    options = Options(json_lite=lite)
    ctx, edits = runner.edit_text(text, "a.cu", RULES, options, ProjectInfo())
    assert not edits
    ctx.found.unconverted["cudaX"] += 2  # a finding without an edit still counts
    ctx.found.facts["kernels"] = 1
    size = len(text.encode("utf-8"))
    ours, theirs = (FileResult("a.cu", "a.mu", "cuda-source", "unchanged", rel="a.cu") for _ in range(2))
    runner._fill(ours, ctx, edits, text, size, RULES)
    _fill_reference(theirs, ctx, text, size)
    assert ours.to_json() == theirs.to_json() and ours.declared == theirs.declared
    assert ours.pending_unknown == theirs.pending_unknown
    assert ours.entry_json() == theirs.entry_json()
    if not lite:  # the shared empty list stays where it is; its record is the same
        spool = Spool("/tmp")
        spool.keep(ours)
        assert ours.edits is runner.NO_EDITS and ours.entry_json() == theirs.entry_json()
        spool.close()


@settings(max_examples=200, deadline=None)
@given(text=PLAIN, rewrite=st.booleans())
def test_the_identifier_pass_on_a_file_without_names_is_the_full_pass(text, rewrite):
    sc = scan_c(text, RULES)
    options = Options(rewrite_comments=rewrite)
    ours, theirs = (PassContext("a.cu", text, sc, RULES, options, ProjectInfo(), LineIndex(text)) for _ in range(2))
    got, want = identifiers.run(ours), identifiers.run_all(theirs)
    assert list(got) == list(want)
    assert ours.found == theirs.found


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet="ab\n\r\u2028\x85", max_size=60), asked=st.booleans())
def test_a_line_count_without_the_line_starts_is_the_count_of_them(text, asked):
    lines = LineIndex(text)
    if asked:
        lines.position(len(text))
    assert lines.line_count == len(line_starts_python(text)) == len(LineIndex(text)._starts)


def test_findings_are_what_the_generated_dataclass_made():
    reference = dataclasses.make_dataclass("Reference", [(f.name, f.type, f) for f in dataclasses.fields(Findings)])
    names = [f.name for f in dataclasses.fields(Findings)]
    ours, theirs = Findings(), reference()
    assert [getattr(ours, n) for n in names] == [getattr(theirs, n) for n in names]
    assert type(ours.unconverted) is Counter and ours.unconverted is not Findings().unconverted
    ours.unconverted["a"] += 1
    assert ours.unconverted == Counter(a=1) and dict(ours.unconverted) == {"a": 1}
    values = ([1], {"d"}, [("n", 1, 2)], Counter(x=3), {"k": 1}, [(0, 1)], {"s": 2}, "pass")
    assert Findings(*values) == Findings(**dict(zip(names, values)))
    assert [getattr(Findings(*values), n) for n in names] == [getattr(reference(*values), n) for n in names]


@settings(max_examples=200, deadline=None)
@given(text=st.text(alphabet="ab\n", max_size=80), data=st.data())
def test_named_positions_are_positions_one_by_one(text, data):
    lines = LineIndex(text)
    offsets = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=20)))
    named = [(o, f"n{k}") for k, o in enumerate(offsets)]
    assert lines.named_positions(named) == [(name, *lines.position(o)) for o, name in named]
