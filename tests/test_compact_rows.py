"""The compact containers (`IdentList`, `EditList`, `FunctionList`) read exactly as the lists of
records they replace, and a huge file's scan and edits stay small (issue 13: a 50 MB file under
300 MB; benchmarks/README.md has the figures)."""

from __future__ import annotations

import tracemalloc
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from musify.engine.edits import Edit, EditList, OverlappingEdits, apply, apply_pieces, merge
from musify.frontend.idents import Ctx, Ident, IdentList
from musify.frontend.scanner import LineIndex, scan
from musify.options import Options
from musify.passes import identifiers
from musify.passes._base import PassContext, ProjectInfo
from musify.passes.hazards.common import DeviceFunction, FunctionList
from musify.passes.hazards.file_facts import device_functions_of
from musify.passes.languages import scanner_prefixes
from musify.rules.reverse import load_for

NAMES = st.sampled_from(["cudaMalloc", "cudaFree", "cuInit", "__shfl_sync", "x", "é"])
BIG = 2**31 + 5  # past 4 bytes: the rows widen to 8
OFFSETS = st.one_of(st.integers(0, 10_000), st.integers(BIG, BIG + 100))
idents = st.lists(st.builds(Ident, OFFSETS, OFFSETS, NAMES, st.sampled_from(list(Ctx))), max_size=40)


@settings(max_examples=100, deadline=None)
@given(idents, st.sets(NAMES), st.sets(st.sampled_from(list(Ctx))))
def test_an_ident_list_reads_as_the_list_it_was_made_from(plain, wanted, contexts):
    rows = IdentList()
    rows.extend(plain)
    assert rows == plain and list(rows) == plain and len(rows) == len(plain)
    assert all(type(i) is Ident and type(i.ctx) is Ctx for i in rows)
    if plain:
        assert rows[-1] == plain[-1] and rows[0] == plain[0] and rows[1:3] == plain[1:3] and rows[::2] == plain[::2]
    with pytest.raises(IndexError):
        rows[len(plain)]
    assert rows.select(wanted) == [i for i in plain if i.name in wanted]
    assert rows.select(wanted, contexts) == [i for i in plain if i.name in wanted and i.ctx in contexts]
    assert rows.select(contexts=contexts) == [i for i in plain if i.ctx in contexts]
    assert rows.nbytes() <= 8 * 4 * len(plain)


FIELDS = st.tuples(st.sampled_from(["musaMalloc", "", "musaFree"]), st.sampled_from(["cudaMalloc", "r"]),
                   st.sampled_from(["runtime", ""]), st.just("function"), st.booleans(),
                   st.sampled_from(["reference", "include"]))
edits = st.lists(st.builds(lambda s, n, f: Edit(s, s + n, *f), st.integers(0, 60), st.integers(-1, 3), FIELDS),
                 max_size=30)


def _merge_reference(plain: list[Edit]) -> list[Edit]:
    """What `merge` did on lists of Edits (ties in start and end ordered by the other fields)."""
    out: list[Edit] = []
    for e in sorted(set(plain), key=lambda e: (e.start, e.end, e[2:])):
        if e.start > e.end:
            raise OverlappingEdits(f"edit with negative span: {e}")
        if out and e.start < out[-1].end:
            raise OverlappingEdits(f"overlapping edits: {out[-1]} and {e}")
        out.append(e)
    return out


@settings(max_examples=120, deadline=None)
@given(edits, edits)
def test_an_edit_list_merges_and_applies_as_the_list_form(first, second):
    rows = EditList()
    rows.extend(first)
    more = EditList()
    more.extend(second)
    rows.extend(more)
    plain = first + second
    assert rows == plain and list(rows) == plain
    counts = Counter()
    for fields, n in rows.field_counts():
        counts[fields] += n
    assert counts == Counter(e[2:] for e in plain)
    try:
        expected = _merge_reference(plain)
    except OverlappingEdits as exc:
        with pytest.raises(OverlappingEdits) as got:
            merge(rows)
        assert str(got.value) == str(exc)
        return
    merged = merge(rows)
    assert merged == expected and merge(plain) == expected
    text = "".join(chr(ord("a") + i % 26) for i in range(70))
    assert "".join(apply_pieces(text, merged, per_piece=2)) == apply(text, expected)


def test_rows_widen_past_four_bytes_and_device_functions_read_back():
    rows = EditList()
    rows.append(Edit(1, 2, "a", "r"))
    rows.append(Edit(BIG, BIG + 1, "b", "r"))
    assert list(rows) == [Edit(1, 2, "a", "r"), Edit(BIG, BIG + 1, "b", "r")] and rows.nbytes() == 6 * 8
    text = "__global__ void kern() {}\n__device__ void (*p)() {}"
    fns = FunctionList(text)
    fns.add(0, 23, 25, 16, 20, True)
    fns.add(26, 50, 52, -1, -1, False)
    assert list(fns) == [DeviceFunction(0, 23, 25, "kern", True), DeviceFunction(26, 50, 52, "?", False)]
    assert fns[1].name == "?" and fns.last_end() == 52 and len(fns) == 2


LINES = ("__global__ void k{i}(float *x) {{ x[threadIdx.x] = 0; }} // cudaMalloc\n"
         "void h{i}() {{ float *p; cudaMalloc(&p, 4); k{i}<<<1, 32>>>(p); cudaFree(p); }}\n")


def test_a_dense_files_scan_edits_and_device_functions_cost_little_per_megabyte():
    """The scan, the identifier pass's edits and the device function list of 0.5 MB of dense CUDA
    (6,600 candidate identifiers, 6,600 edits, 3,300 kernels) held at once. As lists of tuples
    they cost 8.4 MB per MB of text (a 50 MB file took 500 MB); compact, 1.5 (most of it the
    comment spans, still tuples)."""
    text = "".join(LINES.format(i=i) for i in range(3300))
    rules = load_for(Options())
    prefixes = scanner_prefixes(rules)
    identifiers.fast_renames(rules)  # the rule set's own tables, made once per run
    lines = LineIndex(text)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        sc = scan(text, prefixes)
        ctx = PassContext("big.cu", text, sc, rules, Options(), ProjectInfo(), lines)
        found = identifiers.run(ctx), device_functions_of(ctx), sc.code_map()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(found[0]) == 6600 and len(found[1]) == 3300 and len(sc.idents) == 6600
    per_mb = held / (len(text) / 1e6)
    assert per_mb < 3e6, f"{per_mb / 1e6:.1f} MB held per MB of text"


functions = st.lists(st.tuples(OFFSETS, OFFSETS, OFFSETS, st.integers(-1, 12), st.integers(0, 14), st.booleans()),
                     max_size=30)


@settings(max_examples=200, deadline=None)
@given(functions, st.text(max_size=14))
def test_function_list_made_in_place_reads_as_the_rows_do(rows, text):
    """`FunctionList` makes the functions it keeps from its array in place (`_all_made`): the same
    `DeviceFunction`s, of that class, as the generic row iteration (`Rows.__iter__`) with `_make`,
    4- and 8-byte rows, names cut or "?"."""
    fns = FunctionList(text)
    for row in rows:
        fns.add(*row)
    generic = list(map(fns._make, fns._rows()))
    made = list(fns)
    assert made == generic and all(type(f) is DeviceFunction for f in made)
    assert [f.is_kernel for f in made] == [f.is_kernel for f in generic]  # True/False, not 1/0
    assert all(type(f.is_kernel) is bool for f in made)
