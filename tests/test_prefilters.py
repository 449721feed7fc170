"""Shortcuts that skip work on text without a pass's trigger find exactly what the full search finds."""

from __future__ import annotations

from array import array

from hypothesis import example, given, settings
from hypothesis import strategies as st

from musify.frontend import launches, syntax
from musify.passes.hazards import inline_asm, warp_macros, warp_precheck, warp_tree
from musify.passes.hazards.common import FunctionList, int_value

ASM_PIECES = ["asm", "__asm", "__asm__", "_asm", ".asm", "xasm", "asm(", "asm volatile(", "__asm__ __volatile__ (",
              "asm\n(", "asmasm(", "__", "_", " ", "(", "volatile", "(\"mov\");", "\n", "a", "s", "m"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(ASM_PIECES), st.text(alphabet="asm_ (.v\n", max_size=6)),
                max_size=30).map("".join))
@example("___asm__(x) __asm(y) asm volatile (z) .asm(q) x__asm__(w)")
def test_inline_asm_candidates_match_a_full_search(text: str) -> None:
    found = [(m.start(), m.end()) for m in inline_asm.asm_matches(text)]
    assert found == [(m.start(), m.end()) for m in inline_asm._ASM.finditer(text)]


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab_Z09 \n\t()<>:é٣ⅷ_")), max_size=24), st.data())
@example("kern\n", None)
@example("9_x", None)
def test_kernel_name_read_backwards_matches_the_regex(text: str, data) -> None:
    hi = data.draw(st.integers(0, len(text))) if data is not None else len(text)
    lo = data.draw(st.integers(0, hi)) if data is not None else 0
    m = launches._IDENT_END.search(text, lo, hi)
    assert launches.ident_ending_at(text, lo, hi) == (m.start() if m else -1)


WARP_PIECES = ["unsigned m = __ballot_sync(0xffffffff, p);", "int c = __popc(m);", "if (m == 0xffffffff) {", "}",
               "m", "mask", "m2", " ", "(", ")", ";", "{", "f(m);", "m & 1", "unsigned = x;", "é", "\n", "int"]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(WARP_PIECES), max_size=25).map("".join),
       st.sets(st.sampled_from(["m", "mask", "m2", "é", "", "x"]), max_size=3))
def test_identifiers_found_by_name_are_those_a_walk_finds(body: str, wanted: set[str]) -> None:
    root = syntax.parse_toplevel("__device__ void f(int p) {" + body + "}").root
    text = warp_tree._decoded
    walked = {(n.start_byte, n.end_byte) for n in warp_tree.walk(root) if n.type == "identifier" and text(n) in wanted}
    assert {(n.start_byte, n.end_byte) for n in warp_tree.identifiers_named(root, wanted, text)} == walked


_NUMBER = st.tuples(st.sampled_from(["", "0", "00"]), st.sampled_from(["31", "32", "16", "5", "4294967295", "33", "1"]),
                    st.sampled_from(["", "u", "U", "ul", "LL", "f", ".0", "_", "x"])).map("".join) | \
    st.tuples(st.sampled_from(["0x", "0X", "0x0", "0x00"]), st.sampled_from(["1f", "1F", "20", "10", "5", "ffffffff",
                                                                            "FFFFFFFF", "fffffff", "21", "g"]),
              st.sampled_from(["", "u", "UL", "f", ".", "_"])).map("".join)


@settings(max_examples=400, deadline=None)
@given(st.sampled_from([" ", "(", ">>", ">> ", ">>>", "> ", "x", ".", "_", "=", "\n"]), _NUMBER,
       st.sampled_from(["", " ", ";", ")", "x", ".", "_", "é"]))
@example(" ", "0x1f", ";")
@example(">> ", "05u", ";")
def test_warp_triggers_are_the_literals_the_checks_read(before: str, number: str, after: str) -> None:
    """A literal the checks read as 31, 32 or the full mask (`int_value`, as a whole token: no word
    character or '.' beside it), or as 5 after `>>`, is `TRIGGER`; one read as 16 is `SIXTEEN`;
    nothing else in these pieces is either."""
    text = before + number + after
    whole = not any(c.isalnum() or c in "_." for c in before[-1:] + after[:1])
    value = int_value(number) if whole else None
    trigger = value in (31, 32, 0xFFFFFFFF) or (value == 5 and before.rstrip().endswith(">>"))
    assert bool(warp_precheck.TRIGGER.search(text)) == trigger, text
    assert bool(warp_precheck.SIXTEEN.search(text)) == (value == 16), text


_MARK_PIECES = ["0xffffffff", "0XFFFFFFFF", "0xFfFfFfFf", "0xfffffff", "0x", "~0", "~ 0", "~\u30000", "~\x0b\n0",
                "~x", "31", "32", "33", "x32", ".32", "32.", "32u", "132", "_32", "é32", "٣32", "32٣", "32é", "16",
                "x16", "16.0", "16_", "٣16", ">> 5", ">>5", ">>>5", ">>51", ">> 5u", ">> 5é", ">>\u20285", " ", "\n",
                "(", "3", "2", "1", "6", "f", "F", "x", ".", ">", "~", "0", "5", "0x1f", "0X1F", "0x20", "0x10", "0x5",
                "0x0", "031", "0032", "4294967295", "u", "L", "l", "ul", "U", "０", "٣", "1f", "20", "10"]


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(_MARK_PIECES), max_size=20).map("".join), st.data())
@example("int32_t x = 32;", None)
@example("a >>\u3000 5", None)
def test_warp_marks_match_the_regexes(text: str, data) -> None:
    """`warp_precheck.marks` (compiled where built) and `marks_python` give what the two regexes
    find in any slice, the look-behind reading before the slice as `re` does."""
    end = data.draw(st.integers(0, len(text))) if data is not None else len(text)
    start = data.draw(st.integers(0, end)) if data is not None else 0
    want = warp_precheck.TRIGGER_MARK if warp_precheck.TRIGGER.search(text, start, end) else (
        warp_precheck.SIXTEEN_MARK if warp_precheck.SIXTEEN.search(text, start, end) else 0)
    assert warp_precheck.marks_python(text, start, end) == want, (text, start, end)
    assert warp_precheck.marks(text, start, end) == want, (text, start, end)


def test_warp_marks_are_compiled_where_claunch_was_built() -> None:
    """`marks` runs the compiled pass wherever `_claunch` loads (else the test above proved nothing new)."""
    from musify.frontend import compiled

    assert (warp_precheck._NATIVE is None) == (compiled.load("_claunch") is None)
    if warp_precheck._NATIVE is not None:
        assert warp_precheck._NATIVE.warp_marks("int x = 0x20 >> 5;", 0, 18) == warp_precheck.TRIGGER_MARK


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_MARK_PIECES), max_size=20).map("".join), st.data())
@example("__global__ void k() { int l = threadIdx.x & 31; }", None)
def test_warp_bodies_match_the_loop_over_the_functions(text: str, data) -> None:
    """`warp_precheck.bodies` (one compiled call over the functions' array where built) picks the
    functions `bodies_python` picks, the pass's old loop: generated bodies anywhere in the text
    (overlapping, empty, reaching its end, 4- or 8-byte rows), uses of shuffles and lane-mask
    results anywhere, before, inside and after them."""
    n = len(text)
    functions = FunctionList(text)
    spans = data.draw(st.lists(st.tuples(st.integers(0, n), st.integers(0, n)), max_size=6)) if data else [(0, n)]
    for lo, hi in spans:
        functions.add(lo, min(lo, hi), max(lo, hi), -1, -1, False)
    if data is not None and data.draw(st.booleans()):
        functions._a = array("q", functions._a)  # as a text over 2 GB widens them
    offsets = st.lists(st.integers(0, n + 2), max_size=5).map(sorted)
    shuffles = data.draw(offsets) if data else []
    results = data.draw(offsets) if data else []
    want = warp_precheck.bodies_python(text, functions, shuffles, results)
    assert warp_precheck.bodies(text, functions, shuffles, results) == want, (text, spans, shuffles, results)


_LOOP_PIECES = ["for", "for ", "for(", "(", ")", ";", " ", "\n", "16", "32", "0x10", "160", "int i = 0", "i < n",
                "i++", "o >>= 1", "x", "_for", "forx", "$", "\"", "'", "//", "/*", "/", "#", "é", "٣", "\u3000", "~0"]


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(_LOOP_PIECES), max_size=24).map("".join), st.data())
@example("for (int o = 16; o > 0; o >>= 1) s += f(s, o);", None)
@example("for (int i = 0; i < strlen(\")\"); i++) {}", None)
def test_warp_loops_match_the_reference(text: str, data) -> None:
    """`warp_macros.loop_offsets` (the compiled `warp_loops` where built) finds the loops
    `loop_offsets_python` finds, in the whole text and in any slice (on 1-, 2- and 4-byte texts)."""
    whole = FunctionList(text)
    whole.add(0, 0, len(text), -1, -1, False)
    assert warp_macros.loop_offsets(text, whole) == warp_macros.loop_offsets_python(text, 0, len(text)), text
    if data is not None and warp_macros._NATIVE is not None:
        end = data.draw(st.integers(0, len(text)))
        start = data.draw(st.integers(0, end))
        assert warp_macros._NATIVE.warp_loops(text, start, end) == \
            warp_macros.loop_offsets_python(text, start, end), (text, start, end)


def test_warp_loops_keep_what_a_naive_count_may_misread() -> None:
    """A loop whose parentheses hold a 16 or 32, or a literal or a comment where counting them
    may go wrong, is kept; one with neither, or a word merely spelled `for`, is not."""
    text = ("for (int o = 16; o > 0; o >>= 1) a(); for (int i = 0; i < n; i++) b(); "
            "for (c = 0; c < f(\")\"); c++) d(); format(32); for (k = 0; k < 0x20; k += 1) e();")
    whole = FunctionList(text)
    whole.add(0, 0, len(text), -1, -1, False)
    assert [text[at:at + 7] for at in warp_macros.loop_offsets(text, whole)] == ["for (in", "for (c ", "for (k "]
    assert warp_macros.loop_offsets(text, FunctionList(text)) == []  # no device function, no loop of one


_LITERAL_PIECES = ["0x1f", "0X1F", "0x20", "0xffffffff", "0XFFFFFFFFu", "0x", "0xg", "00x5", "31", "032", "0032u",
                   "32", "32.", "32.0", "32f", "x32", "_5", "5", "05", "5UL", "16", "160", "1", "0", "00", "0x0", "4294967295",
                   "99999999999999999999", "0x7fffffffffffffff", "0x8000000000000000", "9223372036854775807", " ", "\n",
                   "(", ";", "~", "a", ".", "<", "é", "٣2"]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(_LITERAL_PIECES), max_size=16).map("".join), st.data())
@example("int l = tid & 0x1F; x = 032u >> 5;", None)
def test_warp_literals_match_the_finds(text: str, data) -> None:
    """`warp_tree.literal_tokens` (one compiled pass where `_claunch` was built, on ASCII text)
    finds the literals `literal_tokens_python` finds: any range (around, inside or past literals),
    any of the value sets the pass asks for, huge and zero values, hex and decimal spellings."""
    n = len(text)
    low, high = (data.draw(st.integers(-2, n + 2)), data.draw(st.integers(-2, n + 2))) if data else (0, n)
    values = data.draw(st.sampled_from([warp_tree._VALUES, frozenset((16,)), frozenset((32,)), frozenset((0, 5)),
                                        frozenset((2**63 - 1, 1)), frozenset((2**64, 31))])) if data else warp_tree._VALUES
    low, high = max(low, 0), max(high, 0)  # `str.find` reads a negative bound from the end: node offsets never are
    want = warp_tree.literal_tokens_python(text, low, high, values)
    assert warp_tree.literal_tokens(text, low, high, values) == want, (text, low, high, values)


def test_warp_literals_are_compiled_where_claunch_was_built() -> None:
    """`literal_tokens` runs the compiled pass wherever `_claunch` loads, and hands other text back."""
    from musify.frontend import compiled

    assert (warp_tree._NATIVE is None) == (compiled.load("_claunch") is None)
    if warp_tree._NATIVE is not None:
        assert warp_tree._NATIVE.warp_literals("a & 0x1F;", 0, 9, ("31", "0x", "0X"), (31,)) == [(4, 8, 31)]
        assert warp_tree._NATIVE.warp_literals("é & 31", 0, 6, ("31",), (31,)) is None


LABEL_PIECES = ["case", "case ", "xcase", "_case", "écase", "CUDA", "kCUDA", "c10::", "DeviceType", " :: ", ":", "::",
                " ", "\n", "\t", "cas", "e", "x", "9", "/*", "*/"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(LABEL_PIECES), max_size=24).map("".join), st.data())
@example("xcase CUDA: case CUDA:", None)
def test_torch_case_label_search_matches_the_regex(text: str, data) -> None:
    from musify.passes import torch_cpp

    label = torch_cpp._patterns()["label"]
    pos = data.draw(st.integers(0, len(text))) if data is not None else 0
    fast, slow = label.search(text, pos), label.pattern.search(text, pos)
    assert (fast and (fast.span(), fast.groups())) == (slow and (slow.span(), slow.groups()))


MACRO_PIECES = ["TORCH_LIBRARY_IMPL", "TORCH_LIBRARY", "xTORCH_LIBRARY_IMPL", "_TORCH_LIBRARY_IMPL", "é", "(", " (",
                " ", "\n", "\t", "x", "9", "_IMPL", "TORCH_", "STABLE_TORCH_LIBRARY_IMPL", "STABLE_", "STABLE"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(MACRO_PIECES), max_size=16).map("".join), st.data())
@example("xTORCH_LIBRARY_IMPL( TORCH_LIBRARY_IMPL (", None)
@example("xSTABLE_TORCH_LIBRARY_IMPL( STABLE_TORCH_LIBRARY_IMPL (", None)
def test_torch_macro_search_matches_the_regex(text: str, data) -> None:
    from musify.passes import torch_cpp

    macro = torch_cpp._patterns()["macro"]
    pattern = getattr(macro, "pattern", macro)  # searched as the word every macro ends with
    pos = data.draw(st.integers(0, len(text))) if data is not None else 0
    fast, slow = macro.search(text, pos), pattern.search(text, pos)
    assert (fast and (fast.span(), fast.groups())) == (slow and (slow.span(), slow.groups()))


BUILD_PIECES = ["setup", "setup(", "setup (", "setup\n(", "xsetup(", "setuptools", "distutils", "nvcc", "Xnvcc",
                "cpp_extension", "torch.utils.cpp_extension", "CUDAExtension", "load_inline", "load", "_", "é",
                " ", "\n", ".", "(", "x", "9", "CUDA_HOME", "extra_compile_args"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(BUILD_PIECES), max_size=16).map("".join))
@example("xsetup( setup (")
def test_builds_cuda_matches_the_regex(text: str) -> None:
    """The Python pass's "does this file build CUDA code" test, asked where its words occur, says
    what the regular expression's search says."""
    from musify.passes import python_setup

    assert python_setup._builds_cuda(text) == (python_setup._builds().search(text) is not None)
