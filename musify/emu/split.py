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

That argument holds only for kernels of a shape this module can check from the text alone, so
the check is strict and everything else is left exactly as it was (`plan` raises `_Ineligible`):
every `__syncthreads();` is a statement of the kernel body or of a `for` loop (at any depth of
such loops) whose header reads only parameters never assigned in the kernel, template
parameters, the loop variables of such loops, `blockIdx`/`blockDim`/`gridDim`, numbers and
object-like macros of the file; no `return`, `goto`, `break`/`continue` leaving a region, warp
operation, cooperative group, `__syncthreads_count/and/or`, `__trap`, `assert`, `asm`, `extern
__shared__`, preprocessor conditional, address taken of a variable that crosses a barrier,
member call, or call of a function that is neither a known math/atomic function nor defined in
the file with a body that passes the same checks. Builds with `--racecheck` or `--sanitize`, and
`MUSIFY_EMU_SPLIT=0`, never split (build.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from musify.frontend.launches import find_kernel_defs
from musify.frontend.scanner import Ctx

MARKER = "::emu::split_skip()"


class _Ineligible(Exception):
    pass


_TOKEN = re.compile(r"\s+|[A-Za-z_]\w*|\.?\d[\w.]*(?:[eE][+-]\d+)?\w*|>>=|<<=|->|\+\+|--|&&|\|\||<<|>>|::"
                    r"|[+\-*/%&|^!=<>]=|.", re.DOTALL)
_BANNED = {"return", "goto", "throw", "try", "catch", "asm", "__asm__", "__asm", "__trap", "assert", "static",
           "extern", "__syncthreads_count", "__syncthreads_and", "__syncthreads_or", "__syncwarp", "__activemask",
           "cooperative_groups", "cg", "this_thread_block", "this_grid", "tiled_partition", "coalesced_threads",
           "thread_block", "grid_group", "thread_block_tile", "clock", "clock64", "__globaltimer", "this",
           "__launch_bounds__", "__builtin_FILE", "__builtin_LINE", "setjmp", "longjmp", "alloca"}
_BANNED_PREFIX = ("__shfl", "__ballot", "__any", "__all", "__match", "__reduce", "__uni", "emu_", "__emu")
_TYPES = {"int", "unsigned", "signed", "long", "short", "char", "float", "double", "bool", "size_t", "ptrdiff_t",
          "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t", "uint",
          "float2", "float3", "float4", "double2", "int2", "int3", "int4", "uint2", "uint3", "uint4"}
_INTEGERS = {"int", "unsigned", "signed", "long", "short", "char", "size_t", "ptrdiff_t", "int32_t", "int64_t",
             "uint32_t", "uint64_t", "uint"}
_KEYWORDS = {"if", "else", "for", "while", "do", "switch", "case", "default", "sizeof", "static_cast",
             "reinterpret_cast", "const_cast", "const", "volatile", "true", "false", "nullptr", "break",
             "continue", "__restrict__", "__shared__", "typedef", "using", "static_assert", "constexpr",
             "#pragma", "unroll", "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "x", "y", "z",
             "std"}
# Functions the emulator defines that neither block nor read which thread runs (math, atomics,
# conversions, printf: their order of effects is the threads' order in both paths).
_SAFE_CALL_NAMES = """
sqrtf sqrt rsqrtf rsqrt cbrtf cbrt expf exp exp2f exp2 exp10f expm1f expm1 logf log log2f log2 log10f log10
log1pf log1p powf pow sinf sin cosf cos tanf tan asinf asin acosf acos atanf atan atan2f atan2 sinhf sinh
coshf cosh tanhf tanh erff erf erfcf erfc fabsf fabs abs fminf fmin fmaxf fmax min max fmaf fma floorf floor
ceilf ceil roundf round truncf trunc rintf rint lrintf llrintf lroundf llroundf fmodf fmod remainderf
copysignf copysign hypotf hypot sincosf sincos isnan isinf isfinite signbit ldexpf ldexp frexpf frexp
__expf __logf __log2f __log10f __powf __sinf __cosf __tanf __fdividef fdividef __saturatef __frcp_rn
__fsqrt_rn __fadd_rn __fmul_rn __fmaf_rn __dadd_rn __dmul_rn __fma_rn __float2int_rn __float2int_rz
__float2uint_rn __int2float_rn __uint2float_rn __float_as_int __int_as_float __float_as_uint
__uint_as_float __double_as_longlong __longlong_as_double __popc __popcll __clz __clzll __ffs __ffsll
__brev __mul24 __umul24 __mulhi __umulhi __sad __usad make_float2 make_float3 make_float4 make_int2
make_int3 make_int4 make_uint2 make_uint3 make_uint4 make_double2 atomicAdd atomicSub atomicExch atomicMin
atomicMax atomicInc atomicDec atomicCAS atomicAnd atomicOr atomicXor printf __ldg
"""
_SAFE_CALLS = frozenset(_SAFE_CALL_NAMES.split())


@dataclass
class _Tok:
    text: str
    start: int
    end: int


@dataclass
class _Stmt:
    kind: str  # block, for, if, while, do, switch, simple, empty
    first: int  # token index range [first, last)
    last: int
    children: list[_Stmt] = field(default_factory=list)
    head: tuple[int, int] = (0, 0)  # for/if/while/switch: tokens inside the parentheses


@dataclass
class _Var:
    name: str
    spec: str  # declaration specifiers and stars, as written (const kept): how a region declares it
    storage: str  # the element type of its per-thread copies


def _blank(text: str, codemap) -> str:
    """`text` with comments blanked and literals made `0` (same length, newlines kept)."""
    out = list(text)
    for start, end, ctx in codemap.spans():
        if ctx not in (Ctx.COMMENT, Ctx.STRING, Ctx.CHAR, Ctx.INCLUDE):
            continue
        for i in range(start, end):
            if out[i] != "\n":
                out[i] = " "
        if ctx in (Ctx.STRING, Ctx.CHAR) and end > start:
            out[start] = "0"
    return "".join(out)


def _tokens(clean: str, start: int, end: int) -> list[_Tok]:
    return [_Tok(m.group(), m.start(), m.end()) for m in _TOKEN.finditer(clean, start, end)
            if not m.group().isspace()]


def _matching(toks: list[_Tok]) -> dict[int, int]:
    pairs, stack = {}, []
    for i, t in enumerate(toks):
        if t.text in "([{":
            stack.append(i)
        elif t.text in ")]}":
            if not stack or "([{".index(toks[stack[-1]].text) != ")]}".index(t.text):
                raise _Ineligible("unbalanced")
            pairs[stack.pop()] = i
    if stack:
        raise _Ineligible("unbalanced")
    return pairs


class _Parser:
    def __init__(self, toks: list[_Tok]):
        self.toks = toks
        self.pair = _matching(toks)

    def seq(self, i: int, end: int) -> list[_Stmt]:
        out = []
        while i < end:
            stmt = self.stmt(i, end)
            out.append(stmt)
            i = stmt.last
        return out

    def _paren(self, i: int) -> int:
        if i >= len(self.toks) or self.toks[i].text != "(":
            raise _Ineligible("expected (")
        return self.pair[i]

    def stmt(self, i: int, end: int) -> _Stmt:
        t = self.toks[i].text
        if t == "{":
            close = self.pair[i]
            return _Stmt("block", i, close + 1, self.seq(i + 1, close))
        if t == ";":
            return _Stmt("empty", i, i + 1)
        if t in ("for", "while", "switch", "if"):
            close = self._paren(i + 1)
            body = self.stmt(close + 1, end)
            children, last = [body], body.last
            if t == "if" and last < end and self.toks[last].text == "else":
                other = self.stmt(last + 1, end)
                children.append(other)
                last = other.last
            return _Stmt(t, i, last, children, (i + 2, close))
        if t == "do":
            body = self.stmt(i + 1, end)
            j = body.last
            if j >= end or self.toks[j].text != "while":
                raise _Ineligible("do without while")
            close = self._paren(j + 1)
            if close + 1 >= end or self.toks[close + 1].text != ";":
                raise _Ineligible("do ... while without ;")
            return _Stmt("do", i, close + 2, [body], (j + 2, close))
        if t in ("else", "case", "default", "}", ")", "]"):
            raise _Ineligible(f"unexpected {t}")
        j = i
        while j < end and self.toks[j].text != ";":
            j = self.pair.get(j, j) + 1
        if j >= end:
            raise _Ineligible("statement without ;")
        return _Stmt("simple", i, j + 1)


def _file_macros(clean: str) -> set[str]:
    """Object-like macros of the file whose value is a constant expression of numbers (and such macros)."""
    found = {}
    for m in re.finditer(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)[ \t]+([^\n]*)$", clean, re.MULTILINE):
        found[m.group(1)] = m.group(2)
    good: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, value in found.items():
            if name in good:
                continue
            words = re.findall(r"[A-Za-z_]\w*", value)
            if re.fullmatch(r"[\w\s+\-*/%()<>&|^~.]*", value) and value.strip() and \
                    all(w in good or re.fullmatch(r"[uUlLfF]+", w) for w in words):
                good.add(name)
                changed = True
    # namespace-scope integer constants: `constexpr int SEGMENT = 1024;`
    for m in re.finditer(r"^[ \t]*(?:static[ \t]+)?(?:constexpr|const)[ \t]+(?:(?:unsigned|int|long|size_t)[ \t]+)+"
                         r"([A-Za-z_]\w*)[ \t]*=[ \t]*([\w \t+\-*/%()<>]*);", clean, re.MULTILINE):
        words = re.findall(r"[A-Za-z_]\w*", m.group(2))
        if all(w in good or re.fullmatch(r"[uUlL]+", w) for w in words) and \
                clean.count("{", 0, m.start()) == clean.count("}", 0, m.start()):
            good.add(m.group(1))
    return good


def _functions(clean: str) -> dict[str, list[tuple[int, int]]]:
    """Name -> body spans of the functions (and function-like macros) the file defines."""
    out: dict[str, list[tuple[int, int]]] = {}
    for m in re.finditer(r"\b([A-Za-z_]\w*)\s*\(", clean):
        depth, j = 0, m.end() - 1
        while j < len(clean):
            if clean[j] == "(":
                depth += 1
            elif clean[j] == ")":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        k = j + 1
        while k < len(clean) and (clean[k].isspace() or clean[k].isalnum() or clean[k] == "_"):
            k += 1  # const, noexcept, __restrict__ between ) and {
        if k < len(clean) and clean[k] == "{":
            close = _brace_close(clean, k)
            if close > 0:
                out.setdefault(m.group(1), []).append((k, close))
    for m in re.finditer(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)\(([^)\n]*)\)([^\n]*)$", clean, re.MULTILINE):
        out.setdefault(m.group(1), []).append((m.start(3), m.end(3)))
    return out


def _brace_close(clean: str, open_: int) -> int:
    depth = 0
    for j in range(open_, len(clean)):
        if clean[j] == "{":
            depth += 1
        elif clean[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    return -1


def _is_call(toks: list[_Tok], i: int) -> bool:
    return i + 1 < len(toks) and toks[i + 1].text == "(" and (toks[i].text[0].isalpha() or toks[i].text[0] == "_")


def _template_call(toks: list[_Tok], i: int) -> bool:
    """`name<...>(`: a call with template arguments (or an expression that reads like one)."""
    if i + 1 >= len(toks) or toks[i + 1].text != "<" or not (toks[i].text[0].isalpha() or toks[i].text[0] == "_"):
        return False
    depth = 0
    for j in range(i + 2, len(toks)):
        w = toks[j].text
        if w in ("(", "["):
            depth += 1
        elif w in (")", "]"):
            depth -= 1
        elif w in (";", "{", "}") or depth < 0:
            return False
        elif w in (">", ">>") and depth == 0:
            return j + 1 < len(toks) and toks[j + 1].text == "("
    return False


class _Checker:
    """The file-wide facts the checks need: macros, functions defined in the file, their verdicts."""

    def __init__(self, clean: str):
        self.clean = clean
        self.macros = _file_macros(clean)
        self.functions = _functions(clean)
        self.verdict: dict[str, bool] = {}
        # the file's own types: their constructors, operators and members are not inspected
        self.types = set(re.findall(r"\b(?:struct|class|union)\s+([A-Za-z_]\w*)", clean))

    def words_ok(self, toks: list[_Tok], helper: bool = False) -> None:
        """No banned word, and every call names a safe or checked function (`helper`: the body of
        a function the kernel calls, where `return` ends the call only)."""
        for i, t in enumerate(toks):
            w = t.text
            if helper and w == "return":
                continue
            if w in _BANNED or w.startswith(_BANNED_PREFIX) or w.endswith("__emu") or w in self.types:
                raise _Ineligible(f"uses {w}")
            if _template_call(toks, i) and w not in _KEYWORDS and w not in _SAFE_CALLS and not self.function_ok(w):
                raise _Ineligible(f"calls template {w}")
            if w == "__syncthreads" and not (i + 3 < len(toks) and toks[i + 1].text == "("
                                             and toks[i + 2].text == ")" and toks[i + 3].text == ";"):
                raise _Ineligible("__syncthreads used in an expression")
            if not _is_call(toks, i) or w in _KEYWORDS or w in _TYPES or w == "__syncthreads":
                continue
            if i > 0 and toks[i - 1].text in (".", "->"):
                raise _Ineligible(f"member call {w}")
            if i > 0 and toks[i - 1].text == "::" and not (i > 1 and toks[i - 2].text == "std"):
                raise _Ineligible(f"qualified call {w}")
            if w in _SAFE_CALLS:
                continue
            if not self.function_ok(w):
                raise _Ineligible(f"calls {w}")

    def function_ok(self, name: str) -> bool:
        if name in self.verdict:
            return self.verdict[name]
        spans = self.functions.get(name)
        if not spans:
            return False
        self.verdict[name] = False  # recursion: not proven
        try:
            for start, end in spans:
                toks = _tokens(self.clean, start, end)
                if any(t.text == "__syncthreads" for t in toks):
                    raise _Ineligible(f"{name} has a barrier")
                self.words_ok(toks, helper=True)
        except _Ineligible:
            return False
        self.verdict[name] = True
        return True


_ASSIGN = {"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=", "++", "--"}


def _operand_end(tok: str) -> bool:
    return tok[0].isalnum() or tok[0] in "_)]."


def _modified(toks: list[_Tok], names: set[str], skip: range = range(0)) -> set[str]:
    """Names among `names` assigned, incremented, address-taken or member-accessed in `toks`."""
    out = set()
    for i, t in enumerate(toks):
        if t.text not in names or i in skip:
            continue
        if i > 0 and toks[i - 1].text in (".", "->", "::"):
            continue  # a member or a qualified name that happens to be spelled the same
        nxt = toks[i + 1].text if i + 1 < len(toks) else ""
        prev = toks[i - 1].text if i > 0 else ""
        if nxt in _ASSIGN or nxt in (".", "->") or prev in ("++", "--") or (prev == "&" and not (
                i > 1 and _operand_end(toks[i - 2].text))):
            out.add(t.text)
    return out


@dataclass
class _Plan:
    edits: list[tuple[int, int, str]] = field(default_factory=list)  # (start, end, text)
    hoisted: list[str] = field(default_factory=list)
    vars: dict[str, _Var] = field(default_factory=dict)
    calls_user: bool = False


class _Kernel:
    def __init__(self, text: str, clean: str, checker: _Checker, open_: int, close: int, params: set[str],
                 tparams: set[str]):
        self.text, self.clean, self.checker = text, clean, checker
        self.toks = _tokens(clean, open_ + 1, close)
        self.parser = _Parser(self.toks)
        self.params, self.tparams = params, tparams
        self.plan = _Plan()
        self.consts: set[str] = set()
        self.open = open_

    def run(self) -> _Plan:
        self._directives()
        self.checker.words_ok(self.toks)
        self._arrays()
        if _modified(self.toks, self.params):
            raise _Ineligible("a parameter is assigned")
        stmts = self.parser.seq(0, len(self.toks))
        self._sequence(stmts, loop_vars=set(), scope=[])
        return self.plan

    def _directives(self) -> None:
        body = self.clean[self.open:self.toks[-1].end if self.toks else self.open]
        for line in re.findall(r"^[ \t]*#([^\n]*)", body, re.MULTILINE):
            if not re.fullmatch(r"\s*pragma\s+unroll\b[\w\s()]*", line):
                raise _Ineligible("preprocessor directive in the kernel")
        self.toks = [t for t in self.toks if not self._in_directive(t)]
        self.parser = _Parser(self.toks)

    def _in_directive(self, tok: _Tok) -> bool:
        line_start = self.clean.rfind("\n", 0, tok.start) + 1
        return self.clean[line_start:tok.end].lstrip().startswith("#")

    def _arrays(self) -> None:
        """Fibers have 64 KiB stacks, a region loop the OS thread's: big local arrays would overflow
        in one and not the other, so kernels with local arrays over 4 KiB keep the fibers."""
        for m in re.finditer(r"\b(?!(?:else|do|case|sizeof)\b)[A-Za-z_]\w*\s*\**\s*\b[A-Za-z_]\w*\s*((?:\[[^\]\[]*\]\s*)+)[;=,]",
                             self.clean[self.open:self.toks[-1].end if self.toks else self.open]):
            head = self.clean[self.open:self.open + m.start()]
            statement = head[max(head.rfind(";"), head.rfind("{"), head.rfind("}")) + 1:]
            if "__shared__" in statement:
                continue
            size = 8
            for dim in re.findall(r"\[([^\]]*)\]", m.group(1)):
                size *= int(dim) if dim.strip().isdigit() else 1 << 20
            if size > 4096:
                raise _Ineligible("large local array")

    # --- structure -------------------------------------------------------------------------------

    def _has_barrier(self, stmt: _Stmt) -> bool:
        return any(t.text == "__syncthreads" for t in self.toks[stmt.first:stmt.last])

    def _sequence(self, stmts: list[_Stmt], loop_vars: set[str], scope: list[str]) -> None:
        scope = list(scope)
        region: list[_Stmt] = []
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
                    raise _Ineligible("a barrier inside a statement other than a for loop")
            elif self._hoistable(toks):
                self._hoist(stmt)  # no run-time effect: where it stands in the region does not matter
            else:
                self._jumps_ok(stmt, in_loop=False, in_switch=False)
                self._declare(stmt, scope, loop_vars)
                region.append(stmt)
        self._close(region, scope, known)

    def _jumps_ok(self, stmt: _Stmt, in_loop: bool, in_switch: bool) -> None:
        if stmt.kind in ("for", "while", "do"):
            in_loop = True
        if stmt.kind == "switch":
            in_switch = True
        if stmt.kind == "simple" or stmt.kind in ("for", "while", "do", "if", "switch"):
            own = self.toks[stmt.first:stmt.last] if stmt.kind == "simple" else \
                self.toks[stmt.head[0]:stmt.head[1]]
            for t in own:
                if (t.text == "break" and not (in_loop or in_switch)) or (t.text == "continue" and not in_loop):
                    raise _Ineligible("break or continue leaves a region")
        for child in stmt.children:
            self._jumps_ok(child, in_loop, in_switch)

    def _uniform_for(self, stmt: _Stmt, loop_vars: set[str]) -> str:
        head = self.toks[stmt.head[0]:stmt.head[1]]
        parts, cur = [[]], 0
        for t in head:
            if t.text == ";":
                parts.append([])
                cur += 1
            else:
                parts[cur].append(t)
        if len(parts) != 3:
            raise _Ineligible("for header")
        init, cond, inc = parts
        words = [t.text for t in init]
        if "=" not in words:
            raise _Ineligible("for init")
        eq = words.index("=")
        var = words[eq - 1] if eq >= 2 else ""
        if not var or any(w not in _INTEGERS for w in words[:eq - 1]):
            raise _Ineligible("for init type")
        known = loop_vars | {var}
        self._uniform_expr(init[eq + 1:], known)
        self._uniform_expr(cond, known)
        incs = [t.text for t in inc]
        if incs in (["++", var], [var, "++"], ["--", var], [var, "--"]):
            pass
        elif len(incs) >= 3 and incs[0] == var and incs[1] in ("+=", "-=", "*=", "/=", "<<=", ">>=", "="):
            self._uniform_expr(inc[2:], known)
        else:
            raise _Ineligible("for increment")
        body = self.toks[stmt.children[0].first:stmt.children[0].last]
        if _modified(body, known):
            raise _Ineligible("loop variable assigned in the body")
        return var

    def _uniform_expr(self, toks: list[_Tok], known: set[str]) -> None:
        if not toks:
            raise _Ineligible("empty expression")
        allowed = known | self.params | self.tparams | self.checker.macros | self.consts
        for i, t in enumerate(toks):
            w = t.text
            if w in ("[", "]", "->", "{", "}", "=", "++", "--", "?", ":") or w in _ASSIGN:
                raise _Ineligible(f"{w} in a loop header")
            if w == "(" and i > 0 and (toks[i - 1].text[0].isalnum() or toks[i - 1].text[0] == "_") \
                    and toks[i - 1].text not in _TYPES:
                raise _Ineligible("call in a loop header")
            if w == ".":
                if i == 0 or toks[i - 1].text not in ("blockIdx", "blockDim", "gridDim") or \
                        i + 1 >= len(toks) or toks[i + 1].text not in ("x", "y", "z"):
                    raise _Ineligible("member in a loop header")
                continue
            if w[0].isalpha() or w[0] == "_":
                if w in ("blockIdx", "blockDim", "gridDim", "warpSize") or w in _TYPES or w in allowed:
                    continue
                if w in ("x", "y", "z") and i > 0 and toks[i - 1].text == ".":
                    continue
                raise _Ineligible(f"{w} in a loop header")

    # --- declarations ----------------------------------------------------------------------------

    def _hoistable(self, toks: list[_Tok]) -> bool:
        words = [t.text for t in toks]
        if words[0] == "__shared__":
            if "=" in words or "extern" in words:
                raise _Ineligible("initialised or extern __shared__")
            return True
        if words[0] in ("typedef", "using", "static_assert"):
            return True
        if words[0] == "constexpr" and not self._const_decl(words):
            raise _Ineligible("constexpr with an initialiser not known to be constant")
        return words[0] in ("const", "constexpr") and self._const_decl(words)

    def _const_decl(self, words: list[str]) -> bool:
        """`const int N = 4 * T;`: a constant every thread computes alike (hoisted, not per-thread)."""
        if "=" not in words or "," in words:
            return False
        eq = words.index("=")
        if eq < 3 or any(w not in _TYPES for w in words[1:eq - 1]):
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

    def _hoist(self, stmt: _Stmt) -> None:
        start, end = self.toks[stmt.first].start, self.toks[stmt.last - 1].end
        self.plan.hoisted.append(" ".join(self.text[start:end].split()))
        self._erase(stmt)

    def _erase(self, stmt: _Stmt) -> None:
        start, end = self.toks[stmt.first].start, self.toks[stmt.last - 1].end
        self.plan.edits.append((start, end, re.sub(r"[^\n]", " ", self.text[start:end])))

    def _declare(self, stmt: _Stmt, scope: list[str], loop_vars: set[str]) -> None:
        """A top-level declaration of a region: its variables get per-thread copies."""
        if stmt.kind != "simple":
            return
        toks = self.toks[stmt.first:stmt.last - 1]
        words = [t.text for t in toks]
        first = words[0]
        is_decl = first in _TYPES or first in ("const", "volatile", "auto", "struct", "class", "enum", "union") or (
            (first[0].isalpha() or first[0] == "_") and len(words) > 1 and (
                words[1][0].isalpha() or words[1][0] == "_" or words[1] in ("<", "::")
                or (words[1] in ("*", "&") and len(words) > 2 and words[2][0].isalpha())))
        if not is_decl:
            if len(words) == 1:
                raise _Ineligible("a lone identifier statement (a macro?)")
            return
        i = 0
        spec = []
        while i < len(words) and words[i] in _TYPES | {"const"}:
            spec.append(words[i])
            i += 1
        if not spec or all(w == "const" for w in spec):
            raise _Ineligible(f"declaration of a type not handled: {' '.join(words[:3])}")
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
                raise _Ineligible("declarator")
            name = piece[stars].text
            rest = [t.text for t in piece[stars + 1:]]
            if not (name[0].isalpha() or name[0] == "_") or (rest and rest[0] != "=") or (rest and len(rest) == 1):
                raise _Ineligible("declarator form")
            if any(w == "<" for w in rest) and len(pieces) > 1:
                raise _Ineligible("template-looking initialiser among several declarators")
            if name in self.plan.vars or name in self.params or name in loop_vars or name in self.tparams \
                    or name in self.consts or name in ("threadIdx", "blockIdx", "blockDim", "gridDim"):
                raise _Ineligible(f"{name} declared twice")
            base = " ".join(spec)
            storage = base if stars else " ".join(w for w in spec if w != "const")
            self.plan.vars[name] = _Var(name, base + "*" * stars, storage + "*" * stars)
            scope.append(name)

    # --- regions ---------------------------------------------------------------------------------

    def _close(self, region: list[_Stmt], scope: list[str], known: int) -> None:
        """Make `region` a loop over the block's threads; `scope[:known]` were declared before it."""
        if not region:
            return
        toks = self.toks[region[0].first:region[-1].last]
        names = {t.text for t in toks}
        for i, t in enumerate(toks):
            if t.text in scope and i > 0 and toks[i - 1].text == "&" and not (
                    i > 1 and _operand_end(toks[i - 2].text)):
                raise _Ineligible(f"address of {t.text} taken")  # the pointer would outlive the copy
        user_call = any(_is_call(toks, i) and t.text not in _SAFE_CALLS and t.text not in _KEYWORDS
                        and t.text not in _TYPES and t.text != "__syncthreads" for i, t in enumerate(toks))
        restore = "".join(f"{self.plan.vars[v].spec} {v} = {v}__emu[emu_t]; " for v in scope[:known] if v in names)
        save = "".join(f"{v}__emu[emu_t] = {v}; " for v in scope if v in names)
        start, end = self.toks[region[0].first].start, self.toks[region[-1].last - 1].end
        opener = ("{ unsigned emu_t = 0; for (unsigned emu_z = 0; emu_z < blockDim.z; ++emu_z) "
                  "for (unsigned emu_y = 0; emu_y < blockDim.y; ++emu_y) "
                  "for (unsigned emu_x = 0; emu_x < blockDim.x; ++emu_x, ++emu_t) { "
                  "const uint3 threadIdx{emu_x, emu_y, emu_z}; "
                  + ("::threadIdx = threadIdx; " if user_call else "") + restore)
        self.plan.edits.append((start, start, opener))
        self.plan.edits.append((end, end, " " + save + "} }"))


def _kernel_body(clean: str, offset: int) -> tuple[int, int, str, str] | None:
    """(open brace, close brace, parameter text, template head) of the kernel defined at `offset`."""
    m = re.compile(r"\(").search(clean, offset)
    if not m:
        return None
    depth, j = 0, m.start()
    while j < len(clean):
        if clean[j] == "(":
            depth += 1
        elif clean[j] == ")":
            depth -= 1
            if depth == 0:
                break
        j += 1
    k = j + 1
    while k < len(clean) and clean[k].isspace():
        k += 1
    if k >= len(clean) or clean[k] != "{":
        return None
    close = _brace_close(clean, k)
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


def split_edits(text: str, codemap) -> list[tuple[int, int, str]]:
    """The edits that turn every eligible kernel of `text` into region loops (nothing for the rest)."""
    if "__syncthreads" not in text:
        return []
    clean = _blank(text, codemap)
    checker = None
    edits = []
    for kdef in find_kernel_defs(text, codemap):
        found = _kernel_body(clean, kdef.offset)
        if not found:
            continue
        open_, close, params, head = found
        if "__syncthreads" not in clean[open_:close]:
            continue
        checker = checker or _Checker(clean)
        tparams = set()
        t = re.search(r"\btemplate\s*<(.*)>\s*$", head, re.DOTALL)
        if t:
            tparams = _names(t.group(1))
        try:
            plan = _Kernel(text, clean, checker, open_, close, _names(params), tparams).run()
        except (_Ineligible, KeyError, IndexError, ValueError):
            continue
        prelude = (f" if ({MARKER}) return; const uint3 blockIdx = ::blockIdx, blockDim = ::blockDim, "
                   "gridDim = ::gridDim; " + " ".join(plan.hoisted) + " "
                   + "".join(f"{v.storage} {v.name}__emu[::emu::kMaxThreadsPerBlock]; " for v in plan.vars.values()))
        edits.append((open_ + 1, open_ + 1, prelude))
        edits.extend(plan.edits)
    return edits
