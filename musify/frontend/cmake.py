"""A CMake lexer that keeps everything: comments, bracket arguments, quoting, line continuations.

It splits a listfile into command invocations (`name(args)`) with the span of every argument and
its kind (unquoted, quoted, bracket), and records comments (`# ...`, `#[[ ... ]]`) as spans. The
pass edits argument text in place, so whatever the lexer does not look at comes out as it went in.
Grammar: cmake-language(7). Unbalanced parentheses or an unterminated quote or bracket give no
tree, only the reason, and the file is left as it is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from musify.frontend.scanner import Ctx, Scan

_BRACKET_OPEN = re.compile(r"\[(=*)\[")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SPACE = re.compile(r"[ \t\r\n]*")


@dataclass(frozen=True, slots=True)
class Arg:
    start: int
    end: int
    kind: str  # "unquoted" | "quoted" | "bracket"
    text: str  # the argument as written (quotes and brackets included)

    @property
    def value(self) -> str:
        """The argument without its quotes (escapes and variable references left as written)."""
        if self.kind == "quoted":
            return self.text[1:-1]
        if self.kind == "bracket":
            m = _BRACKET_OPEN.match(self.text)
            n = len(m.group(0)) if m else 2
            return self.text[n:-n]
        return self.text


@dataclass
class Command:
    name: str
    start: int  # offset of the name
    open: int  # offset of "("
    close: int  # offset of ")"
    args: list[Arg] = field(default_factory=list)
    gaps: list[tuple[int, int]] = field(default_factory=list)  # comments inside the argument list

    @property
    def lower(self) -> str:
        return self.name.lower()


@dataclass
class CMakeTree:
    commands: list[Command]
    error: str = ""
    error_offset: int = 0


class _Error(ValueError):
    def __init__(self, msg: str, offset: int):
        super().__init__(msg)
        self.offset = offset


def scan_cmake(text: str, _ruleset: object = None) -> Scan:
    out = Scan()
    try:
        commands = _lex(text, out)
        out.tree = CMakeTree(commands)
    except _Error as exc:
        out.tree = CMakeTree([], str(exc), exc.offset)
    return out


def _bracket_end(text: str, pos: int, kind: str) -> int:
    m = _BRACKET_OPEN.match(text, pos)
    assert m
    close = "]" + m.group(1) + "]"
    end = text.find(close, m.end())
    if end < 0:
        raise _Error(f"unterminated bracket {kind}", pos)
    return end + len(close)


def _comment(text: str, pos: int, out: Scan) -> int:
    """Skip the comment at `pos` ('#'), record it, return where it ends."""
    if _BRACKET_OPEN.match(text, pos + 1):
        end = _bracket_end(text, pos + 1, "comment")
    else:
        end = text.find("\n", pos)
        end = len(text) if end < 0 else end
    out.spans.append((pos, end, Ctx.COMMENT))
    return end


def _lex(text: str, out: Scan) -> list[Command]:
    commands = []
    pos = 0
    n = len(text)
    while pos < n:
        c = text[pos]
        if c in " \t\r\n":
            pos += 1
        elif c == "#":
            pos = _comment(text, pos, out)
        else:
            m = _IDENT.match(text, pos)
            if not m:
                raise _Error(f"unexpected {c!r} where a command should start", pos)
            after = _SPACE.match(text, m.end()).end()
            if after >= n or text[after] != "(":
                raise _Error(f"command '{m.group()}' has no '('", m.end())
            cmd = Command(m.group(), pos, after, after)
            pos = _arguments(text, after + 1, cmd, out)
            commands.append(cmd)
    return commands


def _arguments(text: str, pos: int, cmd: Command, out: Scan) -> int:
    depth = 0
    n = len(text)
    while pos < n:
        c = text[pos]
        if c in " \t\r\n":
            pos += 1
        elif c == "#":
            end = _comment(text, pos, out)
            cmd.gaps.append((pos, end))
            pos = end
        elif c == "(":
            depth += 1
            pos += 1
        elif c == ")":
            if depth == 0:
                cmd.close = pos
                return pos + 1
            depth -= 1
            pos += 1
        elif c == '"':
            end = _quoted_end(text, pos)
            cmd.args.append(Arg(pos, end, "quoted", text[pos:end]))
            out.spans.append((pos, end, Ctx.STRING))
            pos = end
        elif c == "[" and _BRACKET_OPEN.match(text, pos):
            end = _bracket_end(text, pos, "argument")
            cmd.args.append(Arg(pos, end, "bracket", text[pos:end]))
            out.spans.append((pos, end, Ctx.STRING))
            pos = end
        else:
            end = _unquoted_end(text, pos)
            cmd.args.append(Arg(pos, end, "unquoted", text[pos:end]))
            pos = end
    raise _Error(f"command '{cmd.name}' is not closed", cmd.start)


def _quoted_end(text: str, pos: int) -> int:
    i = pos + 1
    n = len(text)
    while i < n:
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == '"':
            return i + 1
        i += 1
    raise _Error("unterminated quoted argument", pos)


def _unquoted_end(text: str, pos: int) -> int:
    i = pos
    n = len(text)
    while i < n:
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c in " \t\r\n()#":
            break
        if c == '"':  # legacy unquoted argument with embedded quotes: a"b c"d
            i = _quoted_end(text, i)
            continue
        i += 1
    return i
