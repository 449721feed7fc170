"""musify-text's original algorithm, for `--text-mode`: every occurrence is text.

All table keys are searched at once, leftmost-longest and non-overlapping; a match is replaced
only where the characters on both sides are not `[A-Za-z0-9_]`, anywhere in the file: code,
comments and strings alike. Lines and blocks under exclusion markers are kept as written.
The keys are compiled into one trie-shaped regex, so the search is a single C-speed pass.
"""

from __future__ import annotations

import re

from musify.frontend.scanner import trie_regex as scanner_trie
from musify.passes.exclusions import find_exclusions

_WORD = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


def trie_regex(keys: list[str]) -> re.Pattern[str] | None:
    """One regex matching any key; at each position the longest key wins (the scanner's trie)."""
    if not keys:
        return None
    return re.compile(scanner_trie(keys))


def replace_text(text: str, table: dict[str, str], pattern: re.Pattern[str] | None = None) -> tuple[str, int]:
    """`text` with the table applied the musify-text way; returns the new text and the count."""
    pattern = pattern or trie_regex(list(table))
    if pattern is None:
        return text, 0
    spans = find_exclusions(text).spans
    out: list[str] = []
    last = 0
    count = 0
    span_i = 0
    for m in pattern.finditer(text):
        start, end = m.span()
        if start > 0 and text[start - 1] in _WORD or end < len(text) and text[end] in _WORD:
            continue
        while span_i < len(spans) and spans[span_i][1] <= start:
            span_i += 1
        if span_i < len(spans) and spans[span_i][0] < end:
            continue  # inside an excluded line or block
        out.append(text[last:start])
        out.append(table[m.group()])
        last = end
        count += 1
    out.append(text[last:])
    return "".join(out), count
