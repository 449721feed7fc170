"""The compiled merge check and apply (`_cedits`) give exactly what the Python in edits.py gives.

Every output byte goes through `apply`, so on generated edit lists (in order or not, touching,
overlapping, duplicated, empty, outside the text, 4- and 8-byte rows) and texts (ASCII, wider
characters, lone surrogates) both paths must agree: the same merged edits or the same error,
and the same new text, stored the same way (a str of the narrowest kind: equal strings of
different kinds would compare unequal).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from musify.engine import edits as edits_module
from musify.engine.edits import Edit, EditList, OverlappingEdits, apply, apply_pieces, merge

needs_cedits = pytest.mark.skipif(edits_module._NATIVE is None, reason="the compiled edits module is not built")

TEXTS = st.one_of(st.text(alphabet="ab c\n{}();", max_size=60), st.text(max_size=40),
                  st.sampled_from(["", "x", "cudaMalloc(p);", "é cuda ü", "\udc80cuda\udcff", "𝔘 wide 𝔘"]))
REPLACEMENTS = st.sampled_from(["", "musa", "x", "é", "Ω", "𝔘", "\udc80", "musaMalloc", "#include <m.h>\n"])


@st.composite
def edit_lists(draw, text: str) -> list[Edit]:
    n = len(text)
    out = []
    for _ in range(draw(st.integers(0, 8))):
        start = draw(st.integers(-2, n + 2))
        end = draw(st.one_of(st.integers(start, min(n + 3, start + 6)), st.integers(-2, n + 2)))
        out.append(Edit(start, end, draw(REPLACEMENTS), draw(st.sampled_from(["r1", "r2"]))))
    if draw(st.booleans()):
        out.sort()
    return out


def _both(fn):
    """(compiled result, Python result), each a value or the exception it raised."""
    results = []
    for native in (edits_module._NATIVE, None):
        saved = edits_module._NATIVE
        edits_module._NATIVE = native
        try:
            results.append(("ok", fn()))
        except Exception as exc:  # noqa: BLE001 -- compared: both paths must raise alike
            results.append(("raised", type(exc), str(exc)))
        finally:
            edits_module._NATIVE = saved
    return results


def _same_str(a, b) -> None:
    assert a == b
    if a[0] == "ok" and isinstance(a[1], str):  # the same value, stored alike (ascii or not)
        assert a[1].isascii() == b[1].isascii() and a[1] == b[1] and hash(a[1]) == hash(b[1])


@needs_cedits
@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), TEXTS, st.booleans())
def test_merge_and_apply_agree(data, text: str, wide: bool) -> None:
    _agree(text, data.draw(edit_lists(text)), wide)


TRICKY = [  # touching, a negative span after an edit, duplicates, an insertion at the end, out of order
    [Edit(0, 1, "é", "r"), Edit(1, 3, "", "r")], [Edit(0, 1, "x", "r"), Edit(3, 2, "y", "r")],
    [Edit(1, 2, "x", "r"), Edit(1, 2, "x", "r")], [Edit(1, 2, "x", "r"), Edit(1, 2, "y", "r")],
    [Edit(0, 0, "a", "r"), Edit(0, 0, "b", "r")], [Edit(2, 3, "x", "r"), Edit(0, 1, "y", "r")],
    [Edit(0, 2, "x", "r"), Edit(5, 5, "end", "r")], [Edit(-1, 1, "x", "r"), Edit(1, 9, "y", "r")],
]


@needs_cedits
@pytest.mark.parametrize("raw", TRICKY)
@pytest.mark.parametrize("text", ["abcde", "aé𝔘de"])
def test_tricky_lists_agree(raw: list[Edit], text: str) -> None:
    for wide in (False, True):
        _agree(text, raw, wide)


def _agree(text: str, raw: list[Edit], wide: bool) -> None:
    listed = EditList()
    listed.extend(raw)
    if wide:  # rows of 8-byte integers, as a huge file's are
        listed._widen(())
        assert listed._a.typecode == "q"
    merged = _both(lambda: list(merge(listed)))
    assert merged[0] == merged[1]
    _same_str(*_both(lambda: apply(text, listed)))  # unmerged lists too: the C path falls back
    _same_str(*_both(lambda: "".join(apply_pieces(text, listed))))
    if merged[0][0] == "ok":
        m = merge(listed)
        _same_str(*_both(lambda: apply(text, m)))


@needs_cedits
def test_apply_of_a_merged_list_replaces_the_spans() -> None:
    text = "cudaMalloc(p); é cudaFree(p);"
    edits = merge([Edit(0, 10, "musaMalloc", "cudaMalloc"), Edit(17, 25, "musaFree", "cudaFree")])
    assert edits_module._NATIVE.apply(text, edits._a, edits._fields.values) == "musaMalloc(p); é musaFree(p);"
    assert apply("cuda", merge([Edit(0, 4, "é", "r")])) == "é"  # an ASCII text, a wider result
    with pytest.raises(OverlappingEdits):
        merge([Edit(0, 4, "a", "r"), Edit(2, 5, "b", "r")])


def test_the_compiled_module_is_built_and_in_use() -> None:
    """Where the scanner's extension was built, this one must be too (the same build step)."""
    import os

    from musify.frontend import scanner

    if os.environ.get("MUSIFY_PURE_PYTHON", "") not in ("", "0"):
        pytest.skip("MUSIFY_PURE_PYTHON selects the Python path")
    if scanner.SCANNER != "c":
        pytest.skip("no compiled extension was built here (test_cscan_equivalence says why)")
    assert edits_module._NATIVE is not None, \
        "musify/engine/_cedits.c was not built: run `python setup.py build_ext --inplace`"
