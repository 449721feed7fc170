"""Worker processes die with the run that started them.

A pool worker blocks reading its task queue; when its parent is killed (SIGKILL cannot be
caught) nothing tells it, and it would wait forever. On Linux the kernel can send it a signal
when the parent dies (PR_SET_PDEATHSIG); elsewhere the executor's own shutdown is all there is.
"""

from __future__ import annotations

import os
import sys

_PR_SET_PDEATHSIG = 1


def die_with_parent(parent: int) -> None:
    """Call in a freshly forked worker, with the pid of the process that made its pool (read
    there as the pool is made: not the pid of whichever process imported musify, which a
    program that imports musify and then forks the run does in another process, whose workers
    then all took their parent for dead and left the run with a broken pool)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes
        import signal  # here, not at the top: only a worker needs it, and it is ~0.5 ms of every start-up

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:
        os._exit(1)  # the parent died before the request took effect
