"""Put migrated files where the user asked: an output tree, stdout, or a diff; and the
file-level tools the in-place writer (musify/inplace.py) is built from.

Every replacement is a temporary file beside the target renamed over it, permissions and owner
kept, so a file is always fully old or fully new. Nothing is written in `--diff` or `--stdout`
mode.
"""

from __future__ import annotations

import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Iterable
from typing import TextIO

from musify.discover import join_rel
from musify.frontend import compiled


def atomic_write(path: str, data: bytes | Iterable[str], mode_from: str | None = None, durable: bool = True) -> None:
    """Write `data` to `path` atomically; copy permission bits from `mode_from` when given.
    `data` may be pieces of text (written as UTF-8 one by one: a big run record is never one string).

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


def write_temp(path: str, data: bytes | Iterable[str], mode_from: str | None = None, durable: bool = False) -> str:
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
                for piece in data:
                    fh.write(piece.encode("utf-8"))
            fh.flush()
            if durable:
                os.fsync(fh.fileno())
        keep_attributes(tmp, mode_from if mode_from and os.path.exists(mode_from) else path)
    except BaseException:
        discard(tmp)
        raise
    return tmp


def write_into(out_dir: str, rel: str, data: bytes | None, source: str) -> None:
    """Put one file of an output tree in place: `data` (permissions and owner from `source`), or,
    when there is nothing new, a copy of `source`. `rel` is the posix path inside `out_dir`."""
    write_stated(out_dir, rel, data, source, stat_or_none(source) if data is not None else None)


def write_stated(out_dir: str, rel: str, data: bytes | None, source: str, st: os.stat_result | None) -> None:
    """`write_into` given the source's stat (None: it could not be read; the target keeps its
    own attributes, or gets the umask's mode).

    A port is written as `atomic_write` would (a temporary beside it renamed over it; a file that
    already holds `data` with the right mode is left alone), by the shortest way a big tree
    allows: a fixed temporary name per folder (no random names to try), created with its final
    mode where the umask allows it and checked through the open file (no path looked up twice),
    and no look at the target where its folder was made by this run (nothing can be there yet)."""
    directory, dst = _place(out_dir, rel)
    if data is None:
        copy_file(source, dst)
        return
    made = _MADE.get(directory)
    if not made and st is not None and _holds(dst, data, None, st):
        return  # (a folder not known yet is asked for the file first: on a re-run it is there)
    if made is None:
        _made_now(directory)
    st = st or stat_or_none(dst)  # the target's attributes when the source has gone
    if _CPORT is not None and _put_native(directory, dst, data, st):
        return
    tmp = _port_temp(directory, data, st)
    try:
        os.replace(tmp, dst)
    except BaseException:
        discard(tmp)
        raise


def write_stated_many(out_dir: str, ports: list[tuple[str, bytes | None, str, os.stat_result | None]]) -> list[str | None]:
    """`write_stated` for each (rel, data, source, st) of `ports`, in order; the cause of each
    failed write (None: written). What the compiled `_cport.put_batch` can write (new bytes, into
    a folder this run made or has not met yet) is written by one call that gives the interpreter's
    lock away once for all of them: the -j1 writer thread then seldom takes the lock from the
    migrating thread. The rest, and whatever that call hands back (a folder that was there
    before, whose files must be looked at first; a taken temporary name; a mode or owner to set
    through the open file), goes through `write_stated` itself, so the tree is the same."""
    causes: list[str | None] = [None] * len(ports)
    batch: list[tuple] = []
    where: list[tuple[int, str, str]] = []  # per batched port: its index, folder, target
    for k, (rel, data, source, st) in enumerate(ports):
        directory, dst = _place(out_dir, rel)
        made = _MADE.get(directory)
        if _CPORT is None or data is None or made is False:
            _flush_batch(batch, where, ports, out_dir, causes)
            causes[k] = _write_one(out_dir, rel, data, source, st)
            continue
        mode, owner, first = _attributes(st)
        uid, gid = owner if owner is not None else (-1, -1)
        tmp = join_rel(directory, _TEMP_NAME[0] if _TEMP_NAME else _temp_name())
        batch.append((directory, made is None, tmp, dst, data, first, mode, uid, gid))
        where.append((k, directory, dst))
    _flush_batch(batch, where, ports, out_dir, causes)
    return causes


def _place(out_dir: str, rel: str) -> tuple[str, str]:
    """The folder and the path of the port `rel` (a posix path) in the tree `out_dir`, as
    `os.path.join` makes them, joined by `discover.join_rel` (the writer thread asks this of
    every port while it holds the interpreter's lock: `os.path.join` took three times as long)."""
    head, _, name = rel.rpartition("/")
    directory = join_rel(out_dir, head) if head else (out_dir or ".")
    return directory, join_rel(directory, name)


def _write_one(out_dir: str, rel: str, data: bytes | None, source: str, st: os.stat_result | None) -> str | None:
    try:
        write_stated(out_dir, rel, data, source, st)
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


def _flush_batch(batch: list[tuple], where: list[tuple[int, str, str]],
                 ports: list[tuple[str, bytes | None, str, os.stat_result | None]], out_dir: str,
                 causes: list[str | None]) -> None:
    """Write the gathered ports by one `_cport.put_batch` call, then finish what it handed back."""
    if not batch:
        return
    answers, made = _CPORT.put_batch(batch)
    for folder in made:
        _MADE[os.fsdecode(folder)] = True
    for (k, directory, dst), answer, item in zip(where, answers, batch):
        if answer == -1:
            continue
        rel, data, source, st = ports[k]
        if isinstance(answer, tuple):  # (errno, path): failed, nothing left behind
            causes[k] = os.strerror(answer[0])
        elif answer >= 0:  # written, but its mode or owner is not yet the port's: set through it
            causes[k] = _finish_open(answer, item[2], dst, st)
        else:  # -2: a taken temporary name; -3: a folder that was there (or could not be made)
            causes[k] = _write_one(out_dir, rel, data, source, st)
    batch.clear()
    where.clear()


def _finish_open(fd: int, tmp: str, dst: str, st: os.stat_result | None) -> str | None:
    mode, owner, _ = _attributes(st)
    try:
        _own_and_rename(fd, tmp, dst, mode, owner, st)
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


def _attributes(st: os.stat_result | None) -> tuple[int, tuple[int, int] | None, int]:
    """A port's mode and owner (`st`'s; the umask's mode and no owner when None) and the mode to
    create it with: its final one only when the file is to be the caller's own (else 0600 until
    its owner is set), so it is never readable by more than the finished file."""
    umask = _run_umask()
    if st is None:
        mode, owner = 0o666 & ~umask, None
    else:
        mode, owner = stat.S_IMODE(st.st_mode), (st.st_uid, st.st_gid)
    first = mode if (owner is None or owner == _ids()) and not mode & (~0o777 | umask) else 0o600
    return mode, owner, first


def _put_native(directory: str, dst: str, data: bytes, st: os.stat_result | None) -> bool:
    """`_port_temp` and the rename by one call of the compiled `_cport.put`, which makes all
    their system calls with the interpreter's lock given away once (the writer thread of a -j1
    run otherwise wins it back from the migrating thread after each of them). False, having
    made nothing, when the fixed temporary name is taken: the Python path makes a unique one."""
    mode, owner, first = _attributes(st)
    tmp = os.path.join(directory, _TEMP_NAME[0] if _TEMP_NAME else _temp_name())
    uid, gid = owner if owner is not None else (-1, -1)
    fd = _CPORT.put(tmp, dst, data, first, mode, uid, gid)
    if fd == -2:
        return False
    if fd >= 0:  # written, but its mode or owner is not yet the port's: set them through it
        _own_and_rename(fd, tmp, dst, mode, owner, st)
    return True


def _own_and_rename(fd: int, tmp: str, dst: str, mode: int, owner: tuple[int, int] | None,
                    st: os.stat_result | None) -> None:
    """Set a written temporary's mode and owner through its descriptor, close it, rename it over
    `dst` (removed again when any of that fails)."""
    try:
        try:
            _own(fd, mode, owner, st)
        finally:
            os.close(fd)
        os.replace(tmp, dst)
    except BaseException:
        discard(tmp)
        raise


def _port_temp(directory: str, data: bytes, st: os.stat_result | None) -> str:
    """A temporary in `directory` holding `data` with `st`'s mode and owner (the umask's mode
    when None). Its name is fixed per process (`.musify-<pid>.tmp`, which discovery knows as
    musify's own), so one path is tried, not a random one; when it is taken (a leftover, or another
    writer of this process) a unique name is made instead. Created without following links and
    never over an existing file (O_EXCL); with its final mode only when the file is to be the
    caller's own (else 0600 until its owner is set), so it is never readable by more than the
    finished file."""
    mode, owner, first = _attributes(st)
    tmp = os.path.join(directory, _TEMP_NAME[0] if _TEMP_NAME else _temp_name())
    try:
        fd = os.open(tmp, _CREATE, first)
    except FileExistsError:
        fd, tmp = tempfile.mkstemp(prefix=".musify-", suffix=".tmp", dir=directory)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            if _BY_FD:
                _own(fd, mode, owner, st)
        finally:
            os.close(fd)
        if not _BY_FD:
            _own(tmp, mode, owner, st)
    except BaseException:
        discard(tmp)
        raise
    return tmp


def _own(path: str | int, mode: int, owner: tuple[int, int] | None, st: os.stat_result | None) -> None:
    """Set the mode (and owner) where the file was not created with them: a default ACL, a
    set-group-ID folder or another owner makes it differ."""
    mine = os.fstat(path) if isinstance(path, int) else os.lstat(path)
    if stat.S_IMODE(mine.st_mode) == mode and (owner is None or (mine.st_uid, mine.st_gid) == owner):
        return
    if st is None:
        os.chmod(path, mode)
    else:
        own_like(path, st)


_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) \
    | getattr(os, "O_BINARY", 0)
_TEMP_NAME: list[str] = []  # this process's fixed temporary name (a forked worker makes its own)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_TEMP_NAME.clear)


def _temp_name() -> str:
    _TEMP_NAME[:] = [f".musify-{os.getpid()}.tmp"]
    return _TEMP_NAME[0]


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


# the mode and owner of an open file can be set through its descriptor (no path lookups)
_BY_FD = os.chmod in os.supports_fd and (not hasattr(os, "chown") or os.chown in os.supports_fd)
# a port in one call that gives the interpreter's lock away once (musify/_cport.c), where built
_CPORT = compiled.load("_cport", "musify") if _BY_FD and not os.environ.get("XNOCPORT") else None


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


_MADE: dict[str, bool] = {}  # folder -> whether this run created it


def ensure_dir(directory: str) -> None:
    """makedirs, remembered: an output tree of thousands of files asks for the same folders again
    and again, and each failed mkdir is a system call."""
    _made_now(directory)


def _made_now(directory: str) -> bool:
    """Make `directory` (and its missing parents) when it is not there; True when this run made
    it, so nothing this run did not write can be in it."""
    made = _MADE.get(directory)
    if made is None:
        try:
            made = _mkdir_once(directory)
        except FileNotFoundError:  # a missing parent: made first (and remembered)
            parent = os.path.dirname(directory)
            if not parent or parent == directory:
                raise
            _made_now(parent)
            made = _mkdir_once(directory)
        _MADE[directory] = made
    return made


def _mkdir_once(directory: str) -> bool:
    try:
        os.mkdir(directory)
        return True
    except FileExistsError:  # there already (or made meanwhile by another writer)
        if not os.path.isdir(directory):
            raise
        return False


def forget_dirs() -> None:
    """Start a new run: folders may have been removed since the last one (and the umask changed)."""
    _MADE.clear()
    _UMASK.clear()
    _IDS.clear()


_UMASK: list[int] = []
_IDS: list[tuple[int, int]] = []


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def prepare_threads() -> None:
    """Read, in the thread that starts a writer thread, what the writes may not read from two
    threads at once (the umask)."""
    _run_umask()
    _ids()


def _ids() -> tuple[int, int]:
    """Who owns the files this process creates (effective user and group), read once a run."""
    if not _IDS:
        _IDS.append((os.geteuid(), os.getegid()) if hasattr(os, "geteuid") else (-1, -1))
    return _IDS[0]


def _run_umask() -> int:
    """The umask, read once a run by the output tree's writes: reading it means setting it, so a
    writer thread must never read it while another thread creates a file (`prepare` reads it
    before the thread starts)."""
    if not _UMASK:
        _UMASK.append(_umask())
    return _UMASK[0]


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
