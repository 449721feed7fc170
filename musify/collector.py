"""The cyclic garbage collector during a run: kept off the objects that live the whole run.

A run's long-lived objects (the modules, the rules a run has looked up, the discovery and
the plan) are made before the first file is migrated and are never garbage. Each full
collection walks them all again: on a run of 5,000 small files the collector's passes over them
were about 5% of the run's CPU time (measured with `gc.callbacks`). So the rules are loaded
with the collector paused (loading makes nothing cyclic worth collecting), and the files
are migrated with what exists by then frozen (`gc.freeze`: moved to a generation no collection
walks), as the `-j` workers already were. Garbage cycles made while migrating are collected as
before; frozen objects are given back to the collector when the files are done. And the program
freezes everything as it exits (`skip_last_collection`).
"""

from __future__ import annotations

import atexit
import gc
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
def frozen() -> Iterator[None]:
    """Every object that exists now is left out of the collections made inside."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def skip_last_collection() -> None:
    """Freeze every object as the program exits, so the collection the interpreter makes while
    shutting down walks none of them (a tenth of a second on a big run, for memory the process
    is about to give back whole). Only for the program itself: a test process goes on."""
    atexit.register(gc.freeze)
