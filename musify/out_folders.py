"""What one run knows about its output tree's folders and its own process: which folders it
made (no file it did not write can be in them, and each failed mkdir is a system call), the
umask and the owner its files get. Read by the port writers (musify/writers.py) and by the
atomic file tools (musify/file_tools.py); `forget_dirs` starts a new run.
"""

from __future__ import annotations

import os

_MADE: dict[str, bool] = {}  # folder -> whether this run created it
# a port's (first mode, mode, uid, gid) by its source's (mode, uid, gid), None: no source stat
# (`writers._given`): what the umask and the owner make of them, known once a run
_GIVEN: dict[tuple[int, int, int] | None, tuple[int, int, int, int]] = {}
_FOLDERS: dict[tuple[str, str], str] = {}  # (output tree, a port's folder in it) -> the folder's path


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
    _GIVEN.clear()
    _FOLDERS.clear()
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
