"""How a `-j` worker hands a chunk's results to the run: through a file, not the pool's pipe.

`ProcessPoolExecutor` sends each task's result through one pipe that every worker writes to. A
result bigger than the pipe's atomic write (`PIPE_BUF`, 4 KB on Linux) takes several writes, and
a worker killed between two of them (the out-of-memory killer, a user's `kill -9`) leaves half a
message in the pipe: the pool's reading thread then waits for the rest forever, and so does the
run, which not even Ctrl-C ends (the interpreter's exit joins that thread). Seen in
tests/hardening/test_kill.py; CPython 3.11's executor has no way out of it.

So a worker writes its chunk's results to a file in a folder the run made for them and returns
the file's path: a message of a hundred bytes, written to the pipe in one atomic write, which no
kill can cut in half. A killed worker then only ever leaves the pool broken, which the pool
reports (`BrokenProcessPool`, one line and exit 3: musify/failures.py). Where the folder cannot
be made or the file written (a full or read-only temporary directory), the results go through the
pipe as before.
"""

from __future__ import annotations

import os
import pickle
import shutil
import tempfile

PREFIX = "musify-results-"


def make_folder() -> str | None:
    """A private folder for one run's worker results, or None where none can be made."""
    try:
        return tempfile.mkdtemp(prefix=PREFIX)
    except OSError:
        return None


def remove_folder(folder: str | None) -> None:
    """The run's folder and whatever a killed worker or a failed run left in it."""
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


def hand_over(results: list, folder: str | None, key: int) -> list | str:
    """In a worker: the path of a file in `folder` holding `results` (chunk `key`'s), or the
    results themselves where there is no folder or the file cannot be written."""
    if folder is None:
        return results
    path = os.path.join(folder, f"{key}.pickle")
    try:
        with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600), "wb") as fh:
            pickle.dump(results, fh, protocol=pickle.HIGHEST_PROTOCOL)
    except OSError:
        try:
            os.unlink(path)
        except OSError:
            pass
        return results
    return path


def receive(part: list | str) -> list:
    """In the run: the results a worker handed over (`hand_over`'s answer), its file removed."""
    if type(part) is not str:
        return part
    with open(part, "rb") as fh:
        results = pickle.load(fh)
    os.unlink(part)
    return results
