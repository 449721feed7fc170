"""The syntax side of the region split (split.py): a tokenizer over code with comments and
literals blanked, a statement parser for kernel bodies, and the file-wide checks (banned words,
calls only of known-safe functions or of the file's own functions that pass the same checks).
Everything here errs on the side of `Ineligible`: a kernel it cannot read keeps the fibers."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from musify.frontend.scanner import Ctx


class Ineligible(Exception):
    pass


_TOKEN = re.compile(r"\s+|[A-Za-z_]\w*|\.?\d[\w.]*(?:[eE][+-]\d+)?\w*|>>=|<<=|->|\+\+|--|&&|\|\||<<|>>|::"
                    r"|[+\-*/%&|^!=<>]=|.", re.DOTALL)
_BANNED = {"return", "goto", "throw", "try", "catch", "asm", "__asm__", "__asm", "__trap", "assert", "static",
           "__syncthreads_count", "__syncthreads_and", "__syncthreads_or", "__syncwarp", "__activemask",
           "cooperative_groups", "cg", "this_thread_block", "this_grid", "tiled_partition", "coalesced_threads",
           "thread_block", "grid_group", "thread_block_tile", "clock", "clock64", "__globaltimer", "this",
           "__launch_bounds__", "__builtin_FILE", "__builtin_LINE", "setjmp", "longjmp", "alloca"}
_BANNED_PREFIX = ("__shfl", "__ballot", "__any", "__all", "__match", "__reduce", "__uni", "emu_", "__emu")
TYPES = {"int", "unsigned", "signed", "long", "short", "char", "float", "double", "bool", "size_t", "ptrdiff_t",
          "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t", "uint",
          "float2", "float3", "float4", "double2", "int2", "int3", "int4", "uint2", "uint3", "uint4"}
INTEGERS = {"int", "unsigned", "signed", "long", "short", "char", "size_t", "ptrdiff_t", "int32_t", "int64_t",
             "uint32_t", "uint64_t", "uint"}
KEYWORDS = {"if", "else", "for", "while", "do", "switch", "case", "default", "sizeof", "static_cast",
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
SAFE_CALLS = frozenset(_SAFE_CALL_NAMES.split())


@dataclass
class Tok:
    text: str
    start: int
    end: int


@dataclass
class Stmt:
    kind: str  # block, for, if, while, do, switch, simple, empty
    first: int  # token index range [first, last)
    last: int
    children: list[Stmt] = field(default_factory=list)
    head: tuple[int, int] = (0, 0)  # for/if/while/switch: tokens inside the parentheses


def blank(text: str, codemap) -> str:
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


def tokens(clean: str, start: int, end: int) -> list[Tok]:
    return [Tok(m.group(), m.start(), m.end()) for m in _TOKEN.finditer(clean, start, end)
            if not m.group().isspace()]


def _matching(toks: list[Tok]) -> dict[int, int]:
    pairs, stack = {}, []
    for i, t in enumerate(toks):
        if t.text in "([{":
            stack.append(i)
        elif t.text in ")]}":
            if not stack or "([{".index(toks[stack[-1]].text) != ")]}".index(t.text):
                raise Ineligible("unbalanced")
            pairs[stack.pop()] = i
    if stack:
        raise Ineligible("unbalanced")
    return pairs


class Parser:
    def __init__(self, toks: list[Tok]):
        self.toks = toks
        self.pair = _matching(toks)

    def seq(self, i: int, end: int) -> list[Stmt]:
        out = []
        while i < end:
            stmt = self.stmt(i, end)
            out.append(stmt)
            i = stmt.last
        return out

    def _paren(self, i: int) -> int:
        if i >= len(self.toks) or self.toks[i].text != "(":
            raise Ineligible("expected (")
        return self.pair[i]

    def stmt(self, i: int, end: int) -> Stmt:
        t = self.toks[i].text
        if t == "{":
            close = self.pair[i]
            return Stmt("block", i, close + 1, self.seq(i + 1, close))
        if t == ";":
            return Stmt("empty", i, i + 1)
        if t in ("for", "while", "switch", "if"):
            close = self._paren(i + 1)
            body = self.stmt(close + 1, end)
            children, last = [body], body.last
            if t == "if" and last < end and self.toks[last].text == "else":
                other = self.stmt(last + 1, end)
                children.append(other)
                last = other.last
            return Stmt(t, i, last, children, (i + 2, close))
        if t == "do":
            body = self.stmt(i + 1, end)
            j = body.last
            if j >= end or self.toks[j].text != "while":
                raise Ineligible("do without while")
            close = self._paren(j + 1)
            if close + 1 >= end or self.toks[close + 1].text != ";":
                raise Ineligible("do ... while without ;")
            return Stmt("do", i, close + 2, [body], (j + 2, close))
        if t in ("else", "case", "default", "}", ")", "]"):
            raise Ineligible(f"unexpected {t}")
        j = i
        while j < end and self.toks[j].text != ";":
            j = self.pair.get(j, j) + 1
        if j >= end:
            raise Ineligible("statement without ;")
        return Stmt("simple", i, j + 1)


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
        j = brace_close(clean, m.end() - 1, "()")
        if j < 0:
            continue
        k = j + 1
        while k < len(clean) and (clean[k].isspace() or clean[k].isalnum() or clean[k] == "_"):
            k += 1  # const, noexcept, __restrict__ between ) and {
        if k < len(clean) and clean[k] == "{":
            close = brace_close(clean, k)
            if close > 0:
                out.setdefault(m.group(1), []).append((k, close))
    for m in re.finditer(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)\(([^)\n]*)\)([^\n]*)$", clean, re.MULTILINE):
        out.setdefault(m.group(1), []).append((m.start(3), m.end(3)))
    return out


def brace_close(clean: str, open_: int, pair: str = "{}") -> int:
    """The offset of the bracket that closes the one at `open_` (`pair`: its two characters), or -1."""
    depth = 0
    for j in range(open_, len(clean)):
        if clean[j] == pair[0]:
            depth += 1
        elif clean[j] == pair[1]:
            depth -= 1
            if depth == 0:
                return j
    return -1


def is_call(toks: list[Tok], i: int) -> bool:
    return i + 1 < len(toks) and toks[i + 1].text == "(" and (toks[i].text[0].isalpha() or toks[i].text[0] == "_")


def _template_call(toks: list[Tok], i: int) -> bool:
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


class Checker:
    """The file-wide facts the checks need: macros, functions defined in the file, their verdicts."""

    def __init__(self, clean: str):
        self.clean = clean
        self.macros = _file_macros(clean)
        self.functions = _functions(clean)
        self.verdict: dict[str, bool] = {}
        # the file's own types: their constructors, operators and members are not inspected
        self.types = set(re.findall(r"\b(?:struct|class|union)\s+([A-Za-z_]\w*)", clean))

    def words_ok(self, toks: list[Tok], returns: bool = False) -> None:
        """No banned word, and every call names a safe or checked function (`returns`: `return` is
        allowed, in the body of a function the kernel calls or where the caller handles it)."""
        for i, t in enumerate(toks):
            w = t.text
            if returns and w == "return":
                continue
            if w in _BANNED or w.startswith(_BANNED_PREFIX) or w.endswith("__emu") or w in self.types:
                raise Ineligible(f"uses {w}")
            if _template_call(toks, i) and w not in KEYWORDS and w not in SAFE_CALLS and not self.function_ok(w):
                raise Ineligible(f"calls template {w}")
            if w == "__syncthreads" and not (i + 3 < len(toks) and toks[i + 1].text == "("
                                             and toks[i + 2].text == ")" and toks[i + 3].text == ";"):
                raise Ineligible("__syncthreads used in an expression")
            if not is_call(toks, i) or w in KEYWORDS or w in TYPES or w == "__syncthreads":
                continue
            if i > 0 and toks[i - 1].text in (".", "->"):
                raise Ineligible(f"member call {w}")
            if i > 0 and toks[i - 1].text == "::" and not (i > 1 and toks[i - 2].text == "std"):
                raise Ineligible(f"qualified call {w}")
            if w in SAFE_CALLS:
                continue
            if not self.function_ok(w):
                raise Ineligible(f"calls {w}")

    def function_ok(self, name: str) -> bool:
        if name in self.verdict:
            return self.verdict[name]
        spans = self.functions.get(name)
        if not spans:
            return False
        self.verdict[name] = False  # recursion: not proven
        try:
            for start, end in spans:
                toks = tokens(self.clean, start, end)
                if any(t.text == "__syncthreads" for t in toks):
                    raise Ineligible(f"{name} has a barrier")
                self.words_ok(toks, returns=True)
        except Ineligible:
            return False
        self.verdict[name] = True
        return True


ASSIGN = {"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=", "++", "--"}


def operand_end(tok: str) -> bool:
    return tok[0].isalnum() or tok[0] in "_)]."


def modified(toks: list[Tok], names: set[str], skip: range = range(0)) -> set[str]:
    """Names among `names` assigned, incremented, address-taken or member-accessed in `toks`."""
    out = set()
    for i, t in enumerate(toks):
        if t.text not in names or i in skip:
            continue
        if i > 0 and toks[i - 1].text in (".", "->", "::"):
            continue  # a member or a qualified name that happens to be spelled the same
        nxt = toks[i + 1].text if i + 1 < len(toks) else ""
        prev = toks[i - 1].text if i > 0 else ""
        if nxt in ASSIGN or nxt in (".", "->") or prev in ("++", "--") or (prev == "&" and not (
                i > 1 and operand_end(toks[i - 2].text))):
            out.add(t.text)
    return out
