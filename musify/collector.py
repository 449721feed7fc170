"""The cyclic garbage collector during a run: kept off the objects that live the whole run.

A run's long-lived objects (the modules, the rules a run has looked up, the discovery and
the plan) are made before the first file is migrated and are never garbage. Each full
collection walks them all again: on a run of 5,000 small files the collector's passes over them
were about 5% of the run's CPU time (measured with `gc.callbacks`). So the rules are loaded
with the collector paused (loading makes nothing cyclic worth collecting), and the files
are migrated with what exists by then frozen (`gc.freeze`: moved to a generation no collection
walks), as the `-j` workers already were. Garbage cycles made while migrating are collected as
before; frozen objects are given back to the collector when the files are done. And the program
freezes everything as it exits (`skip_last_collection`), or, where nothing can need them, ends
without freeing its objects at all (`exit_now`).
"""

from __future__ import annotations

import atexit
import gc
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused() -> Iterator[None]:
    """No automatic collection inside (one that was off stays off)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


@contextmanager
def settled() -> Iterator[None]:
    """No automatic collection inside, and what is alive at the end leaves it as old objects: for
    a block that makes thousands of long-lived acyclic objects (the discovery and the plan), which
    young collections would otherwise walk once or twice more (about 10 ms on 5,000 files)."""
    with paused():
        try:
            yield
        finally:
            _age()


def _age() -> None:
    """Move every tracked object to the oldest generation (which only full collections walk)."""
    gc.freeze()
    gc.unfreeze()


@contextmanager
def frozen() -> Iterator[None]:
    """Every object that exists now is left out of the collections made inside; and what is
    made inside and still alive at the end (a run's results: thousands of acyclic objects, kept
    until the record is written) leaves as old as the rest, so the next young collections do
    not walk it all once more (on a -j2 run of 5,000 files that first walk was about 20 ms of
    the parent's serial time). Only full collections, which a run seldom makes, walk them.

    Inside, only young collections run (`_YOUNG_ONLY`). What survives one is a file's result,
    kept until the record is written, or part of the file being migrated; the older
    generations' collections walked those survivors again and again (on the replicated corpus,
    4,928 files: 14 middle and 1 full collection, 40-50 ms of the run's 70-80 ms in the
    collector, against 2 ms with young collections only). Cycles made while a file is migrated
    are still collected by the young collections; the peak memory of runs with no collection
    at all was the same as with them (replicated corpus, CUDA headers, PyTorch's headers), so
    the passes make no cyclic garbage that lives through a young collection.

    The young threshold stays the interpreter's 700. Scanned (callgrind, -j1, M instructions;
    replicated corpus / CUDA headers): 200 2828/2979, 300 2826/2975, 350 2823/2972,
    400 2823/2970, 500 2820/2968, 700 2819/2963, 1000 2820/2959, 1500 2817/-, 2000 2817/2955,
    3000 2817/2948, 5000 2817/-: at most 0.1% / 0.5% fewer above 700, and no wall-time gain
    seen (700 against 350, 2000 and 3000, 8-10 alternated runs each: medians within 0.05 s,
    each side ahead on one tree) nor peak-memory change (89.1-89.2 / 90.2-90.9 MB at every
    value), so the default is kept."""
    gc.freeze()
    thresholds = gc.get_threshold()
    gc.set_threshold(thresholds[0], *_YOUNG_ONLY)
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        _age()


_YOUNG_ONLY = (1 << 30, 1 << 30)  # the middle and full collections' thresholds: never reached in a run


_HELD = []  # [True] while the program's start-up holds the collector off (hold_start_up)


def hold_start_up() -> None:
    """No automatic collection while the program starts (its modules and its command line: some
    thousands of objects that live as long as it does, walked a dozen times by young collections,
    about 4 ms a run), until `release_start_up`. Only for the program itself: a test process that
    imports the command line keeps its collector as it was."""
    if not _HELD and gc.isenabled() and is_program():
        gc.disable()
        _HELD.append(True)


def release_start_up() -> None:
    """End `hold_start_up` (nothing when it held nothing): what start-up made leaves as old
    objects, and collections go on as before."""
    if _HELD:
        _HELD.clear()
        _age()
        gc.enable()


def skip_last_collection() -> None:
    """Freeze every object as the program exits, so the collection the interpreter makes while
    shutting down walks none of them (a tenth of a second on a big run, for memory the process
    is about to give back whole). Only for the program itself: a test process goes on."""
    atexit.register(gc.freeze)


_KEPT: list = []  # what `outlive` keeps


def outlive(*objects: object) -> None:
    """Keep `objects` until the program ends, where this process is musify itself: a run's plan,
    discovery and first results (some 40,000 objects on 5,000 files) were freed one by one as the
    run returned, 5-8 ms of its serial end, memory the exit (`exit_now`) then gives back whole.
    Elsewhere (a test, code that calls the API) nothing is kept."""
    if is_program():
        _KEPT.extend(objects)


def is_program() -> bool:
    """Whether this process is the `musify` program (`python -m musify`, or the console script),
    so that nothing of its own runs after the command: not a test, nor code that called `main`."""
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    if spec is not None:
        return spec.name == "musify.__main__"
    return os.path.basename(getattr(main, "__file__", None) or "") in ("musify", "musify-script.py")


def exit_now(code: object) -> None:
    """End the program with exit status `code` without the interpreter's teardown: once the
    standard streams are flushed and the `atexit` functions have run, freeing every module and
    object one by one (about a tenth of a one-file run's CPU time) has no effect a user could
    see, since every file musify writes is closed when its step ends. Returns (and the caller
    exits normally) where that is not sure: another thread still running, a stream that cannot
    be flushed, an exit code that is not a number."""
    import threading

    run, clear = getattr(atexit, "_run_exitfuncs", None), getattr(atexit, "_clear", None)
    if not (code is None or type(code) is int) or threading.active_count() > 1 or run is None or clear is None:
        return
    run()
    clear()  # run once: a normal exit after this runs none again
    for stream in (sys.stdout, sys.stderr):
        if stream is None:  # started with the descriptor closed (`>&-`): nothing to flush
            continue
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe, a closed stream: Python's own exit reports it
            return
    os._exit(code or 0)
