"""The qualified names' uses decided in the rename loop give what the pass gave without it.

`qualified.qualified_renames` lists the qualified names (`cuda` of `thrust::cuda`, `CUDA` of
`DispatchKey::CUDA`) each of whose uses is an edit, nothing, or an unrecognised name;
`_cscan.renames` (and `renames_python`, its reference) decide those uses by the qualifiers read
back before each, as `qualified.qualifier_before` reads them. Compared here: the compiled loop
with the pure one on generated text; `qualified_use` with `qualified_rule` and what `_use_rule`
makes of the rule it finds; the pass with the table (compiled and pure) with the pass without it
(each use through `_decide`, as before the table).
"""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from musify.engine.edits import Edit
from musify.frontend import scanner
from musify.frontend.scanner import LineIndex
from musify.options import Options
from musify.passes import identifiers, qualified
from musify.passes._base import PassContext, ProjectInfo
from musify.passes.languages import language_for
from musify.rules import load_ruleset

try:
    from musify.frontend import _cscan

    # bound here too: under MUSIFY_PURE_PYTHON=1 the scanner module leaves the compiled one alone
    _cscan.bind(scanner.Ident, scanner.Include, scanner.Directive, scanner.Problem, tuple(scanner.Ctx))
except ImportError:  # no compiler at install time: the compiled comparisons are skipped
    _cscan = None

RULES = load_ruleset()
VENDOR = identifiers.vendor_name(RULES.vendor_pattern)
TABLE = qualified.qualified_renames(RULES, VENDOR)
# a made-up name with three levels of qualifiers, not vendor-looking (a use no entry matches: nothing)
DEEP = {"cudaZ": (False, ((("a", "b", "c"), Edit(0, 0, "Z3", "a::b::c::cudaZ")[2:]),
                          (("b", "c"), Edit(0, 0, "Z2", "b::c::cudaZ")[2:]),
                          (("x",), Edit(0, 0, "Z1", "x::cudaZ")[2:])))}
PIECES = ["thrust", "system", "cuda", "::", " :: ", " ", "\t", "\n", "\u3000", "\u00a0", "é", "at", "c10", "_", "1",
          "DispatchKey", "DeviceType", "CUDA", "AutogradCUDA", "cuda_cub", "cudaZ", "a", "b", "c", "x", "x.", "->",
          "#define ", "namespace a::", "{ ", ", ", "(", ");", " = 1;", "CUDA_CHECK", "int ", " " * 190, "// ", "\""]
TEXTS = st.lists(st.sampled_from(PIECES), max_size=30).map("".join)


def _idents(text: str):
    return language_for("cuda").front_end(text, RULES).idents


@pytest.mark.skipif(_cscan is None, reason="the compiled scanner is not built")
@settings(max_examples=400, deadline=None)
@given(TEXTS)
@example("thrust::system::cuda::par; thrust :: cuda; at::cuda c10::cuda x.cuda cuda::std DispatchKey::CUDA")
@example("a::b::c::cudaZ b :: c::cudaZ c::cudaZ x::cudaZ cudaZ #define cuda\n namespace a::cuda {")
@example(" " * 199 + "thrust::cuda" + "\u3000" * 199 + "::cuda é::cuda 1thrust::cuda")
def test_compiled_qualified_loop_matches_python(text: str) -> None:
    idents = _idents(text)
    for table in (TABLE, {**TABLE, **DEEP}):
        compiled, python = set(), set()
        got = identifiers.renames(idents, {}, set(), _cscan, text, {"CUDA_CHECK"}, compiled, {}, table)
        assert got == identifiers.renames_python(idents, {}, set(), text, {"CUDA_CHECK"}, python, {}, table)
        assert compiled == python


@settings(max_examples=400, deadline=None)
@given(TEXTS, st.sampled_from(sorted(TABLE)))
def test_qualified_use_is_what_the_pass_made_of_the_rule(before: str, name: str) -> None:
    """Fields as `_use_rule` makes them of `qualified_rule`'s rule; with none, an unrecognised
    name (True) where the name looks like a vendor's, else nothing (None)."""
    text = before + name + "(x);"
    at = len(before)
    rule = qualified.qualified_rule(text, at, RULES.qualified[name]) or RULES.names.get(name)
    edits = identifiers.EditList()
    if rule is not None:
        identifiers._use_rule(None, rule, at, at + len(name), edits, set())
        want = next(iter(edits))[2:]
    else:
        want = True if VENDOR.match(name) else None
    assert qualified.qualified_use(text, at, TABLE[name]) == want


def test_the_table_lists_plain_qualified_renames_longest_first() -> None:
    unrecognised, entries = TABLE["cuda"]
    assert unrecognised and [q for q, _ in entries][:2] == [("thrust", "system"), ("thrust",)]
    assert TABLE["AutogradCUDA"][0] is False  # no vendor look: a use no entry matches is nothing
    assert not set(TABLE) & set(RULES.names)


@pytest.mark.skipif(_cscan is None, reason="the compiled scanner is not built")
def test_a_malformed_entry_is_a_type_error() -> None:
    idents = _idents("thrust::cuda x;")
    for entry in ("bad", (True, "bad"), (True, ((("thrust",),),)), (True, (((), ("f",)),))):
        with pytest.raises(TypeError):
            identifiers.renames(idents, {}, set(), _cscan, "thrust::cuda x;", set(), set(), {}, {"cuda": entry})


FILES = st.lists(TEXTS, min_size=1, max_size=3)


def _run(texts: list[str]) -> list[tuple]:
    """The pass over `texts` in order: each file's edits, diagnostics, names declared and pending
    unknown uses."""
    out = []
    for k, text in enumerate(texts):
        scan = language_for("cuda").front_end(text, RULES)
        ctx = PassContext(f"f{k}.cu", text, scan, RULES, Options(), ProjectInfo(), LineIndex(text))
        ctx.found.current_pass = "identifiers"
        edits = identifiers.run(ctx)
        out.append((sorted(edits), [(d.id, d.line, d.column, d.message, d.origin) for d in ctx.found.diagnostics],
                    sorted(ctx.declared), list(ctx.found.pending_unknown)))
    return out


def _without_table(monkeypatch) -> None:
    """The pass with an empty qualified-renames table (made again for each file, none cached)."""
    made = identifiers._tables

    def tables(ruleset):
        *rest, _, filled = made(ruleset)
        ruleset._ident_tables = None
        return (*rest, {}, filled)

    monkeypatch.setattr(RULES, "_ident_tables", None, raising=False)
    monkeypatch.setattr(identifiers, "_tables", tables)


@settings(max_examples=150, deadline=None)
@given(FILES)
@example(["thrust::cuda::par; cuda::std; x.cuda; #define cuda\n", "DispatchKey::CUDA CUDA; namespace a::cuda {"])
def test_the_pass_with_the_table_gives_the_pass_without_it(texts: list[str]) -> None:
    got = _run(texts)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(identifiers, "_COMPILED", None)  # the pure loop, the same table
        assert _run(texts) == got
    with pytest.MonkeyPatch.context() as mp:
        _without_table(mp)
        assert _run(texts) == got
