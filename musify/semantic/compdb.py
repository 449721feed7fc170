"""compile_commands.json: find a file's entry and keep the flags libclang needs from it.

Only the flags that change what names mean are kept (-I, -isystem, -D, -U, -include, -std): the
rest belong to nvcc or gcc and mean nothing to clang's CUDA front end.
"""

from __future__ import annotations

import json
import os
import shlex
from dataclasses import dataclass
from functools import lru_cache

_WITH_VALUE = ("-I", "-isystem", "-D", "-U", "-include", "-iquote")


@dataclass(frozen=True)
class Entry:
    file: str  # absolute, normalised
    directory: str
    args: tuple[str, ...]  # as the build ran them


class CompileDatabaseError(Exception):
    pass


@lru_cache(maxsize=4)
def load(build_dir: str) -> tuple[Entry, ...]:
    """The entries of BUILD_DIR/compile_commands.json (or of the file itself when given)."""
    path = build_dir if build_dir.endswith(".json") else os.path.join(build_dir, "compile_commands.json")
    try:
        with open(path, encoding="utf-8") as fh:
            raw = json.load(fh)
    except (OSError, ValueError) as exc:
        raise CompileDatabaseError(f"cannot read {path}: {exc}") from None
    out = []
    for item in raw:
        directory = item.get("directory", "")
        args = item.get("arguments") or shlex.split(item.get("command", ""))
        file = os.path.normpath(os.path.join(directory, item.get("file", "")))
        out.append(Entry(file, directory, tuple(args)))
    return tuple(out)


def find(entries: tuple[Entry, ...], rel_path: str, abs_path: str | None = None) -> Entry | None:
    """The entry for a file: by absolute path when known, else by its path relative to the input."""
    if abs_path:
        wanted = os.path.normpath(abs_path)
        for e in entries:
            if e.file == wanted:
                return e
    suffix = "/" + rel_path.lstrip("/")
    matches = [e for e in entries if e.file.endswith(suffix) or e.file == rel_path]
    return matches[0] if len(matches) == 1 else None


def clang_flags(entry: Entry) -> list[str]:
    """The -I/-D/-U/-include/-std flags of an entry, with relative paths made absolute."""
    out: list[str] = []
    args = _expand_response_files(list(entry.args[1:]), entry.directory)
    i = 0
    while i < len(args):
        a = args[i]
        for flag in _WITH_VALUE:
            if a == flag and i + 1 < len(args):
                out += [flag, _absolute(flag, args[i + 1], entry.directory)]
                i += 1
                break
            if a.startswith(flag) and a != flag:
                out.append(flag + _absolute(flag, a[len(flag):], entry.directory))
                break
        else:
            if a.startswith(("-std=", "--std=")):
                out.append("-std=" + a.split("=", 1)[1])
        i += 1
    return out


def _expand_response_files(args: list[str], directory: str) -> list[str]:
    """Inline `--options-file F`, `-optf F` (nvcc, as CMake writes them) and `@F` response files."""
    out: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        path = None
        if a in ("--options-file", "-optf") and i + 1 < len(args):
            path, i = args[i + 1], i + 1
        elif a.startswith("@"):
            path = a[1:]
        if path is None:
            out.append(a)
        else:
            try:
                with open(os.path.join(directory, path), encoding="utf-8") as fh:
                    out.extend(shlex.split(fh.read()))
            except OSError:
                pass  # a missing response file only loses its flags
        i += 1
    return out


def _absolute(flag: str, value: str, directory: str) -> str:
    if flag in ("-I", "-isystem", "-iquote", "-include") and not os.path.isabs(value):
        return os.path.normpath(os.path.join(directory, value))
    return value
