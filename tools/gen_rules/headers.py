"""A tolerant scanner of C/C++ declarations in header text.

The rule generator needs the *names* a header declares, not a faithful parse: every function,
typedef, struct/union/class tag, enum and enumerator, variable, namespace and `#define` macro.
The vendor headers are full of attribute macros (`__host__ __cudart_builtin__ CUDARTAPI`),
`#if` branches and C++ templates, so instead of preprocessing we read every branch at once and
classify statements by their shape.  Names that a shape-based reader gets wrong are rare, and
the generator's tests compare the output against independent catalogues, so a miss shows up.

Public entry points: `scan_text` (one header's text), `scan_files` (several files, with the
function-like macros of all of them known, so `__dv(0)`-style attribute calls are not mistaken
for functions) and `find_includes`.  Other generator modules (the library emitters) reuse them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

KIND_FUNCTION = "function"
KIND_TYPE = "type"
KIND_ENUM = "enum"
KIND_ENUMERATOR = "enumerator"
KIND_MACRO = "macro"
KIND_VARIABLE = "variable"
KIND_NAMESPACE = "namespace"


@dataclass(frozen=True, slots=True)
class Decl:
    """One declared name. `scope` is the enclosing namespace path (`nvcuda::wmma`), or ''."""

    name: str
    kind: str
    header: str
    line: int
    scope: str = ""
    parent: str = ""  # the enum an enumerator belongs to
    value: str = ""  # a macro's replacement text


@dataclass
class MacroInfo:
    name: str
    function_like: bool
    body: str
    line: int
    guard: bool = False


# Words that look like calls but are attributes or operators, never the declared name.
ATTRIBUTE_CALLS = frozenset({
    "__attribute__", "__declspec", "__align__", "__builtin_align__", "alignas", "alignof",
    "decltype", "sizeof", "__launch_bounds__", "noexcept", "throw", "static_assert",
    "__deprecated__", "deprecated", "_Pragma", "__pragma", "typeof", "__typeof__",
    "__nv_register_params__", "__asm__", "asm",
})
KEYWORDS = frozenset({
    "const", "volatile", "static", "extern", "inline", "__inline__", "__inline", "__forceinline",
    "unsigned", "signed", "int", "char", "short", "long", "float", "double", "void", "bool",
    "struct", "union", "enum", "class", "typedef", "template", "typename", "return", "if",
    "else", "for", "while", "do", "switch", "case", "default", "break", "continue", "operator",
    "public", "private", "protected", "virtual", "friend", "using", "namespace", "constexpr",
    "explicit", "mutable", "register", "restrict", "__restrict__", "auto", "this", "new",
    "delete", "true", "false", "nullptr", "goto", "size_t", "final", "override",
})
TAG_KEYWORDS = frozenset({"struct", "union", "class", "enum"})

_TOKEN = re.compile(
    r'(?P<id>[A-Za-z_]\w*)|(?P<num>\.?\d[\w.]*)|(?P<str>"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\')'
    r"|(?P<nl>\n)|(?P<op>::|->|[^\sA-Za-z_\d])"
)
_DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*(\w+)(.*)$")
_DEFINE = re.compile(r"([A-Za-z_]\w*)(\()?(.*)", re.DOTALL)
_GUARD_NAME = re.compile(r"^_*[A-Za-z0-9_]*_(H|HPP|H_INCLUDED)_*$|^_*[A-Z0-9_]*_H_+[A-Z0-9_]*$")


def strip_comments(text: str) -> str:
    """Blank out comments (keeping newlines, so line numbers survive) and join `\\` lines."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "/" and i + 1 < n and text[i + 1] == "*":
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
        elif c == "/" and i + 1 < n and text[i + 1] == "/":
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append(" " * (end - i))
            i = end
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(c)
            i += 1
    joined = "".join(out)
    # a continuation keeps its newline after the logical line so that lines do not shift
    return re.sub(r"\\\n((?:.*\\\n)*.*)", lambda m: " " + m.group(1).replace("\\\n", " ") + "\n"
                  * (m.group(0).count("\n")), joined)


def split_directives(text: str) -> tuple[str, list[tuple[int, str, str]]]:
    """Return the text with directive lines blanked, and the directives as (line, name, rest)."""
    lines = text.split("\n")
    directives = []
    for number, line in enumerate(lines, 1):
        m = _DIRECTIVE.match(line)
        if m:
            directives.append((number, m.group(1), m.group(2).strip()))
            lines[number - 1] = ""
    return "\n".join(lines), directives


def scan_macros(directives: list[tuple[int, str, str]]) -> list[MacroInfo]:
    """`#define`s, with include guards marked (`#ifndef X` / `#if !defined(X)` then `#define X`)."""
    macros = []
    guarded: str | None = None
    for number, name, rest in directives:
        if name == "ifndef":
            guarded = rest.split()[0] if rest.split() else None
            continue
        if name == "if":
            m = re.fullmatch(r"!\s*defined\s*\(?\s*(\w+)\s*\)?", rest)
            guarded = m.group(1) if m else None
            continue
        if name != "define":
            guarded = None
            continue
        m = _DEFINE.match(rest)
        if not m:
            continue
        macro = MacroInfo(m.group(1), bool(m.group(2)), m.group(3).strip(), number)
        macro.guard = not macro.function_like and not macro.body and (
            macro.name == guarded or bool(_GUARD_NAME.match(macro.name)))
        macros.append(macro)
        guarded = None
    return macros


@dataclass
class _Tok:
    text: str
    line: int
    kind: str


def tokenize(code: str) -> list[_Tok]:
    toks, line = [], 1
    for m in _TOKEN.finditer(code):
        kind = m.lastgroup or "op"
        if kind == "nl":
            line += 1
            continue
        toks.append(_Tok(m.group(), line, kind))
    return toks


@dataclass
class _Scanner:
    """Walks the token list statement by statement; see the module docstring."""

    toks: list[_Tok]
    header: str
    call_macros: frozenset[str]
    terminators: frozenset[str] = frozenset()
    out: list[Decl] = field(default_factory=list)
    pos: int = 0

    def emit(self, name: str, kind: str, line: int, scope: str, parent: str = "") -> None:
        if name not in KEYWORDS:
            self.out.append(Decl(name, kind, self.header, line, scope, parent))

    def skip_balanced(self, i: int) -> int:
        """`i` is at an opening bracket; return the index after its match (tolerant of EOF)."""
        pairs = {"(": ")", "[": "]", "{": "}"}
        stack = [pairs[self.toks[i].text]]
        i += 1
        while i < len(self.toks) and stack:
            t = self.toks[i].text
            if t in pairs:
                stack.append(pairs[t])
            elif t == stack[-1]:
                stack.pop()
            elif t in ")]}":
                # unbalanced across #if branches: close everything up to the matching kind
                while stack and stack[-1] != t:
                    stack.pop()
                if stack:
                    stack.pop()
            i += 1
        return i

    def skip_angles(self, i: int) -> int:
        depth = 0
        while i < len(self.toks):
            t = self.toks[i].text
            if t == "<":
                depth += 1
            elif t == ">":
                depth -= 1
                if depth == 0:
                    return i + 1
            elif t in "({[":
                i = self.skip_balanced(i) - 1
            elif t in ";{}":
                return i
            i += 1
        return i

    def scan_scope(self, scope: str) -> None:
        """Statements until the closing `}` of this scope (or EOF)."""
        stmt: list[_Tok] = []
        while self.pos < len(self.toks):
            tok = self.toks[self.pos]
            t = tok.text
            if t == "}":
                self.pos += 1
                if scope or stmt:
                    self.finish(stmt, scope)
                return
            if t == ";" or (tok.kind == "id" and t in self.terminators):
                self.pos += 1
                self.finish(stmt, scope)
                stmt = []
            elif t == "{":
                self.open_brace(stmt, scope)
                stmt = []
            elif t in "([":
                end = self.skip_balanced(self.pos)
                stmt.extend(self.toks[self.pos:end])
                self.pos = end
            elif t == "template" and not stmt:
                self.pos = self.skip_angles(self.pos + 1)
            else:
                stmt.append(tok)
                self.pos += 1
        self.finish(stmt, scope)

    def open_brace(self, stmt: list[_Tok], scope: str) -> None:
        words = [t.text for t in stmt]
        if "namespace" in words:
            idx = words.index("namespace")
            name = words[idx + 1] if idx + 1 < len(words) else ""
            if name:
                self.emit(name, KIND_NAMESPACE, stmt[idx + 1].line, scope)
            self.pos += 1
            self.scan_scope(f"{scope}::{name}" if scope and name else (name or scope))
            return
        if words[:2] == ["extern", '"C"'] or words[:2] == ["extern", '"C++"']:
            self.pos += 1
            self.scan_scope(scope)
            return
        tag = self.tag_keyword(words)
        if tag is not None and "(" not in words[:tag]:
            self.tag_body(stmt, tag, scope)
            return
        if "=" in words:  # an initialiser: `x = { ... };`
            end = self.skip_balanced(self.pos)
            self.pos = end
            rest = self.collect_to_semicolon()
            self.finish(stmt + rest, scope)
            return
        # a function definition (or something we cannot use): record the declarator, skip the body
        self.pos = self.skip_balanced(self.pos)
        self.finish(stmt, scope, definition=True)

    @staticmethod
    def tag_keyword(words: list[str]) -> int | None:
        for i, w in enumerate(words):
            if w in TAG_KEYWORDS:
                return i
        return None

    def collect_to_semicolon(self) -> list[_Tok]:
        rest = []
        while self.pos < len(self.toks) and self.toks[self.pos].text not in (";", "{", "}"):
            if self.toks[self.pos].text in "([":
                end = self.skip_balanced(self.pos)
                rest.extend(self.toks[self.pos:end])
                self.pos = end
                continue
            rest.append(self.toks[self.pos])
            self.pos += 1
        if self.pos < len(self.toks) and self.toks[self.pos].text == ";":
            self.pos += 1
        return rest

    def tag_name(self, stmt: list[_Tok], tag: int) -> _Tok | None:
        """The tag's own name: the last plain identifier after the keyword, before `:`/`<`."""
        name = None
        i = tag + 1
        while i < len(stmt):
            t = stmt[i]
            if t.text in (":", "<", "final"):
                break
            if t.kind == "id" and not (i + 1 < len(stmt) and stmt[i + 1].text == "("):
                name = t
            i += 1
        return name

    def tag_body(self, stmt: list[_Tok], tag: int, scope: str) -> None:
        keyword = stmt[tag].text
        name = self.tag_name(stmt, tag)
        is_typedef = stmt and stmt[0].text == "typedef"
        if name is not None:
            self.emit(name.text, KIND_ENUM if keyword == "enum" else KIND_TYPE, name.line, scope)
        body_start = self.pos
        self.pos = self.skip_balanced(self.pos)
        if keyword == "enum":
            self.enumerators(body_start + 1, self.pos - 1, scope, name.text if name else "")
        rest = self.collect_to_semicolon()
        if is_typedef:
            for tok in self.declarators(rest):
                self.emit(tok.text, KIND_TYPE, tok.line, scope)

    def enumerators(self, start: int, end: int, scope: str, parent: str) -> None:
        expect = True
        i = start
        while i < end:
            t = self.toks[i]
            if t.text in "([{":
                i = self.skip_balanced(i)
                continue
            if expect and t.kind == "id":
                self.emit(t.text, KIND_ENUMERATOR, t.line, scope, parent)
                expect = False
            elif t.text == ",":
                expect = True
            i += 1

    def declarators(self, toks: list[_Tok]) -> list[_Tok]:
        """Names declared by `A, *B, C[3]` (a typedef's tail): the last identifier of each part."""
        names, last = [], None
        depth = 0
        for t in toks:
            if t.text in "([":
                depth += 1
            elif t.text in ")]":
                depth -= 1
            elif t.text == "," and depth == 0:
                if last is not None:
                    names.append(last)
                last = None
            elif t.kind == "id" and depth == 0:
                last = t
        if last is not None:
            names.append(last)
        return names

    def finish(self, stmt: list[_Tok], scope: str, definition: bool = False) -> None:
        if not stmt:
            return
        words = [t.text for t in stmt]
        for i, w in enumerate(words[:-1]):  # elaborated `struct X` anywhere names the tag X
            if w in TAG_KEYWORDS and stmt[i + 1].kind == "id" and words[i + 1] not in KEYWORDS:
                kind = KIND_ENUM if w == "enum" else KIND_TYPE
                self.emit(words[i + 1], kind, stmt[i + 1].line, scope)
        if words[0] == "typedef":
            self.typedef(stmt, scope)
        elif words[0] == "using":
            if len(words) > 2 and words[2] == "=":
                self.emit(words[1], KIND_TYPE, stmt[1].line, scope)
        elif words[0] in ("friend", "static_assert", "return"):
            return
        else:
            self.function_or_variable(stmt, scope, definition)

    def typedef(self, stmt: list[_Tok], scope: str) -> None:
        # function pointer: typedef R (ATTR *NAME)(args);
        for i, t in enumerate(stmt):
            if t.text == "(" and i + 1 < len(stmt):
                inner = []
                j = i + 1
                depth = 1
                while j < len(stmt) and depth:
                    if stmt[j].text == "(":
                        depth += 1
                    elif stmt[j].text == ")":
                        depth -= 1
                    if depth:
                        inner.append(stmt[j])
                    j += 1
                if any(x.text == "*" or x.text == "^" for x in inner):
                    ids = [x for x in inner if x.kind == "id"]
                    if ids:
                        self.emit(ids[-1].text, KIND_TYPE, ids[-1].line, scope)
                    return
                break
        tail = [t for t in stmt[1:]]
        for tok in self.declarators(tail)[-1:] if not any(t.text == "," for t in tail) else \
                self.declarators(tail):
            self.emit(tok.text, KIND_TYPE, tok.line, scope)

    def function_or_variable(self, stmt: list[_Tok], scope: str, definition: bool) -> None:
        for i, t in enumerate(stmt[:-1]):
            if t.kind != "id" or stmt[i + 1].text != "(":
                continue
            if t.text in ATTRIBUTE_CALLS or t.text in self.call_macros or t.text in KEYWORDS:
                continue
            if i > 0 and stmt[i - 1].text in ("operator", "~", "."):
                return
            if i > 0 and stmt[i - 1].text == "::":
                return  # an out-of-class member definition
            self.emit(t.text, KIND_FUNCTION, t.line, scope)
            return
        if definition or any(t.text == "(" for t in stmt):
            return
        # a variable: the last identifier before `=` or `[`
        name = None
        for i, t in enumerate(stmt):
            if t.text in ("=", "["):
                break
            if t.kind == "id" and not (i and stmt[i - 1].text in TAG_KEYWORDS):
                name = t
        if name is not None and len(stmt) > 1:
            self.emit(name.text, KIND_VARIABLE, name.line, scope)


def scan_text(text: str, header: str, call_macros: frozenset[str] = frozenset(),
              terminators: frozenset[str] = frozenset()) -> list[Decl]:
    """Every name declared in one header's text (all `#if` branches at once).

    `call_macros` are function-like macros (from any header) that may appear in declarations
    as attributes (`__dv(0)`, `__CUDA_DEPRECATED_MSG("...")`); they are never taken for the
    declared function's name.  `terminators` are object-like macros that end a declaration in
    place of its `;` (`__DEF_IF_HOST`, which expands to `;` or to an empty body).
    """
    clean = strip_comments(text)
    code, directives = split_directives(clean)
    macros = scan_macros(directives)
    known = call_macros | frozenset(m.name for m in macros if m.function_like)
    ends = terminators | frozenset(m.name for m in macros if _is_terminator(m))
    scanner = _Scanner(tokenize(code), header, known, ends)
    while scanner.pos < len(scanner.toks):
        scanner.scan_scope("")
    decls = [Decl(m.name, KIND_MACRO, header, m.line, value=m.body) for m in macros if not m.guard]
    return decls + scanner.out


def _is_terminator(macro: MacroInfo) -> bool:
    return not macro.function_like and macro.body.rstrip().endswith((";", "}"))


def macro_roles(texts: list[str]) -> tuple[frozenset[str], frozenset[str]]:
    """(function-like macros, statement-terminating macros) defined anywhere in `texts`."""
    calls, ends = set(), set()
    for text in texts:
        _, directives = split_directives(strip_comments(text))
        for m in scan_macros(directives):
            if m.function_like:
                calls.add(m.name)
            elif _is_terminator(m):
                ends.add(m.name)
    return frozenset(calls), frozenset(ends)


def scan_files(root: Path, headers: list[str]) -> list[Decl]:
    """Scan `headers` (paths relative to `root`; missing ones are skipped), in the given order."""
    present = [h for h in headers if (root / h).is_file()]
    texts = {h: (root / h).read_text(encoding="utf-8", errors="replace") for h in present}
    calls, ends = macro_roles(list(texts.values()))
    out: list[Decl] = []
    for h in present:
        out.extend(scan_text(texts[h], h, calls, ends))
    return out


def macro_aliases(decls: list[Decl]) -> list[Decl]:
    """Names that exist only as a macro's replacement (`#define cuMemAlloc cuMemAlloc_v2`).

    The versioned symbol is what the library exports and what code may call directly, so it is
    a declared name too; it is returned with the kind `function` when the macro aliases a
    declared function, else `macro`.
    """
    declared = {d.name: d for d in decls}
    out = []
    for d in decls:
        if d.kind == KIND_MACRO and re.fullmatch(r"[A-Za-z_]\w*", d.value) and d.value not in declared:
            kind = KIND_FUNCTION if declared[d.name].kind == KIND_FUNCTION or any(
                x.name == d.name and x.kind == KIND_FUNCTION for x in decls) else KIND_MACRO
            alias = Decl(d.value, kind, d.header, d.line, d.scope)
            declared[d.value] = alias
            out.append(alias)
    return out


def include_guards(text: str) -> set[str]:
    """The include-guard macro names of a header (useful to callers that list skipped names)."""
    _, directives = split_directives(strip_comments(text))
    return {m.name for m in scan_macros(directives) if m.guard}


def find_includes(text: str) -> list[str]:
    """The paths a header includes (`#include <x>` and `"x"`), in order."""
    _, directives = split_directives(strip_comments(text))
    out = []
    for _, name, rest in directives:
        m = re.match(r'[<"]([^>"]+)[>"]', rest) if name == "include" else None
        if m:
            out.append(m.group(1))
    return out
