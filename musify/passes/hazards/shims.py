"""Compatibility shims: calls to CUDA features MUSA lacks, rewritten to musify's own headers.

A rule with `status: shim` (rules/shims/shims.yaml) renames the call through the identifier pass;
this pass adds `#include "musify_compat/<x>.h"` once per file (after the include guard or
`#pragma once`, else before the first `#include`), says which calls now depend on a shim, and
counts them (`facts["shim_uses"]`). With `--no-shims` the calls keep their CUDA names
(`ctx.protect`) and each use is reported instead.
"""

from __future__ import annotations

from musify.engine.edits import Edit
from musify.frontend.scanner import Ctx
from musify.passes._base import PassContext
from musify.patterns import lazy_pattern

_PRAGMA_ONCE = lazy_pattern(globals(), "_PRAGMA_ONCE", r"#\s*pragma\s+once\b")
_USES = frozenset({Ctx.CODE, Ctx.MACRO})
SHIM_ROOT = "compat/"  # rule `header:` values are relative to shims/; users put shims/compat on -I


def include_path(header: str) -> str:
    """`compat/musify_compat/half_math.h` -> `musify_compat/half_math.h`, as written in the include."""
    return header.removeprefix(SHIM_ROOT)


def _shim_names(ruleset) -> frozenset[str]:
    """The names whose MUSA form comes from a compatibility header (cached on the RuleSet)."""
    cached = getattr(ruleset, "_shim_names", None)
    if cached is None:
        cached = frozenset(name for name, rule in ruleset.names.items()
                           if rule.status == "shim" and rule.header and rule.replacement is not None)
        ruleset._shim_names = cached  # type: ignore[attr-defined]
    return cached


def needs(ruleset) -> frozenset[str]:
    """Every finding is at a use of a shimmed name (the runner skips a file without one)."""
    return _shim_names(ruleset)


def run(ctx: PassContext) -> list[Edit]:
    names = ctx.ruleset.names
    headers: list[str] = []
    uses = 0
    reported: set[str] = set()
    for ident in ctx.scan.idents.select(_shim_names(ctx.ruleset), _USES):
        rule = names[ident.name]
        header = include_path(rule.header)
        if not ctx.options.shims:
            ctx.protect(ident.start, ident.end)
            ctx.warn("MU2061", ident.start, ident.name, musa=rule.musa, header=header)
            continue
        uses += 1
        if header not in headers:
            headers.append(header)
        if ident.name not in reported:
            reported.add(ident.name)
            ctx.warn("MU2060", ident.start, ident.name, musa=rule.musa, header=header)
    if not uses:
        return []
    ctx.facts["shim_uses"] = uses
    ctx.facts["shim_headers"] = len(headers)
    present = {inc.path for inc in ctx.scan.includes}
    missing = [h for h in headers if h not in present]
    if not missing:
        return []
    at = insertion_point(ctx)
    lines = "".join(f'#include "{h}"\n' for h in missing)
    if at == len(ctx.text) and at and not ctx.text.endswith("\n"):
        lines = "\n" + lines
    return [Edit(at, at, lines, "shim-include", "musify-compat", "header", category="shim-include")]


def insertion_point(ctx: PassContext) -> int:
    """Start of the line after `#pragma once` or the include guard's `#define`; else of the first
    `#include`; else of the file."""
    directives = ctx.scan.directives
    text = ctx.text
    for i, d in enumerate(directives):
        if d.keyword == "pragma" and _PRAGMA_ONCE.match(text, d.start, d.end):
            return _next_line(text, d.end)
        if d.keyword == "ifndef" and i + 1 < len(directives) and i == 0:
            nxt = directives[i + 1]
            if nxt.keyword == "define" and nxt.name == d.name:
                return _next_line(text, nxt.end)
        if d.keyword in ("include", "include_next", "import"):
            return text.rfind("\n", 0, d.start) + 1
    return 0


def _next_line(text: str, newline: int) -> int:
    return min(len(text), newline + 1)
