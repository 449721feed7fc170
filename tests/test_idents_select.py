"""`IdentList.select` (the distinct names looked up once, rows found by searches of the name
column) selects exactly what the reference, a filter over every identifier, selects: on
generated identifier lists and wanted names (sets, frozensets, lists, tuples; none, few or many
present) and on a table given with a name twice."""

from __future__ import annotations

from array import array

from hypothesis import given, settings
from hypothesis import strategies as st

from musify.frontend.idents import CTXS, Ctx, IdentList

NAMES = [f"n{i}" for i in range(12)] + ["cudaDeviceSynchronize", "cudaFree", ""]
idents = st.lists(st.tuples(st.sampled_from(NAMES), st.sampled_from(CTXS)), max_size=40)
wanted = st.one_of(st.none(), st.sets(st.sampled_from(NAMES + ["absent"]), max_size=9))
contexts = st.one_of(st.none(), st.sets(st.sampled_from(CTXS), max_size=3))
kinds = st.sampled_from([set, frozenset, list, tuple])


def _reference(rows, names, ctxs) -> list:
    return [r for r in rows if (names is None or r.name in names) and (ctxs is None or r.ctx in ctxs)]


@settings(max_examples=400, deadline=None)
@given(idents, wanted, contexts, kinds)
def test_select_is_the_filter_over_every_identifier(made, names, ctxs, kind) -> None:
    ids = IdentList()
    for k, (name, ctx) in enumerate(made):
        ids.add(3 * k, 3 * k + 2, name, ctx)
    rows = list(ids)
    asked = None if names is None else kind(sorted(names))
    assert ids.select(asked, ctxs) == _reference(rows, names, ctxs)


def test_a_table_given_with_a_name_twice_selects_both_rows() -> None:
    data = array("i", [0, 1, 0, int(Ctx.CODE), 2, 3, 1, int(Ctx.CODE), 4, 5, 2, int(Ctx.MACRO)])
    ids = IdentList(data, ["a", "a", "b"])
    assert [i.start for i in ids.select({"a"})] == [0, 2]
    assert [i.start for i in ids.select(frozenset({"a", "b"}), (Ctx.CODE,))] == [0, 2]
