"""The identifier pass's fast tables (`fast_renames`) are what `_use_rule` would do rule by rule,
and the scanner identifiers' `select` is a plain filter.

`_fast_renames` writes `Rule.replacement` and the `Edit` fields out in one loop over the rules;
any rule it put in the wrong table would change the edits of every file that uses the name.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from musify.frontend.idents import Ctx, IdentList
from musify.passes.identifiers import _fast_renames, fast_renames_reference
from musify.rules import load_ruleset
from musify.rules.model import Rule, RuleSet


def test_fast_tables_equal_the_rule_by_rule_reference() -> None:
    rules = load_ruleset()
    fast, skip = _fast_renames(rules)
    assert (fast, skip) == fast_renames_reference(rules)
    assert fast and skip


def test_fast_tables_on_every_kind_of_rule() -> None:
    """Each status, a qualified name, a diagnostic, a template-only tag, an inferred rename."""
    rules = RuleSet()
    cases = [
        Rule("cudaA", "musaA", "function", "runtime", "renamed"),
        Rule("cudaB", "cudaB", "function", "runtime", "renamed"),  # renamed to itself: kept
        Rule("cudaC", "musaC", "function", "runtime", "shim"),
        Rule("cudaD", None, "function", "runtime", "unchanged"),
        Rule("cudaE", "musaE", "function", "runtime", "unsupported"),
        Rule("cudaF", "musaF", "function", "runtime", "renamed", diag="MU1003"),
        Rule("cudaG", "musaG", "type", "runtime", "renamed", inferred=True),
        Rule("cudaH", "musaH", "type", "runtime", "renamed", hazard=("template-only",)),
        Rule("cudaI", "musaI", "type", "runtime", "renamed", hazard=("shuffle",)),
        Rule("thrust::cuda", "thrust::musa", "namespace", "thrust", "renamed"),
        Rule("cudaJ", "", "function", "runtime", "renamed"),
    ]
    for rule in cases:
        rules.add(rule)
    assert _fast_renames(rules) == fast_renames_reference(rules)
    fast, skip = _fast_renames(rules)
    assert set(fast) == {"cudaA", "cudaC", "cudaI"} and {"cudaB", "cudaD", "cudaJ"} <= skip


NAMES = ["cudaA", "cudaB", "__shfl", "warpSize", "x"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(NAMES), st.sampled_from(list(Ctx))), max_size=12),
       st.sets(st.sampled_from(NAMES + ["absent"])), st.sampled_from(["set", "frozenset", "dict", "list"]),
       st.one_of(st.none(), st.sets(st.sampled_from(list(Ctx)))))
def test_select_is_the_plain_filter(rows, asked, shape, contexts) -> None:
    """`IdentList.select` (with its no-name-occurs shortcut) keeps exactly the identifiers a plain
    filter keeps, in order, whatever kind of collection the names come in."""
    idents = IdentList()
    for k, (name, ctx) in enumerate(rows):
        idents.add(3 * k, 3 * k + len(name), name, ctx)
    names = {"set": set, "frozenset": frozenset, "dict": dict.fromkeys, "list": list}[shape](asked)
    expected = [i for i in idents if i.name in names and (contexts is None or i.ctx in contexts)]
    assert idents.select(names, contexts) == expected


def test_renames_reads_its_arguments_alike_by_any_route():
    """`_cscan.renames` reads the pass's arguments (exact types) straight from the tuple, and
    others (a set subclass, say) by its format: the same edits, rest and uses either way."""
    from musify.frontend.scanner import native, scan
    from musify.passes.identifiers import _DECIDED_MASK, _DECLARING_MASK, _MIGRATED_MASK

    compiled = native()
    if compiled is None:
        return
    text = "#define cudaX 1\ncudaMalloc(&p, n); cuFoo(p); s.cuBar = 1; cudaFree(p);\n"
    idents = scan(text).idents
    fast = {"cudaMalloc": ("musaMalloc", "cudaMalloc", "runtime", "function", False, "reference")}
    first = {"cudaFree": ("musaFree", "cudaFree", "runtime", "function", False, "reference")}

    class Names(set):
        pass

    answers = []
    for kind in (set, Names):
        declared = kind()
        got = compiled.renames(idents._a, idents._names.values, fast, kind({"p"}), _MIGRATED_MASK, text,
                               kind({"cuFoo", "cuBar", "cudaX"}), _DECIDED_MASK, declared, _DECLARING_MASK, first)
        answers.append((bytes(got[0]), got[1:], sorted(declared)))
    assert answers[0] == answers[1]
    assert answers[0][2] == ["cudaX"]
