"""`musify.patterns.lazy_pattern`: compiled at first use, then the compiled pattern itself."""

from __future__ import annotations

import re

from musify.frontend import launches
from musify.passes.hazards import inline_asm
from musify.patterns import LazyPattern, lazy_pattern


def test_the_stand_in_answers_as_the_pattern_and_gives_way_to_it() -> None:
    namespace: dict = {}
    namespace["P"] = lazy_pattern(namespace, "P", r"(a+)(b)?", re.IGNORECASE)
    stand_in = namespace["P"]
    assert isinstance(stand_in, LazyPattern)
    want = re.compile(r"(a+)(b)?", re.IGNORECASE)
    for text in ["", "xAAb", "aaa", "b a"]:
        assert [m.span() for m in stand_in.finditer(text)] == [m.span() for m in want.finditer(text)]
    assert namespace["P"] is stand_in.compiled() and namespace["P"].pattern == want.pattern
    assert stand_in.flags == want.flags and repr(stand_in) == repr(want)


def test_a_name_bound_to_something_else_meanwhile_is_left_alone() -> None:
    namespace: dict = {}
    stand_in = lazy_pattern(namespace, "P", rb"x")
    namespace["P"] = "other"
    assert stand_in.search(b"axb").start() == 1 and namespace["P"] == "other"


def test_module_patterns_work_compiled_or_not() -> None:
    """The modules' own stand-ins (compiled by earlier tests or not): the same matches."""
    assert [m.start() for m in inline_asm.asm_matches("x; asm volatile (\"nop\"); __asm__(\"\");")] == [3, 25]
    assert launches._IDENT_END.search("foo<<<") is None and launches._IDENT_END.search("a b").group() == "b"
