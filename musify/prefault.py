"""The program's new memory faulted in on another core (`musify/_cmem.c`).

A -j1 run keeps each file's result for its record, so its memory grows as it goes (about 40 MB
on the replicated corpus of 4,928 files), and every new page is a fault taken by the thread that
migrates: some 15,000 faults there, 3-4 us each on this project's machines, a tenth of the run's
wall time in the kernel while the second core waits. `start` feeds the interpreter's allocators
from memory a second thread has already faulted in, so the migrating thread takes about 9,000 (the
rest come before the run is listed, or in arenas made before it: started at the first import
instead it took about 4,000, and the run was no faster measurably).
The work is the same; only the thread that does it changes, so a machine with one core gains
nothing (and loses nothing measurable: the thread sleeps between polls).

Only the `musify` program starts it (`collector.is_program`: the command line itself, never a
process that imports musify as a library), once its inputs are listed and hold at least
`MIN_FILES` files: a pre-commit hook's `musify check` of a few files would only pay for the
thread and for the memory populated ahead (4 MB of arenas, 8 MB of heap). Linux only, with the
compiled module built; MUSIFY_PREFAULT=0 turns it off (MUSIFY_PURE_PYTHON does too, as for every
compiled module). Nor where the 4 GB of address space it reserves for arenas would count against
a limit (`ulimit -v`, or strict overcommit): there it could make a run that fits fail.
"""

from __future__ import annotations

import os

from musify import collector
from musify.frontend import compiled

MIN_FILES = 256  # the inputs a run lists before its memory is worth faulting in ahead
_STARTED: list[bool] = []


def start_for_program(files: int) -> bool:
    """Start feeding the allocators from pre-faulted memory, once, for a run of `files` files
    where this process is the musify program and nothing turned it off; whether it runs."""
    if _STARTED:
        return _STARTED[0]
    if files < MIN_FILES:
        return False  # (a later, bigger run of the same process may still start it)
    started = False
    if os.environ.get("MUSIFY_PREFAULT", "1") != "0" and collector.is_program() and reservation_is_free():
        native = compiled.load("_cmem", "musify")
        started = bool(native is not None and native.start())
    _STARTED.append(started)
    return started


def reservation_is_free() -> bool:
    """Whether reserving address space costs this process nothing it may need: no limit on its
    address space (RLIMIT_AS), and the kernel not in strict overcommit (mode 2, where even a
    MAP_NORESERVE mapping is charged against the commit limit)."""
    try:
        import resource

        if resource.getrlimit(resource.RLIMIT_AS)[0] != resource.RLIM_INFINITY:
            return False
    except (ImportError, OSError, ValueError):  # (no resource module: not Linux, never started anyway)
        return False
    try:
        with open("/proc/sys/vm/overcommit_memory", encoding="ascii") as fh:
            return fh.read().strip() != "2"
    except OSError:
        return True  # (no /proc: the reservation's own failure then answers)
