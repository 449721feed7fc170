"""Makefiles and shell build scripts: where the comments are, and the code between them.

Both languages are lines of whitespace-separated words. A Makefile comment starts at an unescaped
`#` (in a recipe line the shell sees the `#`, so it counts only at the start of a word); a shell
comment starts at a `#` that begins a word outside quotes (`$#` and `${#x}` are not comments).
The words themselves are left to the build-file pass; comments are never edited.
"""

from __future__ import annotations

from musify.frontend.scanner import Ctx, Scan


def scan_make(text: str, _ruleset: object = None) -> Scan:
    return _scan(text, make=True)


def scan_shell(text: str, _ruleset: object = None) -> Scan:
    return _scan(text, make=False)


def _scan(text: str, make: bool) -> Scan:
    """`Scan.spans` holds the comments; `Scan.tree` the (start, end) code segments of each line."""
    out = Scan()
    segments: list[tuple[int, int]] = []
    pos = 0
    n = len(text)
    while pos < n:
        end = text.find("\n", pos)
        end = n if end < 0 else end
        recipe = make and text.startswith("\t", pos)
        hash_at = _comment_start(text, pos, end, shell=not make or recipe)
        if hash_at is None:
            segments.append((pos, end))
        else:
            segments.append((pos, hash_at))
            out.spans.append((hash_at, end, Ctx.COMMENT))
        pos = end + 1
    out.tree = segments
    return out


def _comment_start(text: str, start: int, end: int, shell: bool) -> int | None:
    quote = ""
    i = start
    while i < end:
        c = text[i]
        if quote:
            if c == "\\" and quote == '"':
                i += 2
                continue
            if c == quote:
                quote = ""
        elif c == "\\":
            i += 2
            continue
        elif shell and c in "'\"":
            quote = c
        elif c == "#":
            prev = text[i - 1] if i > start else " "
            if (not shell or prev in " \t;&|(" or i == start) and prev not in "${":
                return i
        i += 1
    return None
