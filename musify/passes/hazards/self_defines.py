"""Self-referential defines: `#define cudaX musaX` would become `#define musaX musaX`.

A project that already carries a CUDA-to-MUSA compatibility header breaks the whole translation
unit when both sides of such a define get renamed (torchada PR #92). A `#define` whose body, after
renaming, is exactly the defined name is kept as written (`ctx.protect`, continued lines included)
and reported, once a file: the first such define's MU2050 lists the others as its sites.
"""

from __future__ import annotations

import re
import string

from musify.engine.edits import Edit
from musify.frontend.scanner import Ctx
from musify.passes._base import PassContext
from musify.passes.hazards.file_facts import directive_at, without_comments
from musify.patterns import lazy_pattern

_MACRO_NAME = int(Ctx.MACRO_NAME)  # a row's context, as `IdentList.data` holds it
# the first character after a defined name and its blanks: one in `_NEVER_FIRST` starts no body
# `_BODY_TOKEN` matches (not a blank, a letter, '_', a line continuation's '\\' or a comment's '/'),
# or ends the directive ('\n' after blanks alone: no continuation; '': the end of the text)
_FIRST_AFTER = lazy_pattern(globals(), "_FIRST_AFTER", r"[ \t]*(.?)", re.DOTALL)
_NEVER_FIRST = frozenset({"", "\n", *(set(string.digits + string.punctuation) - {"_", "\\", "/"})})
_BODY_TOKEN = lazy_pattern(globals(), "_BODY_TOKEN", r"\s*(?:\\\r?\n\s*)*([A-Za-z_]\w*)\s*(?:\\\r?\n\s*)*$")


def run(ctx: PassContext) -> list[Edit]:
    idents = ctx.scan.idents
    if not idents.holds_context(_MACRO_NAME):  # no candidate name is defined (no `Ident` made)
        return []
    names = ctx.ruleset.names
    text = ctx.text
    rows, spelled = idents.data, idents.names  # a row is (start, end, name's index, context)
    kept: list[tuple[int, str, str]] = []  # (offset, name, MUSA name) of each define kept
    for k in idents.rows_in(_MACRO_NAME):
        start, end = rows[4 * k], rows[4 * k + 1]
        if text.startswith("(", end):
            continue  # a function-like macro is never `#define X X` (most defined candidates are)
        if _FIRST_AFTER.match(text, end).group(1) in _NEVER_FIRST:
            continue  # an empty body or one of a number, a string...: never one name (most others)
        directive = directive_at(ctx, start)
        if directive is None:
            continue
        after = text[end:directive.end]
        body = _body(ctx, end, directive.end, after)
        m = _BODY_TOKEN.fullmatch(body)
        if m is None:
            continue
        name = spelled[rows[4 * k + 2]]
        new_name = _renamed(names, name)
        new_body = _renamed(names, m.group(1))
        if new_name == new_body and (new_name != name or new_body != m.group(1)):
            ctx.protect(directive.start, directive.end)
            kept.append((start, name, new_name))
    if kept:
        # one warning a file, the other defines its sites ("+N more in this file"): a compatibility
        # header is one decision, and llama.cpp's vendors/musa.h printed 136 warnings, one a define
        at, name, musa = kept[0]
        ctx.warn("MU2050", at, name, sites=tuple(ctx.lines.position(k[0]) for k in kept[1:]), musa=musa)
    return []


def _body(ctx: PassContext, start: int, end: int, after: str) -> str:
    """`without_comments(ctx, start, end)` for a macro body `after` (text[start:end]) that starts
    just after its name: a comment in it starts with '/' inside it (the name before it is code,
    so none reaches into it from before), and most bodies hold no '/': they are as written,
    without the search of the file's spans. tests/test_idle_prefilters.py compares the two."""
    return without_comments(ctx, start, end) if "/" in after else after


def _renamed(names: dict, name: str) -> str:
    rule = names.get(name)
    return rule.replacement if rule is not None and rule.replacement else name
