"""Incremental runs: a content-hash cache of per-file results, so an unchanged tree costs a hash.

A file's entry is keyed by everything its migration depends on:
  * its bytes, its path as shown, its kind and its output path (renames);
  * the rules digest (built-in files and user tables, direction), computed from the rule files
    without loading them, so a fully cached run never unpickles the rule database, and a digest
    of the front ends' vocabulary tables (`rules/**/*.toml`, `musify.rules.vocab`);
  * the options that change output (all of `Options` except `jobs`, `cache`, `lock_wait`);
  * the project facts the file sees: each include it writes, the project file that include
    resolves to and that file's new name (a header renamed, or no longer renamed, re-migrates
    the files that include it);
  * musify's version and a digest of its own source (Python and the compiled scanner's C), so an
    upgrade or a local edit starts afresh.
The value is the per-file result exactly as the runner returned it (before the run-level
finalisers, which run again on every run: a header that newly declares a name changes the MU1001
of the files that use it without re-migrating them) and the output bytes, so a cached run writes
the same bytes and the same record as a fresh one. Entries live under the cache root
(`musify.resources`), in `files/`, one pack per set of input roots; deleting that folder is
always safe.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import posixpath
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from musify import __version__, digests, resources

FORMAT = "1"  # bump when the cached value changes shape
_INCLUDE = re.compile(rb"include\s*[<\"]([^\">\n]+)[\">]")  # a superset of what the scanner finds
_NOT_KEYED = frozenset({"jobs", "cache", "lock_wait"})  # options that cannot change a file's result
_source_digest: list[str] = []


class Rules:
    """The run's RuleSet, loaded the first time a file misses the cache (never on a fully cached run)."""

    def __init__(self, options, given=None):
        self._options = options
        self._ruleset = given
        self._digest = given.digest if given is not None else None
        self.given = given is not None  # a caller's own RuleSet: its digest may not name its content

    @property
    def digest(self) -> str:
        if self._digest is None:
            from musify.rules.reverse import digest_for

            try:
                self._digest = digest_for(self._options)
            except OSError:  # an unreadable table: loading it gives the proper error
                self._digest = self.get().digest
        return self._digest

    def get(self):
        if self._ruleset is None:
            from musify.rules.reverse import load_for

            self._ruleset = load_for(self._options)
            self._digest = self._ruleset.digest
        return self._ruleset


def source_digest() -> str:
    """A digest of musify's own source (once per process; memoised by stat across runs)."""
    if not _source_digest:
        root = resources.PACKAGE
        files = sorted(_own_source(root))

        def compute() -> str:
            h = hashlib.sha256(__version__.encode())
            for path in files:
                h.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
            return h.hexdigest()

        _source_digest.append(digests.memoised("source", root, files, compute))
    return _source_digest[0]


def _own_source(root: Path) -> Iterator[Path]:
    """musify's Python and C files, less the data a wheel carries (`musify/data/`: rules, shims,
    docs, each keyed on its own) and compiled leftovers."""
    for directory, subdirs, names in os.walk(root):
        if directory == str(root):
            subdirs[:] = [d for d in subdirs if d != "data"]
        subdirs[:] = [d for d in subdirs if d != "__pycache__"]
        for name in names:
            if name.endswith((".py", ".c", ".h")):
                yield Path(directory, name)


class Store:
    """The entries of one input set (its roots), kept in one pack file under `<cache root>/files/`:
    one read and one unpickle per run rather than one per file. The pack is rewritten, atomically,
    with exactly the entries the run used, so it never grows beyond the tree; a damaged or foreign
    pack is an empty one."""

    def __init__(self, options, rules_digest: str, roots: Iterable[str], directory: Path | None = None):
        directory = directory or resources.cache_dir("files")
        opts = {k: v for k, v in sorted(options.to_json().items()) if k not in _NOT_KEYED}
        from musify.rules.vocab import digest as vocab_digest

        self._base = hashlib.sha256(f"{FORMAT}\0{source_digest()}\0{rules_digest}\0{vocab_digest()}\0{opts!r}".encode())
        where = hashlib.sha256("\0".join(sorted(set(roots))).encode()).hexdigest()[:24]
        self.path = directory / f"pack-{where}.pickle"
        self._entries = self._load()
        self._used: dict[str, tuple] = {}
        self._changed = False
        self._project = None
        self._basenames: set[str] = set()

    def _load(self) -> dict:
        try:
            with open(self.path, "rb") as fh:
                value = pickle.load(fh)
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, ValueError):
            return {}
        ok = isinstance(value, tuple) and len(value) == 2 and value[0] == FORMAT and isinstance(value[1], dict)
        return value[1] if ok else {}

    def key(self, job, data: bytes, project) -> str:
        """The entry key of one job whose file holds `data`."""
        from musify.passes.includes import resolve_project_include

        if self._project is not project:
            self._project = project
            self._basenames = {posixpath.basename(f) for f in project.files}
        h = self._base.copy()
        h.update(f"\0{job.rel}\0{job.display}\0{job.kind}\0{job.output_rel}\0".encode())
        for written in sorted(set(_INCLUDE.findall(data))):
            name = written.decode("utf-8", "surrogateescape")
            # only a name some project file has can resolve to one (most includes are system ones)
            if posixpath.basename(posixpath.normpath(name)) not in self._basenames:
                h.update(f"{name}\0".encode("utf-8", "surrogateescape"))
                continue
            target = resolve_project_include(project, job.rel, name)
            renamed = project.header_renames.get(target) if target else None
            h.update(f"{name}>{target}>{renamed}\0".encode("utf-8", "surrogateescape"))
        h.update(hashlib.sha256(data).digest())
        return h.hexdigest()

    def get(self, key: str):
        """(result, new bytes) stored under `key`, or None."""
        value = self._entries.get(key)
        if value is not None:
            self._used[key] = value
        return value

    def put(self, key: str, result, data: bytes | None) -> None:
        self._used[key] = (result, data)
        self._changed = True

    def save(self) -> None:
        """Write the pack when this run's entries differ from it; a full disk or a read-only cache
        only costs the next run its speed. Called before the run-level finalisers touch results."""
        if not self._changed and len(self._used) == len(self._entries):
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.parent / f".{self.path.name}.{os.getpid()}.tmp"
            with open(tmp, "wb") as fh:
                pickle.dump((FORMAT, self._used), fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, self.path)
        except OSError:
            pass


def usable(options) -> bool:
    """Whether this run may use the cache: on unless disabled, and never in precise mode, whose
    results depend on the compilation database and the toolchain too."""
    return bool(options.cache) and not options.semantic


def run_cached(todo: list, rules: Rules, options, project,
               run: Callable[..., Iterable[tuple]]) -> Iterator[tuple]:
    """Yield (index, result, new bytes) for every job of `todo`: hits from the store, the misses
    through `run(misses, ruleset, options, project)` (then stored)."""
    if not usable(options) or rules.given:
        yield from run(todo, rules.get(), options, project)
        return
    store = Store(options, rules.digest, (job.root for _, job in todo))
    misses, keys = [], {}
    for i, job in todo:
        try:
            with open(job.abspath, "rb") as fh:
                stamp = _stamp(fh.fileno())
                data = fh.read()
        except OSError:
            misses.append((i, job))  # the runner reports it
            continue
        key = store.key(job, data, project)
        hit = store.get(key)
        if hit is None:
            keys[i] = (key, stamp, job.abspath)
            misses.append((i, job))
        else:
            yield i, hit[0], hit[1]
    if misses:
        for i, result, data in run(misses, rules.get(), options, project):
            key, stamp, path = keys.get(i, (None, None, ""))
            # stored only when the file did not change while it was migrated (else the key is stale)
            if key and result.status != "failed" and _stamp_of(path) == stamp:
                store.put(key, result, data)
            yield i, result, data
    store.save()


def _stamp(fd: int) -> tuple[int, int]:
    st = os.fstat(fd)
    return st.st_mtime_ns, st.st_size


def _stamp_of(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size
