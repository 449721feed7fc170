"""Files written whole or not at all, and the tools around them: a temporary beside the target
renamed over it (permissions and owner kept, so a file is always fully old or fully new), a
copy, a link, durability (`sync_files`, `sync_dirs`), and what `--diff` and `--stdout` print.
The in-place writer (musify/inplace.py), the journal and the run record are built from these;
the output tree's ports are written by `musify.writers`.
"""

from __future__ import annotations

import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Iterable
from typing import TextIO

from musify.out_folders import _umask, ensure_dir


def atomic_write(path: str, data: bytes | Iterable[bytes], mode_from: str | None = None, durable: bool = True) -> None:
    """Write `data` to `path` atomically; copy permission bits from `mode_from` when given.
    `data` may be pieces (written one by one: a big run record is never one string).

    `durable` adds an fsync before the rename, so even a power cut leaves the old or the new
    file: needed when replacing a user's source in place, not when filling a fresh output tree
    (where it costs more than the migration itself). There, a file that already holds exactly
    `data` with the right permissions is left alone, so re-running into the same output tree
    (an incremental run) rewrites only what changed."""
    if not durable and isinstance(data, bytes) and _holds(path, data, mode_from):
        return
    tmp = write_temp(path, data, mode_from, durable)
    try:
        os.replace(tmp, path)
    except BaseException:
        discard(tmp)
        raise


def write_temp(path: str, data: bytes | Iterable[bytes], mode_from: str | None = None, durable: bool = False) -> str:
    """A temporary file beside `path` holding `data`, with the permission bits (and, where the
    caller may set them, the owner and group) of `mode_from` or of `path`; returns its name.
    The caller renames it into place (or discards it)."""
    directory = os.path.dirname(path) or "."
    ensure_dir(directory)
    fd, tmp = tempfile.mkstemp(prefix=".musify-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            if isinstance(data, bytes):
                fh.write(data)
            else:
                write_pieces(fh, data)
            fh.flush()
            if durable:
                os.fsync(fh.fileno())
        keep_attributes(tmp, mode_from if mode_from and os.path.exists(mode_from) else path)
    except BaseException:
        discard(tmp)
        raise
    return tmp


# pieces a second thread may hold unwritten while the caller makes the next ones
PIECES_AHEAD = 2


def write_pieces(fh, pieces: Iterable[bytes]) -> None:
    """Write `pieces` to `fh` in order: the first as it comes, the rest by a second thread while
    the caller's iterator makes the next ones (the record's pieces are rendered with the
    interpreter's lock, and a write gives it away: on the replicated corpus the 15 MB record's
    writes were 10 ms of the run's serial end, now made beside its rendering). At most
    `PIECES_AHEAD` pieces wait; a write's error is raised here once the thread has stopped, and
    an error of the iterator once the pieces before it are written."""
    pieces = iter(pieces)
    first = next(pieces, None)
    if first is None:
        return
    fh.write(first)
    second = next(pieces, None)
    if second is None:
        return
    import queue
    import threading

    waiting: queue.Queue = queue.Queue(PIECES_AHEAD)
    failed: list[BaseException] = []

    def drain() -> None:
        while (piece := waiting.get()) is not None:
            if not failed:
                try:
                    fh.write(piece)
                except BaseException as exc:  # noqa: BLE001 -- raised in the caller's thread
                    failed.append(exc)

    writer = threading.Thread(target=drain, name="musify-pieces", daemon=True)
    writer.start()
    try:
        waiting.put(second)
        for piece in pieces:
            if failed:
                break
            waiting.put(piece)
    finally:
        waiting.put(None)
        writer.join()
    if failed:
        raise failed[0]


def stat_or_none(path: str) -> os.stat_result | None:
    """The stat of `path` (links followed), or None when it cannot be had."""
    try:
        return os.stat(path)
    except OSError:
        return None


def keep_attributes(tmp: str, source: str) -> None:
    """Give `tmp` the mode bits, owner and group of `source` (or the umask's mode when there is
    none). Changing the owner needs privilege; without it the file is the caller's, as any
    editor's save would make it."""
    try:
        st = os.stat(source)
    except OSError:
        os.chmod(tmp, 0o666 & ~_umask())
        return
    own_like(tmp, st)


def own_like(path: str | int, st: os.stat_result) -> None:
    """Give `path` (or the open file `path`) the owner, group and mode bits of `st`; the owner
    (or the group) only where the caller may set it."""
    mine = os.fstat(path) if isinstance(path, int) else os.lstat(path)
    if (mine.st_uid, mine.st_gid) != (st.st_uid, st.st_gid) and hasattr(os, "chown"):
        try:
            os.chown(path, st.st_uid, st.st_gid)
        except PermissionError:
            try:
                os.chown(path, -1, st.st_gid)  # a group the caller belongs to is allowed
            except PermissionError:
                pass
    os.chmod(path, stat.S_IMODE(st.st_mode))


def discard(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def sync_files(paths: list[str]) -> None:
    """Make the data of `paths` durable with as few flushes as possible: one `syncfs` per file
    system on Linux (a batch of 20,000 small files costs one flush, not 20,000), else one fsync
    per file."""
    syncfs = _syncfs()
    seen: set[int] = set()
    for path in paths:
        if syncfs is not None and os.stat(path).st_dev in seen:
            continue
        fd = os.open(path, os.O_RDONLY)
        try:
            if syncfs is None or syncfs(fd) != 0:
                os.fsync(fd)
            else:
                seen.add(os.fstat(fd).st_dev)
        finally:
            os.close(fd)


def sync_dirs(dirs) -> None:
    """fsync each directory once, so the renames and unlinks made in it survive a power cut."""
    for d in sorted(set(dirs)):
        try:
            fd = os.open(d, os.O_RDONLY)
        except OSError:
            continue
        try:
            os.fsync(fd)
        except OSError:
            pass
        finally:
            os.close(fd)


_SYNCFS: list = []


def syncfs_missing() -> bool:
    """True where sync_files() falls back to one fsync per file (no Linux syncfs)."""
    return _syncfs() is None


def _syncfs():
    if not _SYNCFS:
        fn = None
        if sys.platform.startswith("linux"):
            try:
                import ctypes

                fn = ctypes.CDLL(None, use_errno=True).syncfs
                fn.argtypes = [ctypes.c_int]
            except (OSError, AttributeError):
                fn = None
        _SYNCFS.append(fn)
    return _SYNCFS[0]


def _holds(path: str, data: bytes, mode_from: str | None, like: os.stat_result | None = None) -> bool:
    """Whether `path` is a regular file with exactly `data` and the permission bits of `mode_from`
    (or of `like`, its stat when the caller has it)."""
    try:
        st = os.lstat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_size != len(data):
            return False
        if like is None and mode_from:
            like = os.stat(mode_from)
        if like is not None and stat.S_IMODE(like.st_mode) != stat.S_IMODE(st.st_mode):
            return False
        with open(path, "rb") as fh:
            return fh.read() == data
    except OSError:
        return False


def copy_file(src: str, dst: str) -> None:
    """copy2 (bytes, permissions, times) through a temporary renamed into place, skipped when
    `dst` is already such a copy of `src`."""
    try:
        s, d = os.stat(src), os.lstat(dst)
        if stat.S_ISREG(d.st_mode) and (s.st_size, s.st_mtime_ns, s.st_mode) == (d.st_size, d.st_mtime_ns, d.st_mode):
            return
    except OSError:
        pass
    directory = os.path.dirname(dst) or "."
    ensure_dir(directory)
    fd, tmp = tempfile.mkstemp(prefix=".musify-", suffix=".tmp", dir=directory)
    os.close(fd)
    try:  # through a temporary, like every port: a kill never leaves half a copy under its name
        shutil.copy2(src, tmp, follow_symlinks=False)
        os.replace(tmp, dst)
    except BaseException:
        discard(tmp)
        raise


def copy_link(link_target: str, dst: str) -> None:
    ensure_dir(os.path.dirname(dst) or ".")
    if os.path.lexists(dst):
        os.unlink(dst)
    os.symlink(link_target, dst)


def retarget_link(link_text: str, old_name: str, new_name: str) -> str | None:
    """The text a symbolic link needs once the file it names is renamed from `old_name` to
    `new_name` (basenames), or None when the link does not end in that name (reported instead)."""
    head, _, last = link_text.rpartition("/")
    if last != old_name:
        return None
    return f"{head}/{new_name}" if head or link_text.startswith("/") else new_name


def replace_link(path: str, target: str) -> None:
    """Point the symbolic link `path` at `target` atomically (a new link renamed over it)."""
    tmp = os.path.join(os.path.dirname(path), f".musify-{os.getpid()}_{os.urandom(4).hex()}.tmp")
    os.symlink(target, tmp)
    try:
        os.replace(tmp, path)
    except BaseException:
        discard(tmp)
        raise


def unified_diff(old: bytes, new: bytes, old_name: str, new_name: str) -> str:
    import difflib  # only --diff needs it: not imported with every run

    a = old.decode("utf-8", "surrogateescape").splitlines(keepends=True)
    b = new.decode("utf-8", "surrogateescape").splitlines(keepends=True)
    lines = difflib.unified_diff(a, b, "a/" + old_name, "b/" + new_name)
    out = []
    for line in lines:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def write_stdout(data: bytes, stream: TextIO | None = None) -> None:
    stream = stream or sys.stdout
    stream.flush()
    buf = getattr(stream, "buffer", None)
    if buf is not None:
        buf.write(data)
        buf.flush()
    else:
        stream.write(data.decode("utf-8", "surrogateescape"))
