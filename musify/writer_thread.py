"""`-j1 -o`: write the ports from one thread beside the migration.

Creating thousands of files is mostly system time (making folders, creating, renaming), and a
system call releases the GIL: done by a second thread it runs on the other core while the main
thread migrates the next files. It is woken once a batch waits (256 ports or 4 MB) and writes
the batch by one call that gives the GIL away once (`writers.write_queued`): a thread woken
for every port takes the GIL from the migrating thread at each of that thread's own system calls.
What the thread is given is bounded (by bytes and by count), so a big tree's ports are never all
in memory; when it falls behind, the migration waits for it.

What a run reports does not change: each write's outcome lands in `Writes.done` under the file's
index (None, or the cause of the failure), read only once the thread has been joined, so the
record says which write failed and why, in plan order, as when the main thread writes. A failure
that is not a write's own (a bug) is raised in the main thread, never lost. When the run stops
early (an exception, Ctrl-C), the thread finishes the batch it is writing and drops the rest: every
file is written as a temporary renamed into place, so none is ever seen half written.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from musify import file_tools, writers

if TYPE_CHECKING:
    from musify.pool import Writes

MAX_BYTES = 32 << 20  # what the thread may hold unwritten (one bigger file is taken alone)
MAX_FILES = 4096
# the thread is woken when this many ports (or bytes) wait, and takes them all at once: woken
# for each port, it would take the interpreter's lock from the migrating thread once a port
BATCH = 256
BATCH_BYTES = 4 << 20


class PortWriter:
    """The thread and its queue of (index, path in the tree, bytes or None, source, its stat)."""

    def __init__(self, writes: Writes, max_bytes: int = MAX_BYTES, max_files: int = MAX_FILES) -> None:
        self.writes = writes
        self.max_bytes = max_bytes
        self.max_files = max_files
        self._queue: deque[tuple[int, str, bytes | None, str, os.stat_result | None]] = deque()
        # bytes queued and bytes the thread took: each counter written by one thread only, so
        # `put` may add to the queue without the lock (the bytes in the queue: their difference)
        self._added = 0
        self._taken = 0
        # `put` takes the lock only from where a batch is ready or the queue is full
        self._wake_files = min(BATCH, max_files)
        self._wake_bytes = min(BATCH_BYTES, max_bytes)
        self._cond = threading.Condition()
        self._closed = False  # no more files will come
        self._stop = False  # drop what is queued (the run is stopping early)
        self._full = False  # `put` waits for room
        self._error: BaseException | None = None
        writers.prepare_threads()
        self._thread = threading.Thread(target=self._run, name="musify-port-writer", daemon=True)
        self._thread.start()

    def put(self, i: int, rel: str, data: bytes | None, source: str, st: os.stat_result | None = None) -> None:
        """Queue one port; waits while the thread holds too much. The write's outcome is
        `writes.done[i]` once the thread is joined. `st`: the source's stat as it was read (else
        the source is stat'ed here: a few microseconds of this thread spare the writer a wait for
        the GIL, each of its system calls being one)."""
        size = len(data) if data is not None else 0
        if st is None and data is not None:
            st = file_tools.stat_or_none(source)
        elif data is None:
            st = None
        queue = self._queue
        if len(queue) + 1 < self._wake_files and self._added - self._taken + size < self._wake_bytes \
                and self._error is None:
            # nothing to wait for and nobody to wake: no lock taken (a deque's append is atomic,
            # and the thread takes from the queue under the lock only once woken)
            self.writes.done[i] = None  # claimed: nobody else writes it
            queue.append((i, rel, data, source, st))
            self._added += size
            return
        with self._cond:
            while queue and (self.held + size > self.max_bytes or len(queue) >= self.max_files) \
                    and self._error is None:
                self._full = True  # the thread takes what is queued, batch or not
                self._cond.notify_all()
                self._cond.wait()
            self._full = False
            self._raise_error()
            self.writes.done[i] = None
            queue.append((i, rel, data, source, st))
            self._added += size
            if len(queue) >= BATCH or self.held >= BATCH_BYTES:  # a batch is ready: wake the thread
                self._cond.notify_all()

    @property
    def held(self) -> int:
        """The bytes queued and not yet taken by the thread."""
        return self._added - self._taken

    def close(self, drop: bool = False) -> None:
        """No more ports: wait until the thread has written the queue (or, with `drop`, only the
        file it is writing) and raise what it could not report as a write's failure."""
        with self._cond:
            self._closed = True
            self._stop = self._stop or drop
            self._cond.notify_all()
        self._thread.join()
        if not drop:
            self._raise_error()

    def _raise_error(self) -> None:
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    def _ready(self) -> bool:
        """Whether the thread has something to do: stop, finish the queue, or write a batch (a
        full one, or what is queued when `put` waits for room)."""
        if self._stop or self._closed:
            return True
        return bool(self._queue) and (self._full or len(self._queue) >= BATCH or self.held >= BATCH_BYTES)

    def _run(self) -> None:
        """Take everything queued at once and write it as one batch (`writers.write_queued`:
        their system calls with the interpreter's lock given away once, where the compiled writer
        is built), so the thread asks the migrating thread for the lock about once a batch, not
        once a system call."""
        done = self.writes.done
        out_dir = self.writes.out_dir
        try:
            while True:
                with self._cond:
                    while not self._ready():
                        self._cond.wait()
                    if self._stop or not self._queue:
                        self._queue.clear()
                        return
                    batch = [self._queue.popleft() for _ in range(min(len(self._queue), BATCH))]
                    self._taken += sum(len(data) for _, _, data, _, _ in batch if data is not None)
                    self._cond.notify_all()
                for k, cause in writers.write_queued(out_dir, batch):
                    done[batch[k][0]] = cause
        except BaseException as exc:  # noqa: BLE001 -- handed to the main thread, which raises it
            with self._cond:
                self._error = exc
                self._queue.clear()
                self._cond.notify_all()


@contextmanager
def port_writer(writes: Writes | None) -> Iterator[PortWriter | None]:
    """A PortWriter for the run's `writes` (None when there is nothing to write), closed on the
    way out: joined after the last port, or stopped after the file in hand when the run fails."""
    if writes is None:
        yield None
        return
    writer = PortWriter(writes)
    try:
        yield writer
    except BaseException:
        writer.close(drop=True)
        raise
    writer.close()
