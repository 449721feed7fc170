"""Names a project's macros paste into other names: not unrecognised names (MU1001).

NVTX (vendored with the CUDA toolkit and by many projects) versions its globals with
`#define NVTX_VERSIONED_IDENTIFIER_L3(NAME, VERSION) NAME##_v##VERSION`, reached through two
forwarding macros, and writes `NVTX_VERSIONED_IDENTIFIER(nvtxGlobals).name`: `nvtxGlobals` names
nothing of its own (the code uses `nvtxGlobals_v3`), yet the CUDA 13 headers reported 595 such
arguments MU1001. Which macro pastes which argument is known only where the macro is defined,
often another file, so, as for MU1001 itself, the run decides at its end (`musify/finalise.py`):

- `run` (a pass, on files holding `##`) notes each function-like macro the file defines and the
  argument positions it pastes, directly (`NAME##_v`, `x ## NAME`, `##__VA_ARGS__`) or by passing
  the parameter whole to a macro of the same file that pastes it: `Findings.pasting`;
- `unknown_names` notes, for each unrecognised use that is a whole argument of a call, the callee
  and the position (`call_argument`): `Findings.unknown_args`;
- `finalise` drops the uses whose callee pastes that position (`pasted_uses`).
"""

from __future__ import annotations

import re

from musify.engine.edits import Edit
from musify.passes._base import PassContext
from musify.patterns import lazy_pattern

_DEFINE = lazy_pattern(globals(), "_DEFINE", r"#[ \t]*define[ \t]+([A-Za-z_]\w*)\(([^)]*)\)", re.DOTALL)
_CALLEE = lazy_pattern(globals(), "_CALLEE", r"([A-Za-z_]\w*)\s*\(")


def triggers(ruleset) -> tuple[str, ...]:
    """A macro that pastes holds `##` (a file without one defines none)."""
    return ("##",)


def run(ctx: PassContext) -> list[Edit]:
    """Note the (macro, argument position) pairs this file's macros paste."""
    text = ctx.text
    defined: dict[str, tuple[list[str], str]] = {}
    for directive in ctx.scan.directives:
        if directive.keyword != "define" or not directive.name:
            continue
        m = _DEFINE.match(text, directive.start, directive.end)
        if m is not None and m.group(1) == directive.name:
            params = [p.strip() for p in m.group(2).split(",")]
            defined[directive.name] = (params, text[m.end():directive.end])
    pasting = {(name, k) for name, (params, body) in defined.items() for k, param in enumerate(params)
               if param and _pastes(body, "__VA_ARGS__" if param == "..." else param)}
    if not pasting:
        return []
    changed = True
    while changed:  # a parameter passed whole to a macro of the file that pastes that position
        changed = False
        for name, (params, body) in defined.items():
            for callee, args in _calls(body):
                for j, arg in enumerate(args):
                    if arg in params and (callee, j) in pasting and (name, params.index(arg)) not in pasting:
                        pasting.add((name, params.index(arg)))
                        changed = True
    ctx.found.pasting.update(pasting)
    return []


def _pastes(body: str, param: str) -> bool:
    """`param` stands beside a `##` in the macro's body."""
    p = re.escape(param)
    return re.search(rf"##\s*{p}(?!\w)|(?<!\w){p}\s*##", body) is not None


def _calls(body: str) -> list[tuple[str, list[str]]]:
    """(callee, its arguments stripped) of each call in a macro body, split at top-level commas."""
    out = []
    for m in _CALLEE.finditer(body):
        depth, args, start = 0, [], m.end()
        for i in range(m.end() - 1, len(body)):
            c = body[i]
            if c in "([{":
                depth += 1
            elif c in ")]}":
                depth -= 1
                if depth == 0:
                    args.append(body[start:i].strip())
                    out.append((m.group(1), args))
                    break
            elif c == "," and depth == 1:
                args.append(body[start:i].strip())
                start = i + 1
    return out


def ends_an_argument(text: str, end: int) -> bool:
    """Whether a `)` or `,` follows the name ending at `end` (past blanks and line continuations):
    the reference of `_cscan`'s `ends_an_argument`, with which the compiled rename loop leaves such
    a use to the Python pass (`identifiers.renames_python` asks this)."""
    j = end
    while j < len(text) and text[j] in " \t\r\n\\":
        j += 1
    return text[j:j + 1] in (")", ",")


def call_argument(text: str, start: int, end: int) -> tuple[str, int] | None:
    """(callee, position) where the name at start..end is a whole argument of a call (a `(` or `,`
    before it, a `)` or `,` after it, within 2,000 characters of the call's `(`), else None."""
    if not ends_an_argument(text, end):
        return None
    i = start - 1
    while i >= 0 and text[i] in " \t\r\n\\":
        i -= 1
    if i < 0 or text[i] not in "(,":
        return None
    depth, commas, floor = 0, 0, max(-1, start - 2000)
    while i > floor:
        c = text[i]
        if c in ")]}":
            depth += 1
        elif c in "([{":
            if depth == 0:
                if c != "(":
                    return None
                k = i - 1
                while k >= 0 and text[k] in " \t":
                    k -= 1
                e = k + 1
                while k >= 0 and (text[k].isalnum() or text[k] == "_"):
                    k -= 1
                callee = text[k + 1:e]
                return (callee, commas) if callee and not callee[0].isdigit() else None
            depth -= 1
        elif c == "," and depth == 0:
            commas += 1
        elif c in ";":
            return None
        i -= 1
    return None


def pasted_uses(unknown_args: list[tuple], pasting: set[tuple[str, int]]) -> set[tuple[int, int]]:
    """The (line, column) of a file's unrecognised uses that a macro of the run pastes."""
    return {(line, col) for line, col, callee, pos in unknown_args if (callee, pos) in pasting}
