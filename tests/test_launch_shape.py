"""Plain launch statements counted as read without a parse (`musify.frontend.launch_shape`).

The claim the structure pass rests on: every launch `well_formed` accepts, tree-sitter-cuda
parses with no error and exactly one kernel call, alone and a few together (the pass parses a
file's launches as one batch). Checked on launches generated from the subset's grammar with
words near the grammar's own, on every word of the repository's corpora and a sample of the
CUDA headers' in seven positions, and the compiled recogniser against the Python one.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from musify.frontend import launch_shape, syntax
from musify.frontend.launch_shape import PRIMITIVE_TYPES, reserved_words, well_formed_python

try:
    from musify.frontend import _claunch
except ImportError:
    _claunch = None

ROOT = Path(__file__).resolve().parents[1]
# words a launch might hold, many of them the grammar's own or close to them
WORDS = ["a", "b", "n", "x1", "d_in", "_x", "__x", "A_B", "blocks", "stream", "intx", "int8", "uint", "Int",
         "sizeof_x", "new_", "this_", "std", "dim3", "T", "BLOCK", "threadIdx", "f", "max", "k_c0", "TRUE1", "NULL_",
         "float4", "half2", "nv_bfloat16", "wchar_t", "override", "final", "module", "import", "and", "or", "not",
         "xor", "defined", "offsetof", "asm", "typename", "auto", "const", "template", "decltype", "noexcept",
         "__shared__", "operator", "delete", "new", "sizeof", "int", "size_t", "unsigned", "long", "__device__",
         "identifier", "expression", "end", "char16_t", "__int128", "_Bool", "__fp16", "I", "L", "u8", "R", "LL", "u"]
NUMBERS = ["0", "1", "32", "256", "0x10", "0XffU", "1234ULL", "7u", "8l", "3.5", "2.0f", "1.0F", "10LL", "0.5f",
           "3.25L", "1ll", "1.5fu", "0x1fULL", "1Lu", "1uLL"]
NOT_NUMBERS = ["00", "09", "1uu", "1lul", "0x", "1.", "1e5", "1'000"]  # spellings the subset refuses
BLANKS = ["", "", " ", "\n", "\t", "\r\n"]

words = st.one_of(st.sampled_from(WORDS), st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,6}", fullmatch=True),
                  st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,6}", fullmatch=True))
names = st.lists(words, min_size=1, max_size=3).flatmap(
    lambda parts: st.sampled_from(["::", " :: "]).map(lambda sep: sep.join(parts)))
primaries = st.one_of(names, st.sampled_from(NUMBERS), st.sampled_from(["nullptr", "true", "false"]),
                      st.one_of(st.sampled_from(sorted(PRIMITIVE_TYPES)), names).map(lambda t: f"sizeof({t})"))


def _grow(inner):
    ops = st.sampled_from([" + ", "-", " * ", "/", " % ", " & ", "|", " ^ ", " && ", " || ", " == ", "!=", "- -"])
    return st.one_of(
        st.tuples(inner, ops, inner).map("".join),
        st.tuples(st.sampled_from(["-", "+", "!", "~", "*", "&", "- ", "--", "++"]), inner).map("".join),
        inner.map(lambda e: f"({e})"),
        st.tuples(inner, st.sampled_from([".", "->", " . "]), words).map("".join),
        st.tuples(inner, inner).map(lambda p: f"{p[0]}[{p[1]}]"),
        st.tuples(inner, st.lists(inner, max_size=3)).map(lambda p: f"{p[0]}({', '.join(p[1])})"))


expressions = st.recursive(primaries, _grow, max_leaves=12)
kernels = st.tuples(st.sampled_from(["", "", "::"]), names, st.one_of(
    st.just(""), st.lists(st.one_of(st.sampled_from(sorted(PRIMITIVE_TYPES)), words, st.sampled_from(NUMBERS)),
                          min_size=1, max_size=3).map(lambda a: "<" + ", ".join(a) + ">"))).map("".join)
launches = st.tuples(kernels, st.sampled_from(BLANKS), st.lists(expressions, min_size=1, max_size=5),
                     st.sampled_from(BLANKS), st.lists(expressions, max_size=4)).map(
    lambda p: f"{p[0]}{p[1]}<<<{', '.join(p[2])}>>>{p[3]}({', '.join(p[4])})")


def _reads(snippet: str, count: int = 1) -> bool:
    tree = syntax.parse_statement(snippet)
    return tree.ok and syntax.count_kernel_calls(tree.root) == count


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(launches)
@example("k<<<1, 2>>>(a, b)")
@example("::a::k<int, 4, T><<<-1, *p, sizeof(float)>>>(x.y->z[1](2), - -n)")
def test_a_well_formed_launch_is_read_by_tree_sitter(launch: str) -> None:
    if well_formed_python(launch, 0, len(launch), reserved_words()):
        assert _reads(launch + ";"), launch


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(st.lists(launches, min_size=2, max_size=5))
def test_well_formed_launches_are_read_together(batch: list[str]) -> None:
    plain = [s for s in batch if well_formed_python(s, 0, len(s), reserved_words())]
    if plain:
        assert _reads("\n".join(s + ";" for s in plain), len(plain)), plain


def _corpus_words() -> list[str]:
    found: set[str] = set()
    for path in (ROOT / "corpora").rglob("*"):
        if path.is_file():
            found.update(re.findall(r"\b[A-Za-z_]\w*\b", path.read_text("utf-8", "replace")))
    headers = Path("/usr/local/cuda/include")
    if headers.is_dir():  # a sample of the CUDA headers' words, the same one every run
        more: set[str] = set()
        for path in sorted(headers.glob("*.h"))[:200]:
            more.update(re.findall(r"\b[A-Za-z_]\w*\b", path.read_text("utf-8", "replace")))
        found.update(sorted(more)[::7])
    return sorted(found)


def test_every_corpus_word_in_every_position() -> None:
    """A word tree-sitter treats as anything but a name would break one of these shapes."""
    shapes = ["k<<<1>>>({w})", "k<<<{w}>>>(x)", "{w}<<<1>>>(x)", "k<<<1>>>(a.{w})", "k<<<1>>>({w}(x))",
              "k<{w}><<<1>>>(x)", "k<<<1>>>(a::{w} + 1)"]
    bad = [s for w in _corpus_words() for s in (shape.format(w=w) for shape in shapes)
           if well_formed_python(s, 0, len(s), reserved_words()) and not _reads(s + ";")]
    assert not bad, bad[:20]


def test_the_primitive_types_are_the_grammars() -> None:
    for word in PRIMITIVE_TYPES:
        root = syntax.parse_toplevel(f"{word} x;").root
        assert root.named_children[0].child_by_field_name("type").type == "primitive_type", word
    assert {"sizeof", "int", "new", "template", "this", "true", "__global__", "operator"} <= reserved_words()


@pytest.mark.parametrize("launch", ["k<<<1>>>(09)", "k<<<1>>>(int)", "k<<<1>>>(a // c\n)", "k<<<1>>>(x)@",
                                    "k<<<1>>>(a < b)", "k<<<1>>>([=] __device__ (int i) {})", "k<<<1>>>(\"s\")",
                                    "k<<<1>>>(a ? b : c)", "k<<<1>>>(x = 1)", "k<<<1>>>(a \\\n)", "k<<<1>>>(é)",
                                    "k<<<1>>>(" + "(" * 40 + "x" + ")" * 40 + ")"])
def test_what_the_subset_leaves_to_the_parser(launch: str) -> None:
    assert not launch_shape.well_formed(launch, 0, len(launch))
    assert not well_formed_python(launch, 0, len(launch), reserved_words())


FRAGMENTS = ["k", "<<<", ">>>", "(", ")", "[", "]", "<", ">", ",", " ", "\n", "\t", "::", ".", "->", "-", "--", "+",
             "*", "&", "&&", "|", "||", "==", "!=", "!", "~", "/", "//", "/*", "%", "^", "0", "1", "09", "0x1f", "1.5f",
             "7uLL", "1.", "sizeof", "int", "nullptr", "true", "x_1", "é", "٣", "\\", "?", "=", "'", '"', "\u00a0"]


@pytest.mark.skipif(_claunch is None, reason="the compiled launch pass is not built")
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(launches, st.lists(st.sampled_from(FRAGMENTS + NOT_NUMBERS), max_size=30).map("".join)), st.data())
@example("k<<<1>>>(x)", None)
@example("k<<<1>>>(1.5fu, 0x1fULL, 1uLu, 00)", None)
def test_compiled_and_python_recognisers_agree(text: str, data) -> None:
    reserved = reserved_words()
    spans = [(0, len(text))]
    if data is not None:
        end = data.draw(st.integers(-1, len(text) + 2))
        spans.append((data.draw(st.integers(-1, max(end, 0))), end))
    for start, end in spans:
        assert _claunch.launch_shape(text, start, end, reserved) == well_formed_python(text, start, end, reserved), \
            (text, start, end)


@pytest.mark.skipif(_claunch is None, reason="the compiled launch pass is not built")
def test_compiled_recogniser_refuses_what_is_not_a_set() -> None:
    with pytest.raises(TypeError):
        _claunch.launch_shape("k<<<1>>>(x)", 0, 11, ["x"])


def test_the_pure_python_path_uses_the_reference(monkeypatch) -> None:
    monkeypatch.setattr(launch_shape, "_NATIVE", None)
    assert launch_shape.well_formed("k<<<1>>>(x)", 0, 11)
    assert not launch_shape.well_formed("k<<<1>>>(int)", 0, 13)
    assert os.environ.get("MUSIFY_PURE_PYTHON", "") in ("", "0") or launch_shape.compiled.load("_claunch") is None
