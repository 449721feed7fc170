"""Put migrated files where the user asked: an output tree, in place, stdout, or a diff.

In place is atomic per file: a temporary file beside the target, fsync, rename, permissions kept,
so a run interrupted at any moment leaves each file fully old or fully new. Nothing is written
in `--diff` or `--stdout` mode.
"""

from __future__ import annotations

import difflib
import os
import shutil
import stat
import sys
import tempfile
from typing import TextIO


def atomic_write(path: str, data: bytes, mode_from: str | None = None, durable: bool = True) -> None:
    """Write `data` to `path` atomically; copy permission bits from `mode_from` when given.

    `durable` adds an fsync before the rename, so even a power cut leaves the old or the new
    file: needed when replacing a user's source in place, not when filling a fresh output tree
    (where it costs more than the migration itself)."""
    directory = os.path.dirname(path) or "."
    ensure_dir(directory)
    fd, tmp = tempfile.mkstemp(prefix=".musify-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            if durable:
                os.fsync(fh.fileno())
        source = mode_from if mode_from and os.path.exists(mode_from) else (path if os.path.exists(path) else None)
        if source:
            os.chmod(tmp, stat.S_IMODE(os.stat(source).st_mode))
        else:
            os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


_MADE: set[str] = set()


def ensure_dir(directory: str) -> None:
    """makedirs, remembered: an output tree of thousands of files asks for the same folders again
    and again, and each failed mkdir is a system call."""
    if directory not in _MADE:
        os.makedirs(directory, exist_ok=True)
        _MADE.add(directory)


def forget_dirs() -> None:
    """Start a new run: folders may have been removed since the last one."""
    _MADE.clear()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def copy_file(src: str, dst: str) -> None:
    ensure_dir(os.path.dirname(dst) or ".")
    shutil.copy2(src, dst, follow_symlinks=False)


def copy_link(link_target: str, dst: str) -> None:
    ensure_dir(os.path.dirname(dst) or ".")
    if os.path.lexists(dst):
        os.unlink(dst)
    os.symlink(link_target, dst)


def write_in_place(src: str, dst: str, data: bytes) -> None:
    """Replace `src` by `data` under the (possibly renamed) path `dst`."""
    atomic_write(dst, data, mode_from=src)
    if os.path.abspath(dst) != os.path.abspath(src):
        os.unlink(src)


def unified_diff(old: bytes, new: bytes, old_name: str, new_name: str) -> str:
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
