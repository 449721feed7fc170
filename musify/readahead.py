"""Read a run's source files ahead of the migration, in a thread that holds no interpreter lock.

With -j1 the migrating thread used to open, stat, read and close each file itself, through
Python (about 20 us a file: a tenth of a second on 5,000 small files, all of it on the run's
critical path). `reading(paths)` starts the compiled reader (musify/_cread.c) over the files
in the order they will be migrated; `runner._read` asks `take(path)` first and gets the bytes and
the stat as `discover.read_regular_stated` gives them, already read on the other core.

The reader only hands over what the reference would have read without a second look (a regular
file read whole in one call, closed cleanly), and only while a stat of its path, when its turn
comes, still finds that file unchanged. Anything else, an error, a FIFO, a folder, a file that
changed size, a file removed or replaced since it was read ahead, a big file, a forked child, is
answered None, and the runner reads the file through `read_regular_stated` itself, so every
message stays the reference's. What the
reader holds is bounded (by files and by bytes), so a big tree is never all in memory. Without
the compiled module (or with MUSIFY_PURE_PYTHON set) nothing changes: `take` answers None.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from musify.frontend import compiled

# files read and not yet taken: woken at half a window, the thread keeps ~500 files (100 ms of
# migration) of slack; with 256 the migrating thread waited for it ~50 times a run (30 ms)
MAX_FILES = 1024
MAX_BYTES = 2 << 20  # bytes read and not yet taken (one file more may be in flight)
MAX_FILE = 1 << 20  # a bigger file is read by the runner: its copy would cost more than the wait
# what the rename probe may keep of the files it read whole (`offer`), in plan order
OFFER_BYTES = 8 << 20


def _stat_layout_known() -> bool:
    """Whether `os.stat_result` has the layout the compiled reader fills (CPython's on Linux)."""
    if os.stat_result.n_fields != 19 or os.stat_result.n_sequence_fields != 10:
        return False
    probe = os.stat_result(tuple(range(19)))
    return (probe.st_mode, probe.st_size, probe[9], probe.st_ctime, probe.st_atime_ns, probe.st_mtime_ns,
            probe.st_blksize, probe.st_blocks, probe.st_rdev) == (0, 6, 9, 12, 13, 14, 16, 17, 18)


def _native():
    """The compiled reader, or None (not built, MUSIFY_PURE_PYTHON, another stat layout)."""
    if not _LOADED:
        module = compiled.load("_cread", "musify") if os.name == "posix" else None
        _LOADED.append(module if module is not None and _stat_layout_known() else None)
    return _LOADED[0]


_LOADED: list = []


class ReadAhead:
    """The files of one run (or one chunk of a worker's), read ahead in order."""

    def __init__(self, paths: Sequence[str], max_files: int | None = None, max_bytes: int | None = None,
                 max_file: int | None = None, offered: dict[str, tuple[bytes, bytes]] | None = None) -> None:
        """`paths` in the order they will be taken; the window (files, bytes) and the biggest file
        read ahead default to MAX_FILES, MAX_BYTES and MAX_FILE. `offered`: reads already made
        (`offer`), by path; such a file is not read again (and, as every file, is handed over only
        while its path still names it unchanged)."""
        native = _native()
        # path -> its first place in `paths` (made in C: the later places of a path given twice
        # come first, so its first one is written last)
        self._index: dict[str, int] = dict(zip(reversed(paths), range(len(paths) - 1, -1, -1)))
        given = [offered.get(path) for path in paths] if offered else None
        self._reader = None if native is None else native.Reader(
            list(paths), os.stat_result, max_files or MAX_FILES, max_bytes or MAX_BYTES,
            MAX_FILE if max_file is None else max_file, given)

    def take(self, path: str) -> tuple[bytes, os.stat_result] | None:
        """`path`'s bytes and stat as `read_regular_stated` would give them, or None: read it
        yourself (not read ahead, or not plainly readable: the reference says why)."""
        k = self._index.get(path)
        if k is None or self._reader is None:
            return None
        return self._reader.take(k)

    def close(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None


_ACTIVE: list[ReadAhead] = []  # the innermost reading() of this process
_OFFERED: dict[str, tuple[bytes | memoryview, bytes]] = {}  # path -> (data, struct stat) the rename probe read whole


def offer_budget() -> int:
    """How many bytes of the files it reads whole the rename probe may keep for the read-ahead
    (0: none, where there is no compiled reader to take them)."""
    return OFFER_BYTES if _native() is not None else 0


def offer(reads: dict[str, tuple[bytes | memoryview, bytes]]) -> None:
    """Files the rename probe read whole (`_cport.probe_read`), by path: the run's read-ahead takes
    them as read rather than reading them again (the planning's read of a renamed file was about
    half of a small file's reading)."""
    _OFFERED.clear()
    _OFFERED.update(reads)


def withdraw() -> None:
    """The run is done: what was offered and not taken is let go."""
    _OFFERED.clear()


@contextmanager
def reading(paths: Sequence[str]) -> Iterator[ReadAhead | None]:
    """Read `paths` ahead while the block runs (nothing when there is no compiled reader or
    fewer than two files); `take` answers from it meanwhile."""
    if len(paths) < 2 or _native() is None:
        yield None
        return
    # the offers of these files leave `_OFFERED` with them (a -j worker's chunks are disjoint), so
    # that each file's bytes are let go once it is migrated, not held until the run ends
    offered = {path: _OFFERED.pop(path) for path in paths if path in _OFFERED} if _OFFERED else None
    ahead = ReadAhead(paths, offered=offered)
    del offered  # (this generator's frame lives as long as the block)
    _ACTIVE.append(ahead)
    try:
        yield ahead
    finally:
        _ACTIVE.remove(ahead)
        ahead.close()


def take(path: str) -> tuple[bytes, os.stat_result] | None:
    """What the active read-ahead holds for `path` (None: there is none, or read it yourself):
    `ReadAhead.take` of the innermost, without its call (every file of a run asks)."""
    if not _ACTIVE:
        return None
    ahead = _ACTIVE[-1]
    k = ahead._index.get(path)
    reader = ahead._reader
    return None if k is None or reader is None else reader.take(k)
