"""Arch guards: numeric comparisons of the architecture macro get a MUSA threshold.

The macro is whatever name the rules tag `hazard: arch-macro` (`__CUDA_ARCH__`,
rules/runtime/overrides.yaml). `#ifdef` and `defined(...)` need nothing here: the identifier pass
renames the name. A comparison like `__CUDA_ARCH__ >= 800`, renamed alone,
is false on every MUSA GPU, so this pass rewrites only the NUMBER through the visible policy in
`arch_policy` (the two edits never overlap) and says so at the line, showing the original
expression. Comparisons with something other than a number, and arithmetic on the value, are
reported for a hand rewrite.
"""

from __future__ import annotations

from musify.arch import translate
from musify.engine.edits import Edit
from musify.frontend.scanner import Ctx
from musify.passes._base import PassContext
from musify.passes.hazards.common import comparison_at, line_end, operator_next_to
from musify.passes.hazards.file_facts import directive_at

_LOOKED_AT = frozenset({Ctx.CODE, Ctx.DIRECTIVE, Ctx.MACRO})
_UNSEEN = object()  # a value not translated yet (None is an answer: not an arch number)


def active(ruleset, options) -> bool:
    """Nothing to rewrite in the MUSA -> CUDA direction (the runner then never calls it)."""
    return not options.reverse


def needs(ruleset) -> frozenset[str]:
    """Every finding is at a use of an architecture macro (the runner skips a file without one)."""
    return ruleset.tagged("arch-macro")


def run(ctx: PassContext) -> list[Edit]:
    text = ctx.text
    macros = [name for name in ctx.ruleset.tagged("arch-macro") if name in text]
    if not macros or ctx.options.reverse:
        return []
    edits: list[Edit] = []
    rules: dict = {}  # each macro's rule, looked up once (a header compares one macro hundreds of times)
    translations: dict = {}  # each value's translation (`translate` formats the whole arch map)
    for ident in ctx.scan.idents.select(macros, _LOOKED_AT):
        name = ident.name
        rule = rules[name] if name in rules else rules.setdefault(name, ctx.ruleset.lookup(name))
        renamed = rule is not None and rule.replacement is not None
        directive = directive_at(ctx, ident.start) if ident.ctx != Ctx.CODE else None
        limit = directive.end if directive is not None else line_end(text, ident.end)
        cmp = comparison_at(text, ident.start, ident.end, limit)
        if cmp is not None:
            expr = " ".join(text[cmp.expr_start:cmp.expr_end].split())
            tr = translations.get(cmp.value, _UNSEEN)
            if tr is _UNSEEN:
                tr = translations[cmp.value] = translate(cmp.value, ctx.options.arch_map)
            if tr is None:
                ctx.warn("MU2002", ident.start, name, expr=expr, why=f"{cmp.value} is not an arch number")
            elif not renamed:
                ctx.warn("MU2002", ident.start, name, expr=expr, why=f"no rule renames {name}")
            else:
                edits.append(Edit(cmp.num_start, cmp.num_end, str(tr.musa), "arch-guard", rule.library,
                                  "arch-threshold", category="arch-guard"))
                ctx.warn("MU2001", ident.start, name, "note" if tr.exact else "warning", expr=expr,
                         musa_value=tr.musa, policy=tr.policy)
            continue
        op = operator_next_to(text, ident.start, ident.end, limit)
        if op is not None:
            low = directive.start if directive is not None else text.rfind("\n", 0, ident.start) + 1
            expr = " ".join(text[_word_edge(text, max(low, ident.start - 12), low, -1):
                                 _word_edge(text, min(limit, ident.end + 12), limit, 1)].split())
            ctx.warn("MU2002", ident.start, name, expr=expr, why=f"operator '{op}' with a non-number")
        elif ident.ctx == Ctx.CODE:
            ctx.warn("MU2003", ident.start, name)
    return edits


def _word_edge(text: str, pos: int, bound: int, step: int) -> int:
    """`pos` moved outwards (step -1: left, 1: right) to the edge of the word it cuts, not past
    `bound`: the excerpt of a MU2002 shows whole tokens of its own line only."""
    if step < 0:
        while pos > bound and (text[pos - 1].isalnum() or text[pos - 1] == "_"):
            pos -= 1
    else:
        while pos < bound and (text[pos].isalnum() or text[pos] == "_"):
            pos += 1
    return pos
