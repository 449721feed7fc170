"""Find the files to migrate and say what each one is.

Walks files and directories without following symbolic links, honours `.gitignore` files and
`--exclude` globs, and classifies by name and extension: C-family source, Python, CMake, Makefile,
shell build script, pip requirements, pyproject. Everything else is still listed (kind `other`),
because an output tree must be a complete mirror that builds as a project.
"""

from __future__ import annotations

import fnmatch
import os
import re
from dataclasses import dataclass
from pathlib import Path

KINDS = {
    ".cu": "cuda-source",
    ".cuh": "cuda-header",
    ".mu": "musa",
    ".muh": "musa",
}
CPP_EXTS = frozenset({".c", ".cc", ".cpp", ".cxx", ".h", ".hpp", ".hxx", ".inl", ".inc", ".cuinl"})
SOURCE_KINDS = frozenset({"cuda-source", "cuda-header", "cpp"})
RENAMES = {".cu": ".mu", ".cuh": ".muh"}
# build and Python files: each kind has its own front end (musify/passes/languages.py)
BUILD_KINDS = frozenset({"python", "cmake", "make", "shell", "requirements", "pyproject"})
_BUILD_EXTS = {".py": "python", ".cmake": "cmake", ".mk": "make", ".mak": "make", ".sh": "shell",
               ".bash": "shell"}
_BUILD_NAMES = {"CMakeLists.txt": "cmake", "Makefile": "make", "makefile": "make", "GNUmakefile": "make",
                "pyproject.toml": "pyproject"}
_REQUIREMENTS = re.compile(r"(?:.*[-_.])?requirements(?:[-_.].*)?\.(?:txt|in)$|constraints(?:[-_.].*)?\.txt$")


def classify(path: str) -> str:
    """The file's kind, from its name (`CMakeLists.txt`, `Makefile`) or its extension."""
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    ext = os.path.splitext(name)[1]
    if ext in KINDS:
        return KINDS[ext]
    if ext.lower() in CPP_EXTS:
        return "cpp"
    kind = _BUILD_NAMES.get(name) or _BUILD_EXTS.get(ext)
    if kind:
        return kind
    if _REQUIREMENTS.match(name):
        return "requirements"
    return "other"


@dataclass(frozen=True)
class Found:
    root: str  # the input root (a directory, or a file's parent)
    rel: str  # posix path relative to root
    kind: str
    symlink: str | None = None  # link target, for links (never followed)

    @property
    def abspath(self) -> str:
        return os.path.join(self.root, *self.rel.split("/"))


@dataclass
class Discovery:
    files: list[Found]


class GitIgnore:
    """A small, faithful-enough .gitignore matcher: globs, `**`, anchoring, dir-only, negation."""

    def __init__(self) -> None:
        self._rules: list[tuple[str, re.Pattern[str], bool, bool]] = []  # (base, regex, negate, dir_only)

    def add_file(self, base: str, path: str) -> None:
        try:
            lines = Path(path).read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return
        for raw in lines:
            line = raw.rstrip()
            if not line or line.startswith("#"):
                continue
            negate = line.startswith("!")
            if negate:
                line = line[1:]
            dir_only = line.endswith("/")
            line = line.strip("/") if dir_only else line
            anchored = "/" in line.lstrip("/")
            line = line.lstrip("/")
            regex = _glob_to_regex(line, anchored)
            self._rules.append((base, re.compile(regex), negate, dir_only))

    def ignored(self, rel: str, is_dir: bool) -> bool:
        result = False
        for base, regex, negate, dir_only in self._rules:
            if dir_only and not is_dir:
                continue
            if base:
                if not rel.startswith(base + "/"):
                    continue
                sub = rel[len(base) + 1:]
            else:
                sub = rel
            if regex.fullmatch(sub):
                result = not negate
        return result


def _glob_to_regex(glob: str, anchored: bool) -> str:
    out = []
    i = 0
    while i < len(glob):
        c = glob[i]
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if glob.startswith("/**", i) and i + 3 == len(glob):
            out.append("/.*")
            i += 3
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = glob.find("]", i + 1)
            if j > 0:
                out.append(glob[i:j + 1])
                i = j + 1
                continue
            out.append(re.escape(c))
        else:
            out.append(re.escape(c))
        i += 1
    body = "".join(out)
    return body if anchored else "(?:.*/)?" + body


def excluded(rel: str, patterns: tuple[str, ...] | list[str]) -> bool:
    name = rel.rsplit("/", 1)[-1]
    return any(fnmatch.fnmatchcase(rel, p) or fnmatch.fnmatchcase(name, p) for p in patterns)


def discover(inputs: list[str], exclude: tuple[str, ...] = (), respect_gitignore: bool = True) -> Discovery:
    """List every file under the inputs (sorted, deterministic), without following links."""
    files: list[Found] = []
    for item in inputs:
        path = os.path.abspath(item)
        if os.path.isdir(path) and not os.path.islink(path):
            _walk(path, exclude, respect_gitignore, files)
        elif os.path.lexists(path):
            root, name = os.path.split(path)
            link = os.readlink(path) if os.path.islink(path) else None
            files.append(Found(root, name, classify(name), link))
        else:
            files.append(Found(os.path.dirname(path), os.path.basename(path), "missing"))
    return Discovery(files)


def _walk(root: str, exclude: tuple[str, ...], respect_gitignore: bool, files: list[Found]) -> None:
    ignore = GitIgnore()
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        rel_dir = os.path.relpath(dirpath, root).replace(os.sep, "/")
        rel_dir = "" if rel_dir == "." else rel_dir
        if respect_gitignore and ".gitignore" in filenames:
            ignore.add_file(rel_dir, os.path.join(dirpath, ".gitignore"))
        keep = []
        for d in sorted(dirnames):
            rel = f"{rel_dir}/{d}" if rel_dir else d
            full = os.path.join(dirpath, d)
            if d == ".git" or excluded(rel, exclude) or (respect_gitignore and ignore.ignored(rel, True)):
                continue
            if os.path.islink(full):
                files.append(Found(root, rel, "other", os.readlink(full)))
                continue
            keep.append(d)
        dirnames[:] = keep
        for f in sorted(filenames):
            rel = f"{rel_dir}/{f}" if rel_dir else f
            full = os.path.join(dirpath, f)
            if excluded(rel, exclude) or (respect_gitignore and ignore.ignored(rel, False)):
                continue
            link = os.readlink(full) if os.path.islink(full) else None
            files.append(Found(root, rel, classify(f), link))
    files.sort(key=lambda x: (x.root, x.rel))


def link_stays_inside(found: Found) -> bool:
    """True when a symbolic link's target resolves inside its input root."""
    target = os.path.realpath(found.abspath)
    root = os.path.realpath(found.root)
    return target == root or target.startswith(root + os.sep)
