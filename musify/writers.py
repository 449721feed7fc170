"""Put migrated files in an output tree: each port a temporary beside its target renamed over
it, permissions and owner from its source, by the shortest way a big tree allows (a fixed
temporary name, a folder this run made never looked at again, the compiled `_cport` writing a
batch with the interpreter's lock given away once). The file-level tools (atomic writes,
copies, links, durability, diff and stdout) are in musify/file_tools.py; the folders a run made, its
umask and owner in musify/out_folders.py.
"""

from __future__ import annotations

import os
import stat
import tempfile

from musify.discover import _SLASH, join_rel
from musify.file_tools import _holds, copy_file, discard, own_like, stat_or_none
from musify.frontend import compiled
from musify.out_folders import (
    _FOLDERS,
    _GIVEN,
    _MADE,
    _ids,
    _made_now,
    _run_umask,
    forget_dirs,
    prepare_threads,
)

__all__ = ["forget_dirs", "prepare_threads", "write_into", "write_queued", "write_stated", "write_stated_many"]

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
    if made is None:  # a folder not known yet: made now (then nothing can be in it), or found there
        made = _made_now(directory)
    if not made and st is not None and _holds(dst, data, None, st):
        return
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
    temp = _TEMP_NAME[0] if _TEMP_NAME else _temp_name()
    attributes = _GIVEN
    for k, (rel, data, source, st) in enumerate(ports):
        directory, dst = _place(out_dir, rel)
        made = _MADE.get(directory)
        if _CPORT is None or data is None or made is False:
            _flush_batch(batch, where, ports, out_dir, causes)
            causes[k] = _write_one(out_dir, rel, data, source, st)
            continue
        given = attributes.get(None if st is None else (st.st_mode, st.st_uid, st.st_gid)) or _given(st)
        batch.append((directory, made is None, _inside(directory, temp), dst, data, *given))
        where.append((k, directory, dst))
    _flush_batch(batch, where, ports, out_dir, causes)
    return causes


def write_queued(out_dir: str, queued: list[tuple[int, str, bytes | None, str, os.stat_result | None]]) -> list[tuple[int, str]]:
    """`write_stated_many` for the -j1 writer thread's queue, each port as it was queued (index,
    rel, data, source, st); the failures, as (place in `queued`, cause). The compiled
    `_cport.put_ports` writes every port it can as `write_stated` would, from a start to the first
    port it cannot (no new bytes, a folder that was there before, a stat whose mode is not known
    yet), which goes through `_write_one`; then it goes on from the next. Joining the paths and
    looking up each port's folder and mode in Python held the interpreter's lock about 6 us a
    port, while the migrating thread waited; this holds it about 1 us."""
    if _CPORT is None or not hasattr(_CPORT, "put_ports"):
        causes = write_stated_many(out_dir, [(rel, data, source, st) for _, rel, data, source, st in queued])
        return [(k, cause) for k, cause in enumerate(causes) if cause is not None]
    failed = []
    temp = _TEMP_NAME[0] if _TEMP_NAME else _temp_name()
    start, n = 0, len(queued)
    while start < n:
        stop, odd = _CPORT.put_ports(out_dir, temp, queued, start, _MADE, _GIVEN)
        for k, answer, tmp, dst in odd:
            cause = _finish_answer(answer, tmp, dst, out_dir, queued[k][1:])
            if cause is not None:
                failed.append((k, cause))
        if stop < n:
            _, rel, data, source, st = queued[stop]
            cause = _write_one(out_dir, rel, data, source, st)
            if cause is not None:
                failed.append((stop, cause))
        start = stop + 1
    failed.sort()
    return failed


def _place(out_dir: str, rel: str) -> tuple[str, str]:
    """The folder and the path of the port `rel` (a posix path) in the tree `out_dir`, as
    `os.path.join` makes them, joined by `discover.join_rel` (the writer thread asks this of
    every port while it holds the interpreter's lock: `os.path.join` took three times as long)."""
    head, _, name = rel.rpartition("/")
    key = (out_dir, head)
    directory = _FOLDERS.get(key)
    if directory is None:  # (each folder joined once a run: its files share it)
        directory = _FOLDERS[key] = join_rel(out_dir, head) if head else (out_dir or ".")
    return directory, _inside(directory, name)


def _inside(directory: str, name: str) -> str:
    """`join_rel(directory, name)` for a name without "/" (a listed file's own name), by
    concatenation where the separator is "/" already."""
    if _SLASH and name:
        return directory + name if directory[-1] == "/" else f"{directory}/{name}"
    return join_rel(directory, name)


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
        if answer != -1:
            causes[k] = _finish_answer(answer, item[2], dst, out_dir, ports[k])
    batch.clear()
    where.clear()


def _finish_answer(answer: int | tuple, tmp: str, dst: str, out_dir: str,
                   port: tuple[str, bytes | None, str, os.stat_result | None]) -> str | None:
    """Finish a port (rel, data, source, st) the compiled writer (`put_batch`, `put_ports`)
    answered other than -1 (written); the cause of its failure, or None."""
    if isinstance(answer, tuple):  # (errno, path): failed, nothing left behind
        return os.strerror(answer[0])
    if answer >= 0:  # written, but its mode or owner is not yet the port's: set through it
        return _finish_open(answer, tmp, dst, port[3])
    # -2: a taken temporary name; -3: a folder that was there (or could not be made)
    return _write_one(out_dir, *port)


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


def _given(st: os.stat_result | None) -> tuple[int, int, int, int]:
    """(first mode, mode, uid, gid) of a port whose source has the stat `st` (`_attributes`; -1
    for no owner to set), remembered for the run by the source's (mode, uid, gid): a tree's
    files share a few, and every port asks."""
    mode, owner, first = _attributes(st)
    given = _GIVEN[None if st is None else (st.st_mode, st.st_uid, st.st_gid)] = \
        (first, mode, *(owner if owner is not None else (-1, -1)))
    return given


def _put_native(directory: str, dst: str, data: bytes, st: os.stat_result | None) -> bool:
    """`_port_temp` and the rename by one call of the compiled `_cport.put`, which makes all
    their system calls with the interpreter's lock given away once (the writer thread of a -j1
    run otherwise wins it back from the migrating thread after each of them). False, having
    made nothing, when the fixed temporary name is taken: the Python path makes a unique one."""
    first, mode, uid, gid = _GIVEN.get(None if st is None else (st.st_mode, st.st_uid, st.st_gid)) or _given(st)
    tmp = _inside(directory, _TEMP_NAME[0] if _TEMP_NAME else _temp_name())
    fd = _CPORT.put(tmp, dst, data, first, mode, uid, gid)
    if fd == -2:
        return False
    if fd >= 0:  # written, but its mode or owner is not yet the port's: set them through it
        _own_and_rename(fd, tmp, dst, mode, None if st is None else (st.st_uid, st.st_gid), st)
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



# the mode and owner of an open file can be set through its descriptor (no path lookups)
_BY_FD = os.chmod in os.supports_fd and (not hasattr(os, "chown") or os.chown in os.supports_fd)
# a port in one call that gives the interpreter's lock away once (musify/_cport.c), where built
_CPORT = compiled.load("_cport", "musify") if _BY_FD and not os.environ.get("XNOCPORT") else None
