"""Project configuration: `[tool.musify]` in pyproject.toml, or a `.musify.toml`.

The file closest to the input (the input directory itself, then its parents up to the root)
wins; command-line flags override it. Every key is checked here, once: an unknown key or a bad
value is an error naming the file, the line and the key, so a misspelt option is never silently
ignored. `docs/configuration.md` lists the same keys (a test keeps the two in step).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable

from musify.arch import ARCHES, parse_arch_map
from musify.classes import named_tuple
from musify.diagnostics import SEVERITIES

_DIAG_RANGE = r"^MU\d{4}(-MU\d{4})?$"  # patterns as text: compiled on first use (re's cache), most runs never do


class ConfigError(ValueError):
    """A configuration that cannot be used; the message starts with `path:line:`."""


def _strings(value: object) -> str | None:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return "must be a list of strings"
    return None


def _boolean(value: object) -> str | None:
    return None if isinstance(value, bool) else "must be true or false"


def _positive_int(value: object) -> str | None:
    ok = isinstance(value, int) and not isinstance(value, bool) and value >= 1
    return None if ok else "must be a whole number of at least 1"


def _severity(value: object) -> str | None:
    return None if value in SEVERITIES else f"must be one of {', '.join(SEVERITIES)}"


def _arch(value: object) -> str | None:
    return None if value in ARCHES else f"must be one of {', '.join(ARCHES)}"


def _arch_map(value: object) -> str | None:
    if not isinstance(value, (dict, str)):
        return 'must be a table like {80 = 220, 90 = 310} or a string "80=220,90=310"'
    try:
        parse_arch_map(value)
    except ValueError as exc:
        return str(exc)
    return None


def _suppress(value: object) -> str | None:
    problem = _strings(value)
    if problem:
        return problem
    for item in value:  # type: ignore[union-attr]
        for part in item.split(","):
            if part.strip() and not re.match(_DIAG_RANGE, part.strip(), re.IGNORECASE):
                return f"{part.strip()!r} is not a diagnostic ID or range (MU1004, MU2010-MU2019)"
    return None


@named_tuple
class Key:
    check: Callable[[object], str | None]
    help: str


KEYS: dict[str, Key] = {
    "exclude": Key(_strings, "glob patterns of paths to skip, like --exclude (relative to the input)"),
    "respect_gitignore": Key(_boolean, "honour .gitignore files (false: like --no-gitignore)"),
    "rules": Key(_strings, "extra rule tables, relative to the configuration file, like --rules"),
    "rewrite_comments": Key(_boolean, "also rename CUDA names in comments (--rewrite-comments)"),
    "rewrite_strings": Key(_boolean, "also rename CUDA names in string literals (--rewrite-strings)"),
    "rename_files": Key(_boolean, "rename .cu/.cuh to .mu/.muh (false: like --no-rename)"),
    "suppress": Key(_suppress, "diagnostic IDs or ranges not to report, like --suppress"),
    "arch": Key(_arch, "target MUSA architecture, like --arch"),
    "arch_map": Key(_arch_map, "arch-guard threshold policy, like --arch-map"),
    "shims": Key(_boolean, "route calls with no MUSA counterpart to the compat shims (false: --no-shims)"),
    "fail_on": Key(_severity, "exit 1 at or above this severity, like --fail-on"),
    "jobs": Key(_positive_int, "worker processes, like -j"),
    "cache": Key(_boolean, "reuse results of unchanged files between runs (false: like --no-cache)"),
    # its own keys are checked by musify/verify/settings.py (docs/verify.md)
    "verify": Key(lambda v: None if isinstance(v, dict) else "must be a table", "musify verify settings (docs/verify.md)"),
}


def find_config(start: str) -> tuple[str, dict] | None:
    """The nearest `.musify.toml` or pyproject `[tool.musify]` at or above `start`, checked."""
    d = os.path.abspath(start if os.path.isdir(start) else os.path.dirname(start) or ".")
    while True:
        for name in (".musify.toml", "pyproject.toml"):
            path = os.path.join(d, name)
            if os.path.isfile(path):
                table = read_config(path)
                if table is not None:
                    return path, table
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def run_excludes(inputs: list[str], options) -> tuple[str, ...]:
    """The run's exclusion globs: `--exclude` and the `exclude` key of a configuration file that
    sits in an input directory itself (a parent's file only sets options)."""
    out = list(options.exclude)
    for item in inputs:
        if os.path.isdir(item):
            found = find_config(item)
            if found and os.path.dirname(found[0]) == os.path.abspath(item):
                out.extend(found[1].get("exclude", []))
    return tuple(out)


def read_config(path: str) -> dict | None:
    """The musify table of one file (None: a pyproject without one); raises ConfigError."""
    if sys.version_info >= (3, 11):  # imported here: most runs find no configuration file
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
        doc = tomllib.loads(raw.decode("utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}:1: cannot read configuration: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        line = re.search(r"at line (\d+)", str(exc))
        raise ConfigError(f"{path}:{line.group(1) if line else 1}: not valid TOML: {exc}") from None
    in_pyproject = os.path.basename(path) == "pyproject.toml"
    table = doc.get("tool", {}).get("musify") if in_pyproject else doc
    if table is None:
        return None
    if not isinstance(table, dict):
        raise ConfigError(f"{path}:1: [tool.musify] must be a table")
    text = raw.decode("utf-8")
    prefix = "tool.musify" if in_pyproject else ""
    for key, value in table.items():
        spec = KEYS.get(key)
        problem = (f"unknown key (known: {', '.join(sorted(KEYS))})" if spec is None else spec.check(value))
        if problem:
            raise ConfigError(f"{path}:{key_line(text, prefix, key)}: {key}: {problem}")
    if "rules" in table:
        base = os.path.dirname(path)
        table = dict(table, rules=[os.path.join(base, r) for r in table["rules"]])
    return table


_HEADER = r"^\s*\[+\s*([^\]]+?)\s*\]+"  # compiled on first use: only a bad key's line lookup reads it


def key_line(text: str, table: str, key: str) -> int:
    """The line where `key` of the table `table` ("" = the root) is set, or its header's line.

    tomllib keeps no positions, so this scans the text: enough for the one or two levels a
    configuration uses (`key = ...` inside the table, or a `[table.key]` sub-table)."""
    current, header_line = "", 1 if not table else 0
    key_re = re.compile(rf"^\s*(?:{re.escape(key)}|\"{re.escape(key)}\"|'{re.escape(key)}')\s*[=.]")
    for number, line in enumerate(text.splitlines(), 1):
        header = re.match(_HEADER, line)
        if header:
            current = header.group(1).replace('"', "").replace(" ", "")
            if current == table:
                header_line = number
            if current == (f"{table}.{key}" if table else key):
                return number
            continue
        if current == table and key_re.match(line):
            return number
    return header_line or 1
