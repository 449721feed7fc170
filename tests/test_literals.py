"""`literals.holds` (one compiled pass answering every registered word) is `word in text`.

The compiled `_claunch.literals_in` (its AVX2 pass and its portable one) is checked against
Python's `in` on generated texts of every storage width (ASCII, Latin-1, two- and four-byte
characters) and word sets (one-character words, words sharing first characters, words at the very
end of the text, the empty word, words no one-byte text can hold); `holds` itself against `in`
through a file's context, with words registered after the file was first asked about, and with
the compiled module absent.
"""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from musify.frontend.scanner import LineIndex
from musify.options import Options
from musify.passes import literals
from musify.passes._base import PassContext, ProjectInfo
from musify.passes.languages import scan_c
from musify.rules import load_ruleset

try:
    from musify.frontend import _claunch
except ImportError:
    _claunch = None

ALPHABET = list("<>~_asmcx013216 \n") + ["é", "ÿ", "Ā", "€", "😀"]
pieces = st.text(alphabet=ALPHABET, max_size=120)
WORDS = ["<<<", "asm", "__global__", "~", ">>", "31", "32", "16", "0x", "a", "as", "ca", "é", "€", "😀", "x\n", "", "ÿ<"]
words = st.lists(st.one_of(st.sampled_from(WORDS), st.text(alphabet=ALPHABET, min_size=1, max_size=4)),
                 max_size=64, unique=True)


@pytest.mark.skipif(_claunch is None, reason="the compiled module was not built")
@settings(max_examples=500, deadline=None)
@given(pieces, words)
@example("x <<", ["<<<", "<<"])
@example("asm", ["asm", "sm", "m", "asmx"])
@example("é<<<", ["<<<", "é", "€"])
@example("", ["", "a"])
def test_compiled_pass_is_in(text: str, asked: list[str]) -> None:
    for simd in (True, False):  # the AVX2 pass where the CPU has it, and the portable one
        found = _claunch.literals_in(text, tuple(asked), simd)
        if found is None:
            assert max(map(ord, text)) > 0xFF  # only a text of wider characters is left to `in`
            return
        assert [bool(found >> i & 1) for i in range(len(asked))] == [w in text for w in asked], simd


@pytest.mark.skipif(_claunch is None, reason="the compiled module was not built")
@pytest.mark.parametrize("filler", ["x", "_", "a", "<", "é"])
def test_compiled_pass_finds_a_word_at_every_offset(filler: str) -> None:
    """Each word at each offset of texts of several lengths: in the 16-byte blocks, across a
    block's edge, in the bytes after the last block, first and last in the text."""
    for word in ("<<<", "asm", "__global__", "~", "a<", "xy"):
        for length in (1, 2, 15, 16, 17, 18, 31, 32, 33, 34, 35, 50, 66, 67, 100):
            for at in range(max(0, length - len(word) + 1)):
                text = filler * at + word + filler * (length - at - len(word))
                asked = (word, "zz", word[:1], word + "!")
                for simd in (True, False):
                    found = _claunch.literals_in(text, asked, simd)
                    assert [bool(found >> i & 1) for i in range(4)] == [w in text for w in asked], (text, word, simd)


@pytest.mark.skipif(_claunch is None, reason="the compiled module was not built")
def test_compiled_pass_refuses_what_it_cannot_answer() -> None:
    with pytest.raises(ValueError):
        _claunch.literals_in("x", tuple(str(i) for i in range(65)))
    with pytest.raises(TypeError):
        _claunch.literals_in("x", (b"x",))


_RULES = load_ruleset()


def _context(text: str) -> PassContext:
    return PassContext("k.cu", text, scan_c(text, _RULES), _RULES, Options(), ProjectInfo(), LineIndex(text))


@settings(max_examples=200, deadline=None)
@given(pieces, st.lists(st.sampled_from(WORDS), max_size=6))
def test_holds_is_in_through_a_context(text: str, later: list[str]) -> None:
    ctx = _context(text)
    for word in ("<<<", "asm", "0x", "nowhere-registered"):
        assert literals.holds(ctx, word) == (word in text)
    literals.register(*later)  # registered after this file was first asked: asked again
    for word in later:
        assert literals.holds(ctx, word) == (word in text)


def test_holds_without_the_compiled_module(monkeypatch) -> None:
    monkeypatch.setattr(literals, "_NATIVE", None)
    ctx = _context("k<<<1, 1>>>(); // asm")
    assert literals.holds(ctx, "<<<") and literals.holds(ctx, "asm") and not literals.holds(ctx, "__global__")


@settings(max_examples=200, deadline=None)
@given(pieces, st.lists(st.lists(st.sampled_from([*WORDS, "never-registered"]), max_size=4).map(tuple), max_size=4),
       st.lists(st.sampled_from(WORDS), max_size=6))
@example("asm <<<", [("asm", "<<<"), ("never-registered",), ()], ["~"])
def test_holds_any_is_any_in(text: str, tuples: list[tuple[str, ...]], later: list[str]) -> None:
    """`holds_any` is `any(word in text ...)` for tuples of registered words, of words never
    registered and empty ones, asked before and after more words are registered."""
    ctx = _context(text)
    for words in tuples:
        assert literals.holds_any(ctx, words) == any(word in text for word in words), words
    literals.register(*later)
    for words in [*tuples, tuple(later)]:
        assert literals.holds_any(ctx, words) == any(word in text for word in words), words


def test_holds_any_without_the_compiled_module(monkeypatch) -> None:
    monkeypatch.setattr(literals, "_NATIVE", None)
    ctx = _context("k<<<1, 1>>>(); // asm")
    assert literals.holds_any(ctx, ("__global__", "asm")) and not literals.holds_any(ctx, ("__global__", "~"))
