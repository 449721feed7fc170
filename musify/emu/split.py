"""Region split: a kernel whose barriers all sit at its top level (or directly in top-level `for`
loops that every thread runs alike) runs as one loop over the block's threads per barrier-free
region, instead of one fiber per thread with a switch at every barrier (the MCUDA / POCL
transformation).

Why it is exact: the emulator's fiber schedule runs the threads of a block in a fixed order,
0, 1, ..., n-1, from one barrier to the next (block.hpp). A region loop runs the same statements
of the same threads in the same order, so every memory effect, every floating-point operation and
every printf happens as it did; only the switches are gone. Variables declared at the top level
of a region and used after a barrier keep one copy per thread (`name__emu[t]`), restored at the
start of each region that names them and saved at its end.

That argument holds only for kernels of a shape this module can check from the text alone, so the
check is strict and everything else is left exactly as it was (`plan` raises `Ineligible`): every
`__syncthreads();` is a statement of the kernel body or of a `for` loop (at any depth of such
loops) whose header reads only parameters never assigned in the kernel, template parameters, the
loop variables of such loops, `blockIdx`/`blockDim`/`gridDim`, numbers and object-like macros of
the file; `return;` only in its plain form (a per-thread flag then makes later regions skip the
thread, as the fibers count it arrived); no `goto`, `break`/`continue` leaving a region, warp
operation, cooperative group, `__syncthreads_count/and/or`, `__trap`, `assert`, `asm`, `extern`
but an `extern __shared__` array between regions, preprocessor conditional, address taken of a
variable that crosses a barrier, member call, or call of a function that is neither a known
math/atomic function nor defined in the file with a body that passes the same checks. Builds with
`--racecheck` or `--sanitize`, and `MUSIFY_EMU_SPLIT=0`, never split (build.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from musify.emu.split_syntax import (
    ASSIGN,
    INTEGERS,
    KEYWORDS,
    SAFE_CALLS,
    TYPES,
    Checker,
    Ineligible,
    Parser,
    Stmt,
    Tok,
    blank,
    brace_close,
    is_call,
    modified,
    operand_end,
    tokens,
)
from musify.frontend.launches import find_kernel_defs
from musify.frontend.scanner import Ctx

MARKER = "::emu::split_skip()"


@dataclass
class _Var:
    name: str
    spec: str  # declaration specifiers and stars, as written (const kept): how a region declares it
    storage: str  # the element type of its per-thread copies


@dataclass
class _Plan:
    edits: list[tuple[int, int, str]] = field(default_factory=list)  # (start, end, text)
    hoisted: list[str] = field(default_factory=list)
    vars: dict[str, _Var] = field(default_factory=dict)
    returns: bool = False  # the kernel has `return;`: threads can end before a later region
    labels: int = 0


class _Kernel:
    def __init__(self, text: str, clean: str, checker: Checker, open_: int, close: int, params: set[str],
                 tparams: set[str]):
        self.text, self.clean, self.checker = text, clean, checker
        self.toks = tokens(clean, open_ + 1, close)
        self.parser = Parser(self.toks)
        self.params, self.tparams = params, tparams
        self.plan = _Plan()
        self.consts: set[str] = set()
        self.open = open_

    def run(self) -> _Plan:
        self._directives()
        self.checker.words_ok(self.toks, returns=True)
        self._returns()
        self._arrays()
        if modified(self.toks, self.params):
            raise Ineligible("a parameter is assigned")
        stmts = self.parser.seq(0, len(self.toks))
        self._sequence(stmts, loop_vars=set(), scope=[])
        return self.plan

    def _returns(self) -> None:
        """`return;` ends the thread: a per-thread flag that later regions skip (the fibers count a
        returned thread as arrived at every later barrier). Only the plain form, and not with a
        lambda in the kernel (a `return` there would end the lambda, not the thread)."""
        for i, t in enumerate(self.toks):
            if t.text == "return":
                if i + 1 >= len(self.toks) or self.toks[i + 1].text != ";":
                    raise Ineligible("return with a value")
                self.plan.returns = True
        lambda_like = any(t.text == "]" and i + 1 < len(self.toks) and self.toks[i + 1].text in ("(", "{")
                          or t.text == "[" and i + 1 < len(self.toks) and self.toks[i + 1].text in ("&", "=")
                          for i, t in enumerate(self.toks))
        if self.plan.returns and lambda_like:
            raise Ineligible("return in a kernel with a lambda")

    def _directives(self) -> None:
        body = self.clean[self.open:self.toks[-1].end if self.toks else self.open]
        for line in re.findall(r"^[ \t]*#([^\n]*)", body, re.MULTILINE):
            if not re.fullmatch(r"\s*pragma\s+unroll\b[\w\s()]*", line):
                raise Ineligible("preprocessor directive in the kernel")
        self.toks = [t for t in self.toks if not self._in_directive(t)]
        self.parser = Parser(self.toks)

    def _in_directive(self, tok: Tok) -> bool:
        line_start = self.clean.rfind("\n", 0, tok.start) + 1
        return self.clean[line_start:tok.end].lstrip().startswith("#")

    def _arrays(self) -> None:
        """Fibers have 64 KiB stacks, a region loop the OS thread's: big local arrays would overflow
        in one and not the other, so kernels with local arrays over 4 KiB keep the fibers."""
        for m in re.finditer(r"(?:\b(?:" + "|".join(sorted(TYPES)) + r")\s*\**|\b(?!(?:else|do|case|sizeof|return)\b)[A-Za-z_]\w*\s)"
                             r"\s*\b[A-Za-z_]\w*\s*((?:\[[^\]\[]*\]\s*)+)[;=,]",
                             self.clean[self.open:self.toks[-1].end if self.toks else self.open]):
            head = self.clean[self.open:self.open + m.start()]
            statement = head[max(head.rfind(";"), head.rfind("{"), head.rfind("}")) + 1:]
            if "__shared__" in statement:
                continue
            size = 8
            for dim in re.findall(r"\[([^\]]*)\]", m.group(1)):
                size *= int(dim) if dim.strip().isdigit() else 1 << 20
            if size > 4096:
                raise Ineligible("large local array")

    # --- structure -------------------------------------------------------------------------------

    def _has_barrier(self, stmt: Stmt) -> bool:
        return any(t.text == "__syncthreads" for t in self.toks[stmt.first:stmt.last])

    def _sequence(self, stmts: list[Stmt], loop_vars: set[str], scope: list[str]) -> None:
        scope = list(scope)
        region: list[Stmt] = []
        known = len(scope)  # variables of `scope` declared before the current region
        for stmt in stmts:
            toks = self.toks[stmt.first:stmt.last]
            if self._has_barrier(stmt):
                self._close(region, scope, known)
                region, known = [], len(scope)
                if [t.text for t in toks] == ["__syncthreads", "(", ")", ";"]:
                    self._erase(stmt)
                elif stmt.kind == "for" and stmt.children[0].kind == "block":
                    var = self._uniform_for(stmt, loop_vars)
                    body = stmt.children[0]
                    self._sequence(body.children, loop_vars | {var}, scope)
                else:
                    raise Ineligible("a barrier inside a statement other than a for loop")
            elif self._dynamic_shared(toks):
                if region:  # rewrite.py makes it a pointer every thread computes alike: block-level code
                    raise Ineligible("extern __shared__ after code of the same stretch")
            elif self._hoistable(toks):
                self._hoist(stmt)  # no run-time effect: where it stands in the region does not matter
            else:
                if any(t.text == "extern" for t in toks):
                    raise Ineligible("extern inside a stretch")
                self._jumps_ok(stmt, in_loop=False, in_switch=False)
                self._declare(stmt, scope, loop_vars)
                region.append(stmt)
        self._close(region, scope, known)

    def _jumps_ok(self, stmt: Stmt, in_loop: bool, in_switch: bool) -> None:
        if stmt.kind in ("for", "while", "do"):
            in_loop = True
        if stmt.kind == "switch":
            in_switch = True
        if stmt.kind == "simple" or stmt.kind in ("for", "while", "do", "if", "switch"):
            own = self.toks[stmt.first:stmt.last] if stmt.kind == "simple" else \
                self.toks[stmt.head[0]:stmt.head[1]]
            for t in own:
                if (t.text == "break" and not (in_loop or in_switch)) or (t.text == "continue" and not in_loop):
                    raise Ineligible("break or continue leaves a region")
        for child in stmt.children:
            self._jumps_ok(child, in_loop, in_switch)

    def _uniform_for(self, stmt: Stmt, loop_vars: set[str]) -> str:
        head = self.toks[stmt.head[0]:stmt.head[1]]
        parts, cur = [[]], 0
        for t in head:
            if t.text == ";":
                parts.append([])
                cur += 1
            else:
                parts[cur].append(t)
        if len(parts) != 3:
            raise Ineligible("for header")
        init, cond, inc = parts
        words = [t.text for t in init]
        if "=" not in words:
            raise Ineligible("for init")
        eq = words.index("=")
        var = words[eq - 1] if eq >= 2 else ""
        if not var or any(w not in INTEGERS for w in words[:eq - 1]):
            raise Ineligible("for init type")
        known = loop_vars | {var}
        self._uniform_expr(init[eq + 1:], known)
        self._uniform_expr(cond, known)
        incs = [t.text for t in inc]
        if incs in (["++", var], [var, "++"], ["--", var], [var, "--"]):
            pass
        elif len(incs) >= 3 and incs[0] == var and incs[1] in ("+=", "-=", "*=", "/=", "<<=", ">>=", "="):
            self._uniform_expr(inc[2:], known)
        else:
            raise Ineligible("for increment")
        body = self.toks[stmt.children[0].first:stmt.children[0].last]
        if modified(body, known):
            raise Ineligible("loop variable assigned in the body")
        return var

    def _uniform_expr(self, toks: list[Tok], known: set[str]) -> None:
        if not toks:
            raise Ineligible("empty expression")
        allowed = known | self.params | self.tparams | self.checker.macros | self.consts
        for i, t in enumerate(toks):
            w = t.text
            if w in ("[", "]", "->", "{", "}", "=", "++", "--", "?", ":") or w in ASSIGN:
                raise Ineligible(f"{w} in a loop header")
            if w == "(" and i > 0 and (toks[i - 1].text[0].isalnum() or toks[i - 1].text[0] == "_") \
                    and toks[i - 1].text not in TYPES:
                raise Ineligible("call in a loop header")
            if w == ".":
                if i == 0 or toks[i - 1].text not in ("blockIdx", "blockDim", "gridDim") or \
                        i + 1 >= len(toks) or toks[i + 1].text not in ("x", "y", "z"):
                    raise Ineligible("member in a loop header")
                continue
            if w[0].isalpha() or w[0] == "_":
                if w in ("blockIdx", "blockDim", "gridDim", "warpSize") or w in TYPES or w in allowed:
                    continue
                if w in ("x", "y", "z") and i > 0 and toks[i - 1].text == ".":
                    continue
                raise Ineligible(f"{w} in a loop header")

    # --- declarations ----------------------------------------------------------------------------

    @staticmethod
    def _dynamic_shared(toks: list[Tok]) -> bool:
        """`extern __shared__ T name[];`: left where it stands, between two stretches."""
        words = [t.text for t in toks]
        return words[:2] in (["extern", "__shared__"], ["__shared__", "extern"]) and \
            words[-3:] == ["[", "]", ";"] and "=" not in words

    def _hoistable(self, toks: list[Tok]) -> bool:
        words = [t.text for t in toks]
        if words[0] in ("__shared__", "extern"):
            if "=" in words or "extern" in words:
                raise Ineligible("initialised or extern __shared__ of a form not handled")
            return True
        if words[0] in ("typedef", "using", "static_assert"):
            return True
        if words[0] == "constexpr" and not self._const_decl(words):
            raise Ineligible("constexpr with an initialiser not known to be constant")
        return words[0] in ("const", "constexpr") and self._const_decl(words)

    def _const_decl(self, words: list[str]) -> bool:
        """`const int N = 4 * T;`: a constant every thread computes alike (hoisted, not per-thread)."""
        if "=" not in words or "," in words:
            return False
        eq = words.index("=")
        if eq < 3 or any(w not in TYPES for w in words[1:eq - 1]):
            return False
        allowed = self.tparams | self.checker.macros | self.consts
        init = words[eq + 1:-1]
        for i, w in enumerate(init):
            if w in ("[", ".", "->", "{", "}") or (w == "(" and i and (init[i - 1][0].isalnum() or init[i - 1][0] == "_")):
                return False
            if (w[0].isalpha() or w[0] == "_") and w not in allowed:
                return False
        self.consts.add(words[eq - 1])
        return True

    def _hoist(self, stmt: Stmt) -> None:
        start, end = self.toks[stmt.first].start, self.toks[stmt.last - 1].end
        self.plan.hoisted.append(" ".join(self.text[start:end].split()))
        self._erase(stmt)

    def _erase(self, stmt: Stmt) -> None:
        start, end = self.toks[stmt.first].start, self.toks[stmt.last - 1].end
        self.plan.edits.append((start, end, re.sub(r"[^\n]", " ", self.text[start:end])))

    def _declare(self, stmt: Stmt, scope: list[str], loop_vars: set[str]) -> None:
        """A top-level declaration of a region: its variables get per-thread copies."""
        if stmt.kind != "simple":
            return
        toks = self.toks[stmt.first:stmt.last - 1]
        words = [t.text for t in toks]
        first = words[0]
        is_decl = first in TYPES or first in ("const", "volatile", "auto", "struct", "class", "enum", "union") or (
            (first[0].isalpha() or first[0] == "_") and len(words) > 1 and (
                words[1][0].isalpha() or words[1][0] == "_" or words[1] in ("<", "::")
                or (words[1] in ("*", "&") and len(words) > 2 and words[2][0].isalpha())))
        if not is_decl:
            if len(words) == 1:
                raise Ineligible("a lone identifier statement (a macro?)")
            return
        i = 0
        spec = []
        while i < len(words) and words[i] in TYPES | {"const"}:
            spec.append(words[i])
            i += 1
        if not spec or all(w == "const" for w in spec):
            raise Ineligible(f"declaration of a type not handled: {' '.join(words[:3])}")
        # declarators: *...* name [= init], separated by top-level commas
        pieces, depth, cur = [], 0, []
        for t in toks[i:]:
            if t.text in "([{":
                depth += 1
            elif t.text in ")]}":
                depth -= 1
            if t.text == "," and depth == 0:
                pieces.append(cur)
                cur = []
            else:
                cur.append(t)
        pieces.append(cur)
        for piece in pieces:
            stars = 0
            while stars < len(piece) and piece[stars].text == "*":
                stars += 1
            if stars >= len(piece):
                raise Ineligible("declarator")
            name = piece[stars].text
            rest = [t.text for t in piece[stars + 1:]]
            if not (name[0].isalpha() or name[0] == "_") or (rest and rest[0] != "=") or (rest and len(rest) == 1):
                raise Ineligible("declarator form")
            if any(w == "<" for w in rest) and len(pieces) > 1:
                raise Ineligible("template-looking initialiser among several declarators")
            if name in self.plan.vars or name in self.params or name in loop_vars or name in self.tparams \
                    or name in self.consts or name in ("threadIdx", "blockIdx", "blockDim", "gridDim"):
                raise Ineligible(f"{name} declared twice")
            base = " ".join(spec)
            storage = base if stars else " ".join(w for w in spec if w != "const")
            self.plan.vars[name] = _Var(name, base + "*" * stars, storage + "*" * stars)
            scope.append(name)

    # --- regions ---------------------------------------------------------------------------------

    def _close(self, region: list[Stmt], scope: list[str], known: int) -> None:
        """Make `region` a loop over the block's threads; `scope[:known]` were declared before it."""
        if not region:
            return
        toks = self.toks[region[0].first:region[-1].last]
        names = {t.text for t in toks}
        for i, t in enumerate(toks):
            if t.text in scope and i > 0 and toks[i - 1].text == "&" and not (
                    i > 1 and operand_end(toks[i - 2].text)):
                raise Ineligible(f"address of {t.text} taken")  # the pointer would outlive the copy
        user_call = any(is_call(toks, i) and t.text not in SAFE_CALLS and t.text not in KEYWORDS
                        and t.text not in TYPES and t.text != "__syncthreads" for i, t in enumerate(toks))
        restore = "".join(f"{self.plan.vars[v].spec} {v} = {v}__emu[emu_t]; " for v in scope[:known] if v in names)
        save = "".join(f"{v}__emu[emu_t] = {v}; " for v in scope if v in names)
        start, end = self.toks[region[0].first].start, self.toks[region[-1].last - 1].end
        opener = ("{ unsigned emu_t = 0; for (unsigned emu_z = 0; emu_z < blockDim.z; ++emu_z) "
                  "for (unsigned emu_y = 0; emu_y < blockDim.y; ++emu_y) "
                  "for (unsigned emu_x = 0; emu_x < blockDim.x; ++emu_x, ++emu_t) { "
                  "const uint3 threadIdx{emu_x, emu_y, emu_z}; "
                  + ("if (done__emu[emu_t]) continue; " if self.plan.returns else "")
                  + ("::threadIdx = threadIdx; " if user_call else "") + restore)
        closer = " " + save + "} }"
        returns = [i for i, t in enumerate(toks) if t.text == "return"]
        if returns:
            # the region in a block of its own, so that the jump past it skips no initialisation
            label = f"emu_next_{self.plan.labels}"
            self.plan.labels += 1
            opener += "{ "
            closer = f" {save}}} {label}: ; }} }}"
            for i in returns:
                a, b = toks[i].start, toks[i + 1].end
                self.plan.edits.append((a, b, f"{{ done__emu[emu_t] = true; goto {label}; }}"
                                        + "\n" * self.text.count("\n", a, b)))
        self.plan.edits.append((start, start, opener))
        self.plan.edits.append((end, end, closer))


def _kernel_body(clean: str, offset: int) -> tuple[int, int, str, str] | None:
    """(open brace, close brace, parameter text, template head) of the kernel defined at `offset`."""
    m = re.compile(r"\(").search(clean, offset)
    if not m:
        return None
    j = brace_close(clean, m.start(), "()")
    if j < 0:
        return None
    k = j + 1
    while k < len(clean) and clean[k].isspace():
        k += 1
    if k >= len(clean) or clean[k] != "{":
        return None
    close = brace_close(clean, k)
    if close < 0:
        return None
    head = clean[max(0, offset - 300):offset]
    head = head[max(head.rfind(";"), head.rfind("}"), head.rfind("{")) + 1:]
    return k, close, clean[m.start() + 1:j], head


def _names(params: str) -> set[str]:
    out = set()
    depth, cur = 0, ""
    for ch in params + ",":
        if ch in "(<[":
            depth += 1
        elif ch in ")>]":
            depth -= 1
        if ch == "," and depth == 0:
            words = re.findall(r"[A-Za-z_]\w*", cur.split("=")[0])
            if words:
                out.add(words[-1])
            cur = ""
        else:
            cur += ch
    return out


def _barriers_gone(clean: str, open_: int, close: int, edits: list[tuple[int, int, str]]) -> bool:
    """Whether the kernel body, once edited, has no barrier left (a last check of the plan)."""
    out, pos = [], open_
    for start, end, new in sorted(edits, key=lambda e: (e[0], e[1])):
        out.append(clean[pos:start])
        out.append(new)
        pos = end
    out.append(clean[pos:close])
    return "__syncthreads" not in "".join(out)


def split_edits(text: str, codemap) -> list[tuple[int, int, str]]:
    """The edits that turn every eligible kernel of `text` into region loops (nothing for the rest)."""
    if "__syncthreads" not in text:
        return []
    clean = blank(text, codemap)
    checker = None
    edits = []
    for kdef in find_kernel_defs(text, codemap):
        line_start = clean.rfind("\n", 0, kdef.offset) + 1
        if codemap.context_at(kdef.offset) is not Ctx.CODE or clean[line_start:kdef.offset].lstrip().startswith("#"):
            continue  # a kernel written inside a macro keeps the fibers
        found = _kernel_body(clean, kdef.offset)
        if not found:
            continue
        open_, close, params, head = found
        if "__syncthreads" not in clean[open_:close]:
            continue
        checker = checker or Checker(clean)
        tparams = set()
        t = re.search(r"\btemplate\s*<(.*)>\s*$", head, re.DOTALL)
        if t:
            tparams = _names(t.group(1))
        try:
            plan = _Kernel(text, clean, checker, open_, close, _names(params), tparams).run()
        except (Ineligible, KeyError, IndexError, ValueError):
            continue
        if not _barriers_gone(clean, open_, close, plan.edits):
            continue  # the plan missed a barrier: never run a block's threads past one
        prelude = (f" if ({MARKER}) return; const uint3 blockIdx = ::blockIdx, blockDim = ::blockDim, "
                   "gridDim = ::gridDim; " + " ".join(plan.hoisted) + " "
                   + "".join(f"{v.storage} {v.name}__emu[::emu::kMaxThreadsPerBlock]; " for v in plan.vars.values())
                   + ("bool done__emu[::emu::kMaxThreadsPerBlock] = {}; " if plan.returns else ""))
        edits.append((open_ + 1, open_ + 1, prelude))
        edits.extend(plan.edits)
    return edits
