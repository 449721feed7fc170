"""Warp shuffles behind the project's own macros: MU2023 settled once the whole run is read.

Ports often call a shuffle through a macro of their own, defined in a shared header:
vLLM's `csrc/core/cuda_compat.h` has `#define VLLM_SHFL_XOR_SYNC(var, lane_mask)
__shfl_xor_sync(uint32_t(-1), var, lane_mask)`, torch_scatter's `utils.cuh` `#define SHFL_UP_SYNC
__shfl_up_sync`. A warp reduction written with one, `for (int mask = 16; mask > 0; mask >>= 1)
best = VLLM_SHFL_XOR_SYNC(best, mask);`, walks the offsets of a 32-lane warp as surely as one
that names `__shfl_xor_sync`, but the warp-size pass, which reads one file at a time, cannot know
what the macro is. So the run decides it at its end, as it decides MU1001 (`musify/finalise.py`),
which gives every process of a `-j` run, and a run whose files come from the incremental cache,
the same answer:

- `run` (a pass, on files that name a tagged `shuffle`) notes each macro the file `#define`s whose
  replacement calls a shuffle: `Findings.warp_aliases`;
- `loop_offsets` (asked by the warp-size pass of the device code of every file it reads, one
  compiled scan) finds the `for` loops whose parentheses may hold a 16 or 32: most files have none;
- `hidden_loops` (asked by the warp-size pass) notes, in each device function the pass did not
  already report MU2023 in, each loop `_loop_at` reads as an offset loop (a 16 in its
  initialisation or a 32 in its condition, as `warp_size._is_warp_offset_loop` asks) whose body
  calls no tagged shuffle but calls a name spelled as macros are (`_MACRO_LIKE`):
  `Findings.pending_warp`, one entry a function with everything its report needs;
- `settle` (asked by `finalise` for a file whose pending loops call some alias of the run) makes
  the function's MU2023: one finding, its first loop's place, the other loops as its sites.

One level of macros is followed (a macro calling such a macro is not an alias), and the loops are
read from the text, not parsed: a loop the lexical reading cannot split (no two `;` in its
parentheses, a range `for`) is passed over.
"""

from __future__ import annotations

from musify.arch import WARP_WIDTH
from musify.diagnostics import Diagnostic, make
from musify.engine.edits import Edit
from musify.frontend import compiled
from musify.passes._base import PassContext
from musify.passes.hazards.common import FunctionList, match_bracket, warp_severity
from musify.passes.hazards.warp_operands import name_uses
from musify.passes.hazards.warp_precheck import marks
from musify.passes.hazards.warp_tree import literal_tokens
from musify.patterns import lazy_pattern

# a called name spelled as a macro is: capitals, digits and '_', at least one '_' after a letter
_MACRO_LIKE = lazy_pattern(globals(), "_MACRO_LIKE", r"_*[A-Z][A-Z0-9]*_[A-Z0-9_]*")
_CALL = lazy_pattern(globals(), "_CALL", r"(?<![\w$])([A-Za-z_]\w*)\s*\(")
_STATEMENT_STOP = lazy_pattern(globals(), "_STATEMENT_STOP", r"[;({\[]")
PENDING_MAX = 256  # loops one file may leave pending (a generated kernel's loops are not all kept)
_NATIVE = compiled.load("_claunch")  # `loop_offsets` in one compiled pass (_claunch_warp.c), or None


def triggers(ruleset) -> tuple[str, ...]:
    """The shuffle names no other one contains: a define that calls a shuffle holds one of them."""
    return _shortest(ruleset.tagged("shuffle"))


def _shortest(names: frozenset[str]) -> tuple[str, ...]:
    return tuple(sorted(n for n in names if not any(o != n and o in n for o in names)))


def run(ctx: PassContext) -> list[Edit]:
    """Note the macros this file defines whose replacement calls a tagged shuffle."""
    shuffles = ctx.ruleset.tagged("shuffle")
    text = ctx.text
    code = ctx.scan.code_map()
    for directive in ctx.scan.directives:
        name = directive.name
        if directive.keyword != "define" or not name or name in shuffles:
            continue
        start = text.find(name, directive.start, directive.end)
        if start < 0:
            continue
        body = text[start + len(name):directive.end]
        offset = start + len(name)
        if name_uses(body, shuffles, lambda at, _o=offset: code.is_code(_o + at)):
            ctx.found.warp_aliases.add(name)
    return []


def loop_offsets(text: str, functions: FunctionList | None = None) -> list[int]:
    """Where a `for` loop of `text` may hold a 16 or 32 in its parentheses (`loop_offsets_python`),
    in one compiled pass where `_claunch` was built: most files have none. With the file's device
    `functions`, only in the span they cover (the first one's body to the last one's end)."""
    start, end = 0, len(text)
    if functions is not None:
        rows = functions.rows()
        if not rows:
            return []
        start, end = rows[1], rows[-4]
    if _NATIVE is not None:
        return _NATIVE.warp_loops(text, start, end)
    return loop_offsets_python(text, start, end)


def loop_offsets_python(text: str, start: int, end: int) -> list[int]:
    """The reference of the compiled `warp_loops` (musify/frontend/_claunch_warp.c): each `for`
    in text[start:end], a word, with `(` after blanks, whose parentheses (closed by counting
    them, before `end`) hold what `warp_precheck.marks` finds, or a quote, a comment's opening or
    a '#' (where that count may be wrong). tests/test_prefilters.py compares the two."""
    out = []
    at = text.find("for", start, end)
    while at >= 0 and at + 3 <= end:
        before, after = text[at - 1:at] if at else "", text[at + 3:at + 4] if at + 3 < end else ""
        if not _word(before) and not _word(after):
            i = at + 3
            while i < end and text[i].isspace():
                i += 1
            if i < end and text[i] == "(":
                close, unsure, depth = -1, False, 0
                for j in range(i, end):
                    c = text[j]
                    if c == "(":
                        depth += 1
                    elif c == ")":
                        depth -= 1
                        if depth == 0:
                            close = j
                            break
                    elif c in "\"'#" or (c == "/" and text[j + 1:j + 2] in ("/", "*") and j + 1 < end):
                        unsure = True
                if close >= 0 and (unsure or marks(text, i, close)):
                    out.append(at)
        at = text.find("for", at + 1, end)
    return out


def _word(c: str) -> bool:
    return c != "" and (c.isalnum() or c in "_$")


def hidden_loops(ctx: PassContext, functions: FunctionList, reported: set[int], loops: list[int]) -> None:
    """Note, at the `loops` (`loop_offsets`) in device functions (but those in `reported`, whose
    MU2023 the pass made), the offset loops that call no tagged shuffle and some macro-like name:
    the run settles them."""
    shuffles, code = ctx.ruleset.tagged("shuffle"), ctx.scan.code_map()
    sites_of: dict[int, list] = {}
    for at in loops:
        k = functions.holding(at)
        if k < 0 or k in reported:
            continue
        site = _loop_at(ctx, code, at, functions.rows()[k * FunctionList.WIDTH + 2], shuffles)
        if site is not None:
            sites_of.setdefault(k, []).append(site)
    for k, sites in sites_of.items():
        _keep(ctx, functions[k].name, sites)


def _keep(ctx: PassContext, func: str, sites: list[tuple]) -> None:
    """Add a function's pending loops to the file's, up to `PENDING_MAX` loops a file."""
    pending = ctx.found.pending_warp
    room = PENDING_MAX - sum(len(kept) for _, kept, _, _, _ in pending)
    if room > 0:
        arch = ctx.options.arch
        pending.append((func, sites[:room], arch, WARP_WIDTH.get(arch, 128), warp_severity(arch)))


def _loop_at(ctx: PassContext, code, at: int, limit: int, shuffles: frozenset[str]) -> tuple | None:
    """The pending site of the `for` at `at` (its place, its end, its text, its header, the
    macro-like names its body calls), or None where it is no offset loop calling such a name."""
    text = ctx.text  # (`at` is a `for` that `loop_offsets` found: a word, with `(` after blanks)
    open_ = at + 3
    while open_ < limit and text[open_] in " \t\r\n":
        open_ += 1
    if text[open_:open_ + 1] != "(" or not code.is_code(at):
        return None
    close = match_bracket(text, open_, code)
    if close < 0 or close >= limit:
        return None
    parts = text[open_ + 1:close].split(";")
    if len(parts) != 3:
        return None
    init_at, cond_at = open_ + 1, open_ + 2 + len(parts[0])
    if not (_holds(text, code, init_at, init_at + len(parts[0]), 16)
            or _holds(text, code, cond_at, cond_at + len(parts[1]), 32)):
        return None
    end = _statement_end(text, code, close + 1, limit)
    if end < 0:
        return None
    called = set()
    for m in _CALL.finditer(text, close + 1, end):
        if code.is_code(m.start()):
            called.add(m.group(1))
    if not called or not called.isdisjoint(shuffles):
        return None  # no call, or a shuffle the pass reads itself
    macros = tuple(sorted(name for name in called if _MACRO_LIKE.fullmatch(name)))
    if not macros:
        return None
    spelled = text[at:end]
    header = text[at:text.find(")", at, end) + 1]  # to the first ')', as `warp_size._check_for` shows it
    line, col = ctx.lines.position(at)
    return (line, col, ctx.lines.position(end), spelled, " ".join(header.split()), macros)


def _holds(text: str, code, start: int, end: int, value: int) -> bool:
    """A literal in code in text[start:end] whose value is `value`, read as the warp-size checks
    read one (`warp_tree.literal_tokens`)."""
    return any(code.is_code(at) for at, _, _ in literal_tokens(text, start, end, frozenset((value,))))


def _statement_end(text: str, code, pos: int, limit: int) -> int:
    """The end (just past its `}` or `;`) of the statement starting at or after `pos`, or -1."""
    while pos < limit and text[pos] in " \t\r\n":
        pos += 1
    if text[pos:pos + 1] == "{":
        close = match_bracket(text, pos, code)
        return close + 1 if 0 <= close < limit else -1
    while True:
        m = code.search(_STATEMENT_STOP, text, pos)
        if m is None or m.start() >= limit:
            return -1
        if text[m.start()] == ";":
            return m.end()
        close = match_bracket(text, m.start(), code)
        if close < 0:
            return -1
        pos = close + 1


def calls_alias(pending: list, aliases: set[str]) -> bool:
    """Some pending loop of a file calls one of the run's `aliases`."""
    return any(not aliases.isdisjoint(site[5]) for _, sites, _, _, _ in pending for site in sites)


def settle(path: str, pending: list, aliases: set[str]) -> list[Diagnostic]:
    """The MU2023 of each function whose pending loops call one of `aliases`: at its first such
    loop, the others as its sites, worded as the warp-size pass words its own."""
    out = []
    for func, sites, arch, width, severity in pending:
        hits = [site for site in sites if not aliases.isdisjoint(site[5])]
        if not hits:
            continue
        line, col, end, spelled, expr, _ = hits[0]
        out.append(make("MU2023", path, line, col, spelled, severity, end=end, origin="pass:warp_size",
                        sites=tuple((s[0], s[1]) for s in hits[1:]), arch=arch, width=width, func=func,
                        count=len(hits), expr=expr))
    return out
