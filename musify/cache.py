"""Incremental runs: a content-hash cache of per-file results, so an unchanged tree costs a hash.

A file's entry is keyed by everything its migration depends on:
  * its bytes, its path as shown, its kind and its output path (renames);
  * the rules digest (built-in files and user tables, direction), computed from the rule files
    without loading them, so a fully cached run never loads the rule database, and a digest
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

import os
import posixpath
import re
import struct
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from musify import __version__, digests, resources

FORMAT = "3"  # bump when the cached value or the pack changes shape
# a superset of what the front ends find (`#include`, `__has_include(` tests, Cython's `extern from`);
# compiled on first use
_INCLUDE = rb"(?:(?:include|INCLUDE)\s*(?:\(\s*)?[<\"]|extern\s+from\s+['\"]<?)([^\"'<>\n]+)"
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
            from musify import collector
            from musify.rules.reverse import load_for

            with collector.paused():  # loading the rule database makes many objects and no garbage
                self._ruleset = load_for(self._options)
            self._digest = self._ruleset.digest
        return self._ruleset


def source_digest() -> str:
    """A digest of musify's own source (once per process; memoised by stat across runs)."""
    if not _source_digest:
        root = resources.PACKAGE
        files = sorted(_own_source(root))

        def compute() -> str:
            import hashlib  # megabytes to hash: OpenSSL's (not imported by a run that never hashes them)

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
    """The entries of one input set (its roots), kept in one pack file under `<cache root>/files/`.
    The pack is rewritten, atomically, with exactly the entries the run used, so it never grows
    beyond the tree; a damaged or foreign pack is an empty one. Only the pack's index (key ->
    where the value is) is read up front; a value is unpickled when it is hit, and the new pack is
    written entry by entry as results arrive, so a run holds one file's entry at a time, not the
    tree's (a pack is a header line, then per entry two little-endian lengths, the key and the
    value: the length of the pickled result, the pickle, the new bytes)."""

    def __init__(self, options, rules_digest: str, roots: Iterable[str], directory: Path | None = None):
        directory = directory or resources.cache_dir("files")
        opts = {k: v for k, v in sorted(options.to_json().items()) if k not in _NOT_KEYED}
        import hashlib  # every file's bytes are hashed: OpenSSL's SHA-256 (imported by a run with the cache)

        from musify.rules.vocab import digest as vocab_digest

        self._sha256 = hashlib.sha256
        self._base = hashlib.sha256(f"{FORMAT}\0{source_digest()}\0{rules_digest}\0{vocab_digest()}\0{opts!r}".encode())
        where = hashlib.sha256("\0".join(sorted(set(roots))).encode()).hexdigest()[:24]
        self.path = directory / f"pack-{where}.pickle"
        self._tmp = self.path.parent / f".{self.path.name}.{os.getpid()}.tmp"
        self._src = None  # the old pack, open for reading values
        self._index = self._load()
        self._used: list[str] = []  # keys hit or put, in order
        self._kept: set[str] = set()
        self._out = None  # the new pack being written (opened at the first new entry)
        self._broken = False
        self._project = None
        self._basenames: set[str] = set()

    def _load(self) -> dict[str, tuple[int, int]]:
        index: dict[str, tuple[int, int]] = {}
        try:
            fh = open(self.path, "rb")  # noqa: SIM115 -- kept open for the run's reads
        except OSError:
            return index
        try:
            if fh.readline() != _MAGIC:
                fh.close()
                return index
            size = os.fstat(fh.fileno()).st_size
            while True:
                head = fh.read(_LENGTHS.size)
                if len(head) < _LENGTHS.size:
                    break
                klen, vlen = _LENGTHS.unpack(head)
                key = fh.read(klen).decode("ascii", "replace")
                at = fh.tell()
                if at + vlen > size:
                    break  # a truncated pack: the entries before the cut are good
                index[key] = (at, vlen)
                fh.seek(vlen, os.SEEK_CUR)
        except OSError:
            fh.close()
            return {}
        self._src = fh
        return index

    def key(self, job, data: bytes, project) -> str:
        """The entry key of one job whose file holds `data`."""
        from musify.passes.includes import resolve_project_include

        if self._project is not project:
            self._project = project
            self._basenames = {posixpath.basename(f) for f in project.files}
        h = self._base.copy()
        h.update(f"\0{job.rel}\0{job.display}\0{job.kind}\0{job.output_rel}\0".encode())
        for written in sorted(set(re.findall(_INCLUDE, data))):
            name = written.decode("utf-8", "surrogateescape")
            # only a name some project file has can resolve to one (most includes are system ones)
            if posixpath.basename(posixpath.normpath(name)) not in self._basenames:
                h.update(f"{name}\0".encode("utf-8", "surrogateescape"))
                continue
            target = resolve_project_include(project, job.rel, name)
            renamed = project.header_renames.get(target) if target else None
            h.update(f"{name}>{target}>{renamed}\0".encode("utf-8", "surrogateescape"))
        h.update(self._sha256(data).digest())
        return h.hexdigest()

    def get(self, key: str):
        """(result, new bytes) stored under `key`, or None."""
        at = self._index.get(key)
        if at is None or self._src is None:
            return None
        import pickle  # here: a run without the cache never imports it

        try:
            raw = os.pread(self._src.fileno(), at[1], at[0])
            (size,) = _SIZE.unpack_from(raw)
            result, has_data = pickle.loads(memoryview(raw)[_SIZE.size:_SIZE.size + size])
            value = result, (raw[_SIZE.size + size:] if has_data else None)
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, ValueError, TypeError,
                struct.error):
            return None
        self._keep(key, (raw,))
        return value

    def put(self, key: str, result, data: bytes | None) -> None:
        """Store (result, new bytes): the result pickled, the bytes after it as they are (a big
        file's bytes are not copied into the pickle, nor the pickle into one entry buffer)."""
        import pickle

        pickled = pickle.dumps((result, data is not None), protocol=pickle.HIGHEST_PROTOCOL)
        self._keep(key, (_SIZE.pack(len(pickled)), pickled, data or b""), new=True)

    def _keep(self, key: str, raw: tuple[bytes, ...], new: bool = False) -> None:
        """Record that the run uses this entry; from the first new entry on, write each to the new
        pack as it comes (the hits before it first, copied from the old pack)."""
        if key in self._kept:
            return
        self._kept.add(key)
        self._used.append(key)
        if self._out is None and new and not self._broken:
            self._open_out(self._used[:-1])
        self._write(key, raw)

    def _open_out(self, hits: list[str]) -> None:
        """Start the new pack with the entries hit so far, copied straight from the old pack."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._out = open(self._tmp, "wb")  # noqa: SIM115 -- closed by save()
            self._out.write(_MAGIC)
            for key in hits:
                at = self._index[key]
                self._write(key, (os.pread(self._src.fileno(), at[1], at[0]) if self._src else b"",))
        except OSError:
            self._fail()

    def _write(self, key: str, raw: tuple[bytes, ...]) -> None:
        if self._out is None:
            return
        try:
            k = key.encode("ascii")
            self._out.write(_LENGTHS.pack(len(k), sum(len(part) for part in raw)) + k)
            for part in raw:
                self._out.write(part)
        except OSError:
            self._fail()

    def _fail(self) -> None:
        """A full disk or a read-only cache only costs the next run its speed."""
        self._broken = True
        if self._out is not None:
            self._out.close()
        self._out = None
        _discard(self._tmp)

    def save(self) -> None:
        """Finish the pack when this run's entries differ from the old one. Entries are written
        as they arrive, before the run-level finalisers touch results."""
        try:
            if self._out is None and not self._broken and set(self._used) != set(self._index):
                self._open_out(self._used)  # no new entry, but some old ones were not used
            if self._out is not None:
                self._out.close()
                self._out = None
                if not self._broken:
                    os.replace(self._tmp, self.path)
        except OSError:
            self._fail()
        finally:
            if self._src is not None:
                self._src.close()
                self._src = None


    def abandon(self) -> None:
        """Remove the new pack if it was not saved (nothing after `save`)."""
        if self._out is not None:
            self._out.close()
            self._out = None
            _discard(self._tmp)
        if self._src is not None:
            self._src.close()
            self._src = None


_MAGIC = f"musify-pack {FORMAT}\n".encode()
_LENGTHS = struct.Struct("<II")
_SIZE = struct.Struct("<I")  # a value: the pickle's length, the pickle (result, has bytes), the bytes


def _discard(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass


def usable(options) -> bool:
    """Whether this run may use the cache: on unless disabled, and never in precise mode, whose
    results depend on the compilation database and the toolchain too."""
    return bool(options.cache) and not options.semantic


def stores(options, rules: Rules) -> bool:
    """Whether `run_cached` stores this run's results (and so needs each file's new bytes)."""
    return usable(options) and not rules.given


def run_cached(todo: list, rules: Rules, options, project,
               run: Callable[..., Iterable[tuple]]) -> Iterator[tuple]:
    """Yield (index, result, new bytes) for every job of `todo`: hits from the store, the misses
    through `run(misses, ruleset, options, project)` (then stored)."""
    if not stores(options, rules):
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
        del data  # not held while the misses are migrated (a big file's bytes)
        hit = store.get(key)
        if hit is None:
            keys[i] = (key, stamp, job.abspath)
            misses.append((i, job))
        else:
            yield i, hit[0], hit[1]
    try:
        if misses:
            for i, result, data in run(misses, rules.get(), options, project):
                key, stamp, path = keys.get(i, (None, None, ""))
                # stored only when the file did not change while it was migrated (else the key is stale)
                if key and result.status != "failed" and _stamp_of(path) == stamp:
                    store.put(key, result, data)
                yield i, result, data
        store.save()
    finally:
        store.abandon()  # a run interrupted (Ctrl-C, an error): its part-written pack removed


def _stamp(fd: int) -> tuple[int, int]:
    st = os.fstat(fd)
    return st.st_mtime_ns, st.st_size


def _stamp_of(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size
