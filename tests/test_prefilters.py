"""Shortcuts that skip work on text without a pass's trigger find exactly what the full search finds."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from musify.passes.hazards import inline_asm

ASM_PIECES = ["asm", "__asm", "__asm__", "_asm", ".asm", "xasm", "asm(", "asm volatile(", "__asm__ __volatile__ (",
              "asm\n(", "asmasm(", "__", "_", " ", "(", "volatile", "(\"mov\");", "\n", "a", "s", "m"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(ASM_PIECES), st.text(alphabet="asm_ (.v\n", max_size=6)),
                max_size=30).map("".join))
@example("___asm__(x) __asm(y) asm volatile (z) .asm(q) x__asm__(w)")
def test_inline_asm_candidates_match_a_full_search(text: str) -> None:
    found = [(m.start(), m.end()) for m in inline_asm.asm_matches(text)]
    assert found == [(m.start(), m.end()) for m in inline_asm._ASM.finditer(text)]
