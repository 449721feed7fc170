"""Offset -> "is this code?" and bracket matching over a scan's comment and literal spans.

Moved out of `scanner.py` (which makes the spans) so that module stays about scanning; the
scanner re-exports `CodeMap` for the passes that import it from there.
"""

from __future__ import annotations

import bisect
import re

from musify.frontend.idents import Ctx


class CodeMap:
    """Answers "is this offset in code?" by bisecting the comment and literal spans.

    The spans' starts and the two bracket memos are made on first use (`__getattr__`, reached
    only while a slot is unset): most code maps of a run (one for each file with a device
    function) are only handed to the compiled searches as their spans (`spans`), and never
    bisected nor asked for a bracket."""

    __slots__ = ("_paired", "_pairs", "_spans", "_starts")

    def __init__(self, spans: list[tuple[int, int, Ctx]]):
        self._spans = spans

    def __getattr__(self, name: str):
        if name == "_starts":
            self._starts = [s for s, _, _ in self._spans]
            return self._starts
        if name == "_pairs":
            self._pairs: dict[str, tuple[str, dict[int, int]]] = {}
            return self._pairs
        if name == "_paired":  # `closer`'s pairings
            self._paired: dict[str, tuple[str, memoryview, memoryview]] = {}
            return self._paired
        raise AttributeError(name)

    def context_at(self, pos: int) -> Ctx:
        i = bisect.bisect_right(self._starts, pos) - 1
        if i >= 0:
            s, e, ctx = self._spans[i]
            if s <= pos < e:
                return ctx
        return Ctx.CODE

    def is_code(self, pos: int) -> bool:
        return self.context_at(pos) == Ctx.CODE

    def search(self, pattern: re.Pattern[str], text: str, pos: int) -> re.Match[str] | None:
        """The next match of `pattern` at or after `pos` that starts in code (comments and
        literals are jumped over whole): bracket matching that costs per bracket, not per char."""
        while True:
            m = pattern.search(text, pos)
            if m is None:
                return None
            end = self.span_end(m.start())
            if end is None:
                return m
            pos = end

    def span_end(self, pos: int) -> int | None:
        """The end of the comment or literal containing `pos`, or None when `pos` is code."""
        i = bisect.bisect_right(self._starts, pos) - 1
        if i >= 0:
            s, e, _ = self._spans[i]
            if s <= pos < e:
                return e
        return None

    def closing(self, pattern: re.Pattern[str], text: str, i: int) -> int:
        """The offset of the bracket closing the opener `text[i]` (in code; `pattern` matches
        that opener and its closer), or -1. Every pair a search passes is remembered, and a later
        search jumps over a known pair and stops at a known unclosed opener (which leaves every
        opener before it unclosed too), so each bracket of the file is read at most once: asking
        per opener would rescan to the end of the file for each unclosed one, which is quadratic
        on a file of unclosed function bodies."""
        opener = text[i]
        known = self._pairs.get(opener)
        if known is None or known[0] is not text:
            known = self._pairs[opener] = (text, {})
        pairs = known[1]
        if i in pairs:
            return pairs[i]
        stack = [i]
        j = i + 1
        while stack:
            m = self.search(pattern, text, j)
            k = m.start() if m is not None else -1
            if k >= 0 and text[k] != opener:
                pairs[stack.pop()] = k
                j = k + 1
                continue
            close = pairs.get(k, 0) if k >= 0 else -1
            if close == -1:  # the end of the file, or an opener known never to close
                for o in stack:
                    pairs[o] = -1
                break
            if close:
                j = close + 1  # a balanced pair seen before
            else:
                stack.append(k)
                j = k + 1
        return pairs[i]

    def closer(self, pattern: re.Pattern[str], text: str, i: int, pairs) -> int:
        """`closing(pattern, text, i)`, answered from `pairs(text, spans, opener)` (the compiled
        `_claunch.pairs`: every code bracket of the opener's kind paired in one pass, made once
        per kind and text): a bisection per question instead of a regex search and a span
        look-up per bracket between the two (inline assembly in the CUDA headers asked 3,500
        times). An opener that is not itself in code is not paired there: `closing` answers it."""
        opener = text[i]
        known = self._paired.get(opener)
        if known is None or known[0] is not text:
            opens, closes = pairs(text, self._spans, opener)
            known = self._paired[opener] = (text, memoryview(opens).cast("q"), memoryview(closes).cast("q"))
        opens = known[1]
        k = bisect.bisect_left(opens, i)
        if k < len(opens) and opens[k] == i:
            return known[2][k]
        return self.closing(pattern, text, i)

    def last_span_before(self, pos: int) -> int:
        """The index of the last span that starts before `pos` (-1: none)."""
        return bisect.bisect_left(self._starts, pos) - 1

    def forget_brackets(self) -> None:
        """Let go of the bracket pairs `closing` remembered (a later call starts afresh)."""
        self._pairs.clear()
        self._paired.clear()

    def spans(self) -> list[tuple[int, int, Ctx]]:
        """The comment and literal spans in order (launch detection walks them alongside its
        own token pass, which is cheaper than a bisection per token)."""
        return self._spans
