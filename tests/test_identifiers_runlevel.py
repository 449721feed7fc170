"""The identifier pass's run-level shortcuts give what the pass gives without them.

Across the files of a run the pass remembers names: inferred renames (`_inferred_renames`: the
compiled loop renames all but the first use in a file), names no rule knows (`skip`, `unknown`),
and within a file a no-rule name it has met already is passed over. `qualified_rule` reads the
qualifier before a name once for all its entries (`musify.passes.qualified`). Each is compared here with the pass or the
search it shortens, on generated files met one after another by one RuleSet.
"""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from musify.frontend.scanner import LineIndex
from musify.options import Options
from musify.passes import identifiers, qualified
from musify.passes._base import PassContext, ProjectInfo
from musify.passes.languages import language_for
from musify.rules import load_ruleset

RULES = load_ruleset()
# inferred renames, a plain rename, unsupported names, a template-only one, a vendor-looking name
# no rule knows, a qualified name without a vendor look, qualified names, names without rules
WORDS = ["nvtxRangePushA", "ncclSum", "NVTX_API", "__nv_fp8_e5m2", "cudaMalloc", "cudnnCreate", "surface",
         "CUDA_CHECK", "DispatchKey::AutogradCUDA", "thrust::cuda::par", "thrust :: system::cuda",
         "cuda::std::min", "at::cuda", "DeviceType::CUDA", "cuda_cub", "cuNoSuchThing", "my_cuda_helper"]
GLUE = ["(", ");\n", " ", ", ", "int ", "x.", "#define ", "\n#if ", "// ", "\"", "<T> ", "{ ", " = 1;\n", "::"]
FILES = st.lists(st.lists(st.sampled_from(WORDS + GLUE), max_size=24).map("".join), min_size=1, max_size=4)


def _run(texts: list[str]) -> list[tuple]:
    """The pass over `texts` in order (one RuleSet, as a run migrates its files): each file's
    edits, diagnostics (code, line, column, message), names declared and pending unknown uses."""
    out = []
    options = Options()
    for k, text in enumerate(texts):
        scan = language_for("cuda").front_end(text, RULES)
        ctx = PassContext(f"f{k}.cu", text, scan, RULES, options, ProjectInfo(), LineIndex(text))
        ctx.found.current_pass = "identifiers"
        edits = identifiers.run(ctx)
        out.append((sorted(edits), [(d.id, d.line, d.column, d.message, d.origin) for d in ctx.found.diagnostics],
                    sorted(ctx.declared), list(ctx.found.pending_unknown), dict(ctx.found.unconverted)))
    return out


def _forget(monkeypatch) -> None:
    """The pass without its run-level inferred table: every use of an inferred name goes through
    `_use_rule`, as before the table (the pass's tables made again for each file, with an empty
    one: none cached on the RuleSet while patched)."""
    made = identifiers._tables

    def tables(ruleset):
        fast, skip, unknown, _, qualified_renames, filled = made(ruleset)
        ruleset._ident_tables = None
        return fast, skip, unknown, {}, qualified_renames, filled

    monkeypatch.setattr(RULES, "_ident_tables", None, raising=False)
    monkeypatch.setattr(identifiers, "_tables", tables)


@settings(max_examples=150, deadline=None)
@given(FILES)
@example(["nvtxRangePushA(); nvtxRangePushA(); NVTX_API x;", "NVTX_API y; nvtxRangePushA(a); nvtxRangePushA(b);"])
@example(["cuda::std::min<T> DispatchKey::AutogradCUDA, surfaceDispatchKey::AutogradCUDA"])
def test_inferred_table_gives_the_pass_without_it(texts) -> None:
    got = _run(texts)
    with pytest.MonkeyPatch.context() as mp:
        _forget(mp)
        want = _run(texts)
    assert got == want


def test_a_qualified_name_without_a_vendor_look_is_looked_at_each_use() -> None:
    """`AutogradCUDA` alone has no rule and no vendor look; the same file's
    `DispatchKey::AutogradCUDA` after it is still renamed: the loop passes over a name it has met
    only when no qualified rule has that name."""
    (edits, *_), = _run(["AutogradCUDA a; DispatchKey::AutogradCUDA b;"])
    assert [e.replacement for e in edits] == ["AutogradPrivateUse1"]


def test_a_qualified_name_met_alone_is_still_renamed_in_later_files() -> None:
    """A name with a qualified rule but no plain one (`AutogradCUDA`) met without its qualifier
    is not added to the run-level `skip`: a later file's `DispatchKey::AutogradCUDA` is renamed
    as in a run of that file alone (it was left as written once an earlier file had used the
    bare name)."""
    alone = _run(["DispatchKey::AutogradCUDA b;"])[0][0]
    after = _run(["AutogradCUDA a;", "DispatchKey::AutogradCUDA b;"])[1][0]
    assert [e.replacement for e in after] == [e.replacement for e in alone] == ["AutogradPrivateUse1"]
    assert "AutogradCUDA" not in identifiers.fast_renames(RULES, ["AutogradCUDA"])[1]


def test_an_inferred_name_warns_once_per_file_and_is_renamed_at_each_use() -> None:
    runs = _run(["nvtxRangePushA(a); nvtxRangePushA(b);\n"] * 3)
    for edits, diagnostics, *_ in runs:
        assert [e.replacement for e in edits] == ["mttxRangePushA"] * 2
        assert [d[0] for d in diagnostics] == ["MU1004"]


TEXTS = st.lists(st.sampled_from(["thrust", "system", "cuda", "::", " ", "\t", "\n", "x", "at", "c10", "_",
                                  "DeviceType", "é", ".", "(", "1"]), max_size=14).map("".join)


@settings(max_examples=400, deadline=None)
@given(TEXTS, st.sampled_from(sorted(RULES.qualified)))
def test_qualified_rule_matches_the_entry_by_entry_search(before: str, name: str) -> None:
    text = before + name + "(x);"
    entries = RULES.qualified[name]
    got = qualified.qualified_rule(text, len(before), entries)
    assert got is qualified.qualified_rule_reference(text, len(before), entries)


def test_qualified_rule_with_an_entry_without_qualifiers() -> None:
    """An entry with no qualifier matches anywhere, after every entry with a longer one."""
    plain, deep = object(), object()
    entries = [((), plain), (("thrust", "system"), deep)]
    for text in ("cuda", "x::cuda", "thrust::system::cuda", "system::cuda"):
        at = text.index("cuda")
        assert qualified.qualified_rule(text, at, entries) is \
            qualified.qualified_rule_reference(text, at, entries)
