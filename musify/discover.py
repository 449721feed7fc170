"""Find the files to migrate and say what each one is.

Walks files and directories without following symbolic links, honours `.gitignore` files and
`--exclude` globs, and classifies by name and extension: C-family source, Python, CMake, Makefile,
shell build script, pip requirements, pyproject. Everything else is still listed (kind `other`),
because an output tree must be a complete mirror that builds as a project.
"""

from __future__ import annotations

import errno
import fnmatch
import operator
import os
import re
import stat
from dataclasses import field
from pathlib import Path

from musify.classes import dataclass
from musify.frontend import compiled
from musify.patterns import lazy_pattern

KINDS = {
    ".cu": "cuda-source",
    ".cuh": "cuda-header",
    ".mu": "musa",
    ".muh": "musa",
}
CPP_EXTS = frozenset({".c", ".cc", ".cpp", ".cxx", ".h", ".hpp", ".hxx", ".inl", ".inc", ".cuinl"})
SOURCE_KINDS = frozenset({"cuda-source", "cuda-header", "cpp"})
RENAMES = {".cu": ".mu", ".cuh": ".muh"}
# build, Python and Cython files: each kind has its own front end (musify/passes/languages.py)
BUILD_KINDS = frozenset({"python", "cython", "cmake", "make", "shell", "requirements", "pyproject"})
_BUILD_EXTS = {".py": "python", ".pyx": "cython", ".pxd": "cython", ".pxi": "cython", ".cmake": "cmake",
               ".mk": "make", ".mak": "make", ".sh": "shell", ".bash": "shell"}
_BUILD_NAMES = {"CMakeLists.txt": "cmake", "Makefile": "make", "makefile": "make", "GNUmakefile": "make",
                "pyproject.toml": "pyproject"}
_BY_EXT = {**dict.fromkeys(CPP_EXTS, "cpp"), **KINDS}  # `classify`'s answer for these exact extensions
_REQUIREMENTS = lazy_pattern(globals(), "_REQUIREMENTS", r"(?:.*[-_.])?requirements(?:[-_.].*)?\.(?:txt|in)$|constraints(?:[-_.].*)?\.txt$")


def classify(path: str) -> str:
    """The file's kind, from its name (`CMakeLists.txt`, `Makefile`) or its extension."""
    dot = path.rfind(".")
    # discovery asks this of every file: a C-family extension after a character of the name
    # itself (not a separator, not a dot: `splitext` would not call `.cu` or `..cu` an extension)
    # is answered by one look-up (`_classify` is the reference, asked for everything else)
    if dot > 0 and path[dot - 1] not in "./\\":
        kind = _BY_EXT.get(path[dot:])
        if kind is not None:
            return kind
    return _classify(path)


def _classify(path: str) -> str:
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


@dataclass(frozen=True, init=False)  # __init__ below: the generated one is slow
class Found:
    """One entry of the inputs as discovery listed it (a file, a link, or what cannot be read)."""

    root: str  # the input root (a directory, or a file's parent)
    rel: str  # posix path relative to root
    kind: str  # a KINDS value, "cpp", "other", "missing" (cannot be read: see `error`) or "special"
    symlink: str | None = None  # link target, for links (never followed)
    stamp: tuple[int, ...] | None = None  # (size, mtime_ns, ctime_ns, ino, dev, nlink) when listed
    error: str | None = None  # why a "missing" or "special" entry cannot be migrated

    def __init__(self, root: str, rel: str, kind: str, symlink: str | None = None,
                 stamp: tuple[int, ...] | None = None, error: str | None = None) -> None:
        """What the dataclass would generate, the fields written to the instance dictionary
        directly (a frozen one sets each through `object.__setattr__`: every run lists every
        file, and this is a third of the generated one's cost)."""
        self.__dict__.update(root=root, rel=rel, kind=kind, symlink=symlink, stamp=stamp, error=error)

    @property
    def abspath(self) -> str:
        return join_rel(self.root, self.rel)


def join_rel(root: str, rel: str) -> str:
    """`root` joined with the posix relative path `rel` (listed names: no empty component), as
    `os.path.join(root, *rel.split("/"))` gives it, without its Python-level loop where the
    separator is "/" already (planning asks it of every file)."""
    # (indexing, not `startswith`/`endswith`: each of those parses its arguments, and this is
    # asked two or three times a file)
    if _SLASH and root and rel[:1] != "/" and "//" not in rel:
        return root + rel if root[-1] == "/" else f"{root}/{rel}"
    return os.path.join(root, *rel.split("/"))


_SLASH = os.sep == "/" and os.altsep is None
_NATIVE = compiled.load("_cwalk", "musify") if _SLASH else None  # the compiled walk, or None


@dataclass(init="fields")  # made once a run: no __init__ compiled at every start-up
class Discovery:
    """What discovery found under the inputs: the files, musify's own names, and the rest of
    each listed folder."""

    files: list[Found]
    owned: list[str] = field(default_factory=list)  # musify's own lock, journal and temporary files
    # for each input directory walked, the relpath of every entry its listings held that is not
    # one of `files` (folders, and names skipped: excluded, ignored, musify's own): with `files`,
    # the whole of each listed folder, so whether a name is taken there is known without a look
    unlisted: dict[str, set[str]] = field(default_factory=dict)


# Names musify itself creates beside the files it writes; never migrated, never copied.
LOCK_NAME = ".musify.lock"
JOURNAL_NAME = ".musify-journal.json"
# patterns as text: compiled on first use (re's cache), for a name starting with .musify
_TEMP = r"\.musify-[A-Za-z0-9_]+\.tmp\Z"
_STAGE = r"\.musify-stage-[0-9a-f]+\Z"  # a staged swap's mirror (musify/swap.py)


def is_owned_name(name: str) -> bool:
    """True for musify's lock, journal and temporary files (`.musify-*.tmp`) and the staging
    directories of a swap (`.musify-stage-*`), which are never descended into."""
    if not name.startswith(".musify"):  # every name tested: the common case costs one compare
        return False
    return name in (LOCK_NAME, JOURNAL_NAME) or re.match(_TEMP, name) is not None or re.match(_STAGE, name) is not None


def stamp_of(st: os.stat_result) -> tuple[int, ...]:
    """What says a file is still the one that was read: size, times, identity, link count."""
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev, st.st_nlink)


def printable(name: str) -> str:
    """`name` with control characters (and undecodable bytes) escaped, so a file name can never
    start a new console line or forge a diagnostic: `a\\nb.cu` is shown for a name holding a newline."""
    if name.isprintable():
        return name
    out = []
    for ch in name:
        if ch == "\\":
            out.append("\\\\")
        elif ch.isprintable():
            out.append(ch)
        elif "\udc80" <= ch <= "\udcff":
            out.append(f"\\x{ord(ch) - 0xdc00:02x}")
        else:
            out.append(repr(ch)[1:-1] if ord(ch) < 0x10000 else f"\\U{ord(ch):08x}")
    return "".join(out)


def read_regular(path: str) -> bytes:
    """The bytes of `path`, refusing anything but a regular file: opened without blocking, so a
    FIFO that replaced a file after it was listed cannot hang the run."""
    return read_regular_stated(path)[0]


# how every source is opened for reading: never blocking (a FIFO that replaced a listed file is
# refused, not waited on), never becoming a controlling terminal, not inherited by children
READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0) \
    | getattr(os, "O_BINARY", 0)


def read_regular_stated(path: str) -> tuple[bytes, os.stat_result]:
    """`read_regular`, and the file's stat as it was read (its mode and owner go to its port: no
    second look at the path). A read asks for a byte more than the stat's size, so one that gives
    exactly that size has met the file's end: no second read to find it out."""
    fd = os.open(path, READ_FLAGS)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, f"not a regular file ({special_kind(st.st_mode)})")
        chunks = []
        while True:
            chunk = os.read(fd, max(st.st_size + 1, 65536))
            if not chunk:
                break
            chunks.append(chunk)
            if len(chunks) == 1 and 0 < len(chunk) == st.st_size:
                break
        return b"".join(chunks), st
    finally:
        os.close(fd)


def special_kind(mode: int) -> str:
    for test, word in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISDIR, "a directory")):
        if test(mode):
            return word
    return "not a regular file"


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

    def has_rules(self) -> bool:
        return bool(self._rules)

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


_PREFETCHED: dict[str, object] = {}  # input root -> its folders listed ahead (`prefetch`), taken by its walk


def prefetch(inputs) -> None:
    """Have each input folder's listing read ahead by a compiled thread (`_cwalk.prefetch`), for
    the walk of this process that lists it next: the command line starts it as soon as it knows
    its inputs, so the listing's system calls are made while it imports the engine (10 ms of a
    2,857-folder tree's 16 ms walk). Nothing where the walk is not compiled; a listing no walk
    takes costs a thread's work and memory until the process ends."""
    if _NATIVE is None or not hasattr(_NATIVE, "prefetch"):
        return
    for item in inputs:
        path = os.path.abspath(item)
        if path not in _PREFETCHED and os.path.isdir(path) and not os.path.islink(path):
            started = _NATIVE.prefetch(path)
            if started is not None:
                _PREFETCHED[path] = started


def forget_prefetched() -> None:
    """Drop the listings read ahead that no walk took (each stops its thread first)."""
    _PREFETCHED.clear()


def discover(inputs: list[str], exclude: tuple[str, ...] = (), respect_gitignore: bool = True,
             stamps: bool = True) -> Discovery:
    """List every file under the inputs (sorted, deterministic), without following links.

    Nothing is skipped silently: a directory that cannot be listed and a FIFO, socket or device
    are entries of their own (kinds "missing" and "special", with `error`), so the run reports them.
    Without `stamps`, a regular file found in a directory has no `stamp` (for a caller that
    reads none: its type comes from the listing, without a stat of each file)."""
    found = Discovery([])
    for item in inputs:
        path = os.path.abspath(item)
        if os.path.isdir(path) and not os.path.islink(path):
            _walk(path, exclude, respect_gitignore, found, stamps)
            continue
        root, name = os.path.split(path)
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            found.files.append(Found(root, name, "missing"))
            continue
        except OSError as exc:
            found.files.append(Found(root, name, "missing", error=exc.strerror or str(exc)))
            continue
        found.files.append(_entry(root, name, name, st))
    return found


def _entry(root: str, rel: str, name: str, st: os.stat_result) -> Found:
    if stat.S_ISLNK(st.st_mode):
        full = os.path.join(root, *rel.split("/"))
        return Found(root, rel, "other" if os.path.isdir(full) else classify(name), os.readlink(full))
    if not stat.S_ISREG(st.st_mode):
        return Found(root, rel, "special", error=special_kind(st.st_mode))
    return Found(root, rel, classify(name), stamp=stamp_of(st))


def _walk(root: str, exclude: tuple[str, ...], respect_gitignore: bool, found: Discovery,
          stamps: bool = True) -> None:
    """Every run (a replayed one too) pays for this walk, so it asks the system as little as it
    can: a directory's type comes from its listing (no stat), only files are stat'ed (for their
    stamp; without `stamps` only what the listing does not say is a regular file, a link or a
    folder), and the exclusion and .gitignore tests are skipped when there is nothing to test.
    Each folder's path is carried beside its relpath (not joined again from its parts). Without
    stamps or exclusions, the compiled walk (`_cwalk.walk`) lists the tree in one call where it
    holds only folders and regular files (no link, no musify file, no .gitignore to honour),
    each file's `Found` made there as `Found(root, rel, classify(name))` makes it, in the order
    sorting them gives (so a run over one input sorts nothing); this walk is its reference and
    walks whatever it declines."""
    files = found.files
    unlisted = found.unlisted.setdefault(root, set())
    if _NATIVE is not None and not stamps and not exclude:
        got = _NATIVE.walk(root, respect_gitignore, Found, _BY_EXT, classify, _PREFETCHED.pop(root, None))
        if got is not None:  # else something only this walk decides about: it walks the tree
            listed, folders = got
            unlisted.update(folders)
            if files:  # another input's files before these: the whole list sorted
                files.extend(listed)
                files.sort(key=_BY_PLACE)
            else:
                files.extend(listed)  # (listed in their relpaths' order: nothing to sort)
            return
    ignore = GitIgnore()
    todo = [("", root)]
    by_name = operator.attrgetter("name")
    while todo:
        rel_dir, dirpath = todo.pop()
        try:
            with os.scandir(dirpath) as it:
                entries = sorted(it, key=by_name)
        except OSError as exc:
            files.append(Found(root, rel_dir or ".", "missing",
                               error=f"cannot list directory: {exc.strerror or exc}"))
            continue
        if respect_gitignore and any(e.name == ".gitignore" for e in entries):
            ignore.add_file(rel_dir, os.path.join(dirpath, ".gitignore"))
        ignoring = respect_gitignore and ignore.has_rules()
        prefix = f"{rel_dir}/" if rel_dir else ""
        subdirs = []
        for e in entries:
            name = e.name
            rel = prefix + name
            if name.startswith(".musify") and is_owned_name(name):
                found.owned.append(os.path.join(dirpath, name))
                unlisted.add(rel)
                continue
            st = None
            try:
                is_dir = e.is_dir(follow_symlinks=False)
                if not is_dir and (stamps or not e.is_file(follow_symlinks=False)):
                    st = e.stat(follow_symlinks=False)
                    is_dir = stat.S_ISDIR(st.st_mode)  # (a directory that replaced the entry)
            except OSError as exc:
                files.append(Found(root, rel, "missing", error=exc.strerror or str(exc)))
                continue
            if (is_dir and name == ".git") or (exclude and excluded(rel, exclude)) \
                    or (ignoring and ignore.ignored(rel, is_dir)):
                unlisted.add(rel)
                continue
            if is_dir:
                unlisted.add(rel)
                subdirs.append((rel, os.path.join(dirpath, name)))
            else:
                files.append(_entry(root, rel, name, st) if st is not None else Found(root, rel, classify(name)))
        todo.extend(reversed(subdirs))
    files.sort(key=_BY_PLACE)


_BY_PLACE = operator.attrgetter("root", "rel")  # the listing's order: `(f.root, f.rel)`, read in C


def link_stays_inside(found: Found) -> bool:
    """True when a symbolic link's target resolves inside its input root."""
    target = os.path.realpath(found.abspath)
    root = os.path.realpath(found.root)
    return target == root or target.startswith(root + os.sep)
