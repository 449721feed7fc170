"""The whole-run memo: re-running on an unchanged tree replays the last run instead of redoing it.

`musify/cache.py` keeps each file's result, so an unchanged file is never migrated twice; what a
fully cached run still did was everything around migration (planning, the run-level finalisers,
serialising a record of every edit, comparing the output tree). The memo sits on top of it and
keeps, per run, what that work produced:

  * the key: FORMAT, musify's version and source digest, the rules and vocabulary digests, every
    option, the working directory, the command line, its output targets (the `-o` tree, the
    `--json` file, real paths included), the failure severity, and the discovered input set: each entry's root,
    path, kind, link text (and whether a link stays inside its root) and, for a regular file, its
    permission bits and a SHA-256 of its bytes. Every file is read and hashed on every run: a time
    stamp is never trusted to say the bytes are unchanged;
  * the value: the run record's exact bytes (the file the normal path wrote, copied; a hit writes
    them again with the run's own `started` and `seconds` spliced in at the positions found when
    they were stored), the diagnostics as printed, the totals and reasons the summary shows, the
    exit code, and a manifest of the output tree (each file written, by `lstat`: type, mode,
    size, mtime, ctime, inode).

A hit re-checks every output by `lstat`; one that was removed, touched or replaced makes it a
miss, and the normal path (per-file cache: nothing re-migrated) rewrites it and stores a new memo.
Only plain `musify migrate ... -o DIR` and `musify check` runs are memoised: `--report`, `--sarif`,
`--analyze`, `--verify`, `-v`, `--in-place`, `--stdout`, `--diff`, `--no-cache` and precise mode
always take the normal path, as does a run in which some file failed (a failure may be passing: a
full disk, a permission). A value is stored only if the inputs hash the same after the run as
before it (no file changed while it was read). One memo slot per (working directory, command
name, inputs, targets) under `<cache root>/runs/`, overwritten by the next run of that shape
(other options, say), so the folder never holds more than one record copy per shape; deleting it
is always safe. The memo lives at the CLI level, not in `musify.api.migrate`: what it replays is
what the command prints and writes.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import pickle
import shutil
import stat
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from musify import cache, resources
from musify.config import run_excludes
from musify.discover import READ_FLAGS, Discovery, Found, discover, link_stays_inside
from musify.options import Options

FORMAT = "1"  # bump when the stored value changes shape


class _Unmemoisable(Exception):
    """An input that cannot be hashed (unreadable, replaced by a FIFO): the normal path reports it."""


@dataclass
class Request:
    """One command line, as far as the memo needs it."""

    name: str  # "migrate" or "check"
    paths: list[str]
    options: Options
    mode: str  # "out" or "none"
    out_dir: str | None
    json_path: str | None
    command: str  # as the record shows it
    fail_on: str
    fail_on_change: bool = False


@dataclass
class Summary:
    """What the console summary shows (`musify.console.print_totals`), less the run's time."""

    command: str
    totals: dict
    problems: list[str]


@dataclass
class _Value:
    key: str
    exit_code: int
    console: str  # everything printed to stderr before the summary
    summary: Summary
    outputs: list[tuple[str, tuple[int, ...]]]  # output file -> its lstat stamp
    record: tuple[str, int, int, int, int] | None  # (file, started at, its length, seconds at, its length)
    format: str = FORMAT


@dataclass
class Memo:
    """The memo of one request: `found` is the discovery the normal path reuses on a miss."""

    request: Request
    found: Discovery
    key: str
    slot: Path
    t0: float = field(default_factory=time.perf_counter)
    started: str = ""

    def replay(self, quiet: bool) -> int | None:
        """Replay a stored run (console, record) and return its exit code; None on a miss."""
        value = self._load()
        if value is None or value.key != self.key or not _outputs_intact(value.outputs):
            return None
        data = None
        if value.record is not None:
            name, at_started, n_started, at_seconds, n_seconds = value.record
            try:
                data = (self.slot.parent / name).read_bytes()
            except OSError:
                return None
        sys.stderr.write(value.console)
        if data is not None and self.request.json_path:
            started = json.dumps(self.started).encode()
            seconds = json.dumps(round(time.perf_counter() - self.t0, 6)).encode()
            from musify.file_tools import atomic_write

            atomic_write(self.request.json_path, b"".join((
                data[:at_started], started, data[at_started + n_started:at_seconds], seconds,
                data[at_seconds + n_seconds:])))
        if not quiet:
            from musify.console import print_totals

            print_totals(value.summary.command, value.summary.totals, value.summary.problems,
                         time.perf_counter() - self.t0)
        return value.exit_code

    def store(self, record, console: str, report=None) -> None:
        """Keep this run (after the normal path wrote its record file); never raises. `report`:
        the run's `Report` where the caller made one (its totals are then not summed again)."""
        if any(f.status == "failed" for f in record.files):
            return
        try:
            if _key(self.request, self.found) != self.key:  # an input changed during the run
                return
        except (_Unmemoisable, OSError):
            return
        from musify.report.summary import Report

        report = report if report is not None else Report(record)
        value = _Value(self.key, record.exit_code, console, Summary(record.command, report.totals, report.problems()),
                       _manifest(self.request, record), None)
        tmp = self.slot.with_name(f".{self.slot.name}.{os.getpid()}.tmp")
        try:
            self.slot.parent.mkdir(parents=True, exist_ok=True)
            old = self._load()
            if self.request.json_path:
                value.record = self._keep_record(record)
                if value.record is None:
                    return
            tmp.write_bytes(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
            os.replace(tmp, self.slot)
        except OSError:  # a full disk or a read-only cache costs the next run its speed, nothing else
            _remove(tmp, self.slot.parent / value.record[0] if value.record else None)
            return
        if old is not None and old.record is not None:  # the copy the replaced memo held
            _remove(self.slot.parent / old.record[0])

    def _keep_record(self, record) -> tuple[str, int, int, int, int] | None:
        """Copy the record file the normal path wrote; find where its `started` and `seconds` are."""
        started = b'"started": ' + json.dumps(record.started).encode()
        seconds = b'"seconds": ' + json.dumps(round(record.seconds, 6)).encode()
        name = f"{self.slot.stem}.{os.urandom(6).hex()}.json"
        tmp = self.slot.parent / f".{name}.tmp"
        with open(self.request.json_path, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                return None
            data = b""  # the header only: a big run's record is copied, never read whole
            while b'"files"' not in data:
                chunk = fh.read(1 << 20)
                if not chunk:
                    break
                data += chunk
            # a string value holds no bare quote, so the first `"started": ` is the top-level key; the
            # header (and both keys) come before the file list, whose entries have their own "seconds"
            a, b, files = data.find(started), data.find(seconds), data.find(b'"files"')
            if not (0 <= a < b < files):
                return None  # a record shape this memo does not know: not kept, never wrong
            fh.seek(0)
            with open(tmp, "wb") as out:
                shutil.copyfileobj(fh, out, 1 << 20)
        os.replace(tmp, self.slot.parent / name)
        return (name, a + 11, len(started) - 11, b + 11, len(seconds) - 11)

    def _load(self) -> _Value | None:
        try:
            value = pickle.loads(self.slot.read_bytes())
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, ValueError, TypeError):
            return None
        return value if isinstance(value, _Value) and value.format == FORMAT else None


def _remove(*paths: Path | None) -> None:
    for path in paths:
        if path is not None:
            with contextlib.suppress(OSError):
                path.unlink(missing_ok=True)


def eligible(request: Request) -> bool:
    """Whether this run may be memoised: `migrate -o` or `check`, with the cache on (the caller
    rules out reports, SARIF, analysis, verify and -v)."""
    return cache.usable(request.options) and (request.name, request.mode) in (("migrate", "out"), ("check", "none"))


def open_memo(request: Request) -> Memo | None:
    """Discover and hash the inputs; None when some input cannot be hashed (the normal path says why)."""
    t0 = time.perf_counter()
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    found = discover(request.paths, run_excludes(request.paths, request.options), request.options.respect_gitignore)
    try:
        key = _key(request, found)
    except (_Unmemoisable, OSError):
        return None
    where = hashlib.sha256(repr((os.getcwd(), request.name, request.paths, _real(request.out_dir),
                                 _real(request.json_path))).encode()).hexdigest()[:24]
    return Memo(request, found, key, resources.cache_dir("runs") / f"run-{where}.pickle", t0, started)


def _real(path: str | None) -> str | None:
    return os.path.realpath(path) if path else None


def _key(request: Request, found: Discovery) -> str:
    from musify.rules.reverse import digest_for
    from musify.rules.vocab import digest as vocab_digest

    o = request.options
    h = hashlib.sha256(repr((FORMAT, cache.source_digest(), digest_for(o), vocab_digest(), sorted(o.to_json().items()),
                             os.getcwd(), request.name, request.command, request.paths,
                             [_real(p) for p in request.paths], request.mode, request.out_dir,
                             _real(request.out_dir), request.json_path, _real(request.json_path),
                             request.fail_on, request.fail_on_change)).encode())
    for f in found.files:  # NUL ends each field: no name holds one
        h.update(f"\1{f.root}\0{f.rel}\0{f.kind}\0{f.symlink}\0{f.error}\0".encode("utf-8", "surrogateescape"))
        if f.symlink is not None:
            h.update(b"inside" if link_stays_inside(f) else b"outside")
        elif f.stamp is not None:
            _hash_file(h, f)
    return h.hexdigest()


def _hash_file(h, f: Found) -> None:
    fd = os.open(f.abspath, READ_FLAGS)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _Unmemoisable(f.abspath)
        h.update(b"\0%d\0%d\0" % (st.st_mode, st.st_size))
        while True:
            chunk = os.read(fd, st.st_size + 1 if st.st_size < 1 << 24 else 1 << 24)
            if not chunk:
                break
            h.update(chunk)
    finally:
        os.close(fd)


def _stamp(path: str) -> tuple[int, ...] | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return (st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)


def _manifest(request: Request, record) -> list[tuple[str, tuple[int, ...]]]:
    """Every file the run left in the output tree, with its stamp (nothing outside `mode == "out"`)."""
    if request.mode != "out" or not request.out_dir:
        return []
    out = []
    for f in record.files:
        path = os.path.join(request.out_dir, *f.output_path.split("/"))
        st = _stamp(path)
        if st is not None:
            out.append((path, st))
    return out


def _outputs_intact(outputs: list[tuple[str, tuple[int, ...]]]) -> bool:
    return all(_stamp(path) == st for path, st in outputs)
