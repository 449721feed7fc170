"""The in-place run's lock and journal, one of each per input root.

The lock (`.musify.lock`, an `flock` that the kernel drops when its process dies, even by
SIGKILL) keeps a second `--in-place` run off a tree another run is writing. The journal
(`.musify-journal.json`) lists the renames a run is about to make before it touches the tree;
a run that finds one knows which `x.cu`/`x.mu` pairs are its own unfinished work rather than a
user's collision, and finishes them. A run that commits by a staged swap (musify/swap.py) also
records the directory swapped, its stage, the marker that tells the two sides apart, and the
originals it replaces (size, mtime, inode), so a later run can finish taking the old tree apart
without removing anything it does not know. docs/reliability.md states what this guarantees.

Schema 2 adds the optional `swap` object to schema 1; both are read.
"""

from __future__ import annotations

import errno
import json
import os
import time
from dataclasses import dataclass, field

from musify.discover import JOURNAL_NAME, LOCK_NAME
from musify.file_tools import atomic_write, sync_dirs

SCHEMA = "musify-journal/2"
READABLE = ("musify-journal/1", SCHEMA)


class TreeBusy(RuntimeError):
    """Another in-place run holds the tree, or an interrupted one must be finished first."""


@dataclass
class RootLock:
    root: str
    fd: int
    pairs: set[tuple[str, str]] = field(default_factory=set)  # (old rel, new rel) left by a killed run
    swap: dict | None = None  # a killed run's staged swap (see musify/swap.py), to be resolved first

    @property
    def journal_path(self) -> str:
        return os.path.join(self.root, JOURNAL_NAME)


def acquire(root: str, wait_s: float) -> RootLock:
    """Take the root's lock, waiting up to `wait_s` seconds for a run that holds it."""
    import fcntl

    path = os.path.join(root, LOCK_NAME)
    deadline = time.monotonic() + max(0.0, wait_s)
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno not in (errno.EAGAIN, errno.EACCES):
                raise
            if time.monotonic() >= deadline:
                raise TreeBusy(f"{root}: another musify --in-place run is writing this tree"
                               f"{_holder(path)}; try again when it has finished") from None
            time.sleep(0.05)
            continue
        try:
            same = os.fstat(fd).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            same = False
        if same:  # not a lock file the previous holder had just removed
            break
        os.close(fd)
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())
    lock = RootLock(root, fd)
    doc = read(lock.journal_path)
    lock.pairs = {(old, new) for old, new in doc.get("renames", [])}
    lock.swap = doc.get("swap")
    return lock


def release(lock: RootLock) -> None:
    """Remove the lock file while still holding it, then let go."""
    try:
        os.unlink(os.path.join(lock.root, LOCK_NAME))
    except OSError:
        pass
    os.close(lock.fd)


def _holder(path: str) -> str:
    try:
        with open(path, encoding="ascii", errors="replace") as fh:
            pid = fh.read().strip()
    except OSError:
        return ""
    return f" (process {pid})" if pid.isdigit() else ""


def read(path: str) -> dict:
    """An interrupted run's journal ({} when there is none). A journal that cannot be read is an
    error, not an empty plan: guessing could take a half-renamed pair for a user's collision."""
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise TreeBusy(f"{path}: the journal of an interrupted run cannot be read ({exc}); "
                       "check the files it names, then remove it") from None
    if not isinstance(data, dict) or data.get("schema") not in READABLE:
        schema = data.get("schema") if isinstance(data, dict) else None
        raise TreeBusy(f"{path}: journal written by another musify version ({schema!r}); "
                       "finish that run with the same version, or remove the journal")
    return data


def write(lock: RootLock, renames: list[tuple[str, str]], rewrites: list[str], links: list[str],
          swap: dict | None = None) -> None:
    """Record the plan durably before the first change to the tree."""
    doc = {"schema": SCHEMA, "pid": os.getpid(), "renames": sorted(renames), "rewrites": sorted(rewrites),
           "links": sorted(links)}
    if swap is not None:
        doc["swap"] = swap
    atomic_write(lock.journal_path, (json.dumps(doc, separators=(",", ":")) + "\n").encode(), durable=True)
    sync_dirs([lock.root])


def finish(lock: RootLock, unfinished: list[tuple[str, str]]) -> None:
    """Drop the journal, or keep only the pairs that still exist under both names."""
    if unfinished:
        write(lock, unfinished, [], [])
        return
    try:
        os.unlink(lock.journal_path)
    except FileNotFoundError:
        return
    sync_dirs([lock.root])


def interrupted_ancestor(root: str) -> str | None:
    """An enclosing directory holding an interrupted run's journal: that run must be finished on
    its own root first (a run on a part of it would take its pairs for collisions)."""
    d = os.path.dirname(root)
    while True:
        if os.path.exists(os.path.join(d, JOURNAL_NAME)):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent
