"""Self-referential defines: `#define cudaX musaX` would become `#define musaX musaX`.

A project that already carries a CUDA-to-MUSA compatibility header breaks the whole translation
unit when both sides of such a define get renamed (torchada PR #92). A `#define` whose body, after
renaming, is exactly the defined name is kept as written (`ctx.protect`, continued lines included)
and reported.
"""

from __future__ import annotations

from musify.engine.edits import Edit
from musify.frontend.scanner import Ctx
from musify.passes._base import PassContext
from musify.passes.hazards.file_facts import directive_at, without_comments
from musify.patterns import lazy_pattern

_MACRO_NAME = int(Ctx.MACRO_NAME)  # a row's context, as `IdentList.data` holds it
_BODY_TOKEN = lazy_pattern(globals(), "_BODY_TOKEN", r"\s*(?:\\\r?\n\s*)*([A-Za-z_]\w*)\s*(?:\\\r?\n\s*)*$")


def run(ctx: PassContext) -> list[Edit]:
    idents = ctx.scan.idents
    if not idents.holds_context(_MACRO_NAME):  # no candidate name is defined (no `Ident` made)
        return []
    names = ctx.ruleset.names
    text = ctx.text
    for ident in idents.select(contexts=(Ctx.MACRO_NAME,)):
        if text.startswith("(", ident.end):
            continue  # a function-like macro is never `#define X X` (most defined candidates are)
        directive = directive_at(ctx, ident.start)
        if directive is None:
            continue
        after = text[ident.end:directive.end]
        body = _body(ctx, ident.end, directive.end, after)
        m = _BODY_TOKEN.fullmatch(body)
        if m is None:
            continue
        new_name = _renamed(names, ident.name)
        new_body = _renamed(names, m.group(1))
        if new_name == new_body and (new_name != ident.name or new_body != m.group(1)):
            ctx.protect(directive.start, directive.end)
            ctx.warn("MU2050", ident.start, ident.name, musa=new_name)
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
