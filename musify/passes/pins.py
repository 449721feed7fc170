"""requirements*.txt and pyproject.toml: report pins of CUDA-only wheels and indexes.

Nothing is rewritten: there is no one MUSA counterpart to `nvidia-cublas-cu12` or a `+cu121`
index, so each such pin gets MU6030 and the user decides (`rules/build/toolchain.toml`, [pins]).

A requirements file is all requirements, but most of a pyproject.toml is settings of other tools
(`[tool.ruff] src = ["pycuda"]`, per-file lint ignores keyed by `"pycuda/driver.py"`) and the
project's own name: only the tables that declare dependencies or package indexes are read
(`_declares`). A path (`pycuda/setup.py`, `-e ./pycuda/`) is never taken for a package name.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from musify.engine.edits import Edit
from musify.passes._base import PassContext
from musify.rules.vocab import toolchain_vocab

_ITEM = re.compile(r"[^\s\"',\[\]{}=]+(?:[=<>!~]=?[^\s\"',\[\]{}]*)?")
# what moves the TOML bracket depth: strings (skipped whole) and brackets
_TOKEN = re.compile(r'"""|\'\'\'|"(?:[^"\\]|\\.)*"|\'[^\']*\'|[\[\]{}]')
_KEY = re.compile(r'\s*(?:"((?:[^"\\]|\\.)*)"|\'([^\']*)\'|([A-Za-z0-9_-]+))\s*')
# tool tables where any key below these, at any depth, declares dependencies or indexes
_TOOL_KEYS = {"poetry": ("source",), "pdm": ("source",), "pixi": (), "hatch": ()}


def run(ctx: PassContext) -> list[Edit]:
    pins = toolchain_vocab()["pins"]
    packages = tuple(p.lower() for p in pins["packages"])
    local = re.compile(re.escape(pins["local_version"]) + r"\d")
    segments = ctx.scan.tree if isinstance(ctx.scan.tree, list) else [(0, len(ctx.text))]
    if ctx.path.endswith(".toml"):
        segments = list(_dependency_segments(ctx.text, segments))
    for start, end in segments:
        for m in _ITEM.finditer(ctx.text, start, end):
            item = m.group()
            low = item.lower()
            # a path that starts with a package's name (`pycuda/driver.py`) names a file, not a
            # wheel; a URL (`://`) or a direct reference (`name@url`) still does
            path = "/" in low and "://" not in low and "@" not in low
            if (low.startswith(packages) and not path) or local.search(low) or pins["index"] in low:
                ctx.warn("MU6030", m.start(), end=m.end(), pin=item, origin="pass:pins")
    return []


def _declares(path: tuple[str, ...]) -> bool:
    """Whether the value at this key path (table keys + assigned keys) declares dependencies or
    package indexes: what a pin can be. Everything else (`project.name`, `tool.ruff.*`) is not."""
    head, rest = path[:1], path[1:]
    if head == ("project",):
        return rest[:1] in (("dependencies",), ("optional-dependencies",))
    if head == ("build-system",):
        return rest[:1] == ("requires",)
    if head == ("dependency-groups",):
        return True
    if head != ("tool",) or not rest:
        return False
    if rest[0] == "uv":  # sources, index, index-url, dev-dependencies, ...: all package management
        return True
    extra = _TOOL_KEYS.get(rest[0])
    return extra is not None and any(k.endswith("dependencies") or k in extra for k in rest[1:])


def _dependency_segments(text: str, segments: list[tuple[int, int]]) -> Iterator[tuple[int, int]]:
    """The code segments of a pyproject.toml that lie in a dependency-declaring value.

    A small lexical walk (tomllib gives no offsets): the table is the latest `[header]` or
    `[[header]]` at bracket depth 0; a `key = value` line at depth 0 names the key, whose value
    runs on while brackets stay open. Strings are skipped whole, so brackets in them do not count."""
    table: tuple[str, ...] = ()
    relevant = False
    depth, multiline = 0, ""
    for start, end in segments:
        line = text[start:end]
        if depth == 0 and not multiline:
            stripped = line.lstrip()
            if stripped.startswith("["):
                table = _dotted(stripped.strip().strip("[]"))[0]
                relevant = False
                continue
            key, eq = _dotted(line)
            if key and line.startswith("=", eq):
                relevant = _declares(table + key)
            elif stripped:
                relevant = False
        if relevant:
            yield start, end
        depth, multiline = _depth(line, depth, multiline)


def _dotted(s: str) -> tuple[tuple[str, ...], int]:
    """The dotted key at the start of `s` (bare or quoted parts, lower-cased) and where it ends."""
    keys: list[str] = []
    pos = 0
    while m := _KEY.match(s, pos):
        keys.append(next(g for g in m.groups() if g is not None).lower())
        pos = m.end()
        if not s.startswith(".", pos):
            break
        pos += 1
    return tuple(keys), pos


def _depth(line: str, depth: int, multiline: str) -> tuple[int, str]:
    """Bracket depth and open multi-line string (`\"\"\"`, `'''` or "") after `line`."""
    pos = 0
    while True:
        if multiline:
            close = line.find(multiline, pos)
            if close < 0:
                return depth, multiline
            pos, multiline = close + 3, ""
        m = _TOKEN.search(line, pos)
        if m is None:
            return depth, multiline
        tok, pos = m.group(), m.end()
        if tok in ('"""', "'''"):
            multiline = tok
        elif tok in "[{":
            depth += 1
        elif tok in "]}":
            depth = max(depth - 1, 0)
