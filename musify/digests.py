"""Content digests of file sets (the rule database, musify's own source), memoised by stat.

Every run keys its caches on two digests: the rule files' (4-5 MB of YAML) and musify's own
source's. Reading and hashing them is most of what a fully cached `musify check` would do, so
the digest is kept beside a signature of the files' stat data (path, size, inode, mtime and
ctime in nanoseconds) under the cache root, in `digests/`, and reused while the signature
matches. Any write to a file moves its ctime, which no user-space tool can set back, so a changed
file always misses. Like git's "racy clean" rule, a memo is not written while some file changed
in the last few seconds, where a coarse file-system clock could hide a second write.
The same memo keeps a file's whole-content check (`checked`: the compiled rules' CRC) from being
made again while the file's stat data stays the same. Deleting the folder is always safe.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

from musify import resources

# SHA-256 for what every run hashes (stat signatures, the rule tables' sources: about 100 KB):
# CPython's own implementation, not hashlib's, whose import loads OpenSSL (about 2.5 ms of every
# run's start-up, against 0.3 ms more to hash those bytes here). The digests are the same; the
# incremental cache hashes megabytes (file contents, musify's source) and imports hashlib then.
try:
    from _sha256 import sha256  # CPython 3.10 and 3.11
except ImportError:  # pragma: no cover -- other versions and interpreters
    try:
        from _sha2 import sha256  # CPython 3.12 and later
    except ImportError:
        from hashlib import sha256

RACY_NS = 3 * 10**9  # files changed this recently are hashed, never memoised


def memoised(name: str, root: Path, files: list[Path], compute: Callable[[], str]) -> str:
    """`compute()` (a digest of the content of `files`, which lie under `root`), or the memo of an
    earlier call on the same files with the same stat data. One memo per `name` and `root`."""
    try:
        stats = [os.stat(path) for path in files]
    except OSError:
        return compute()  # a file vanished: computing gives the proper error, or a fresh answer
    sig = sha256(name.encode())
    for path, st in zip(files, stats):
        sig.update(f"{path}\0{st.st_size}\0{st.st_ino}\0{st.st_mtime_ns}\0{st.st_ctime_ns}\0".encode(
            "utf-8", "surrogateescape"))
    signature = sig.hexdigest()
    where = sha256(os.fsencode(root)).hexdigest()[:16]
    memo = resources.cache_dir("digests") / f"{name}-{where}"
    try:
        stored_sig, stored = memo.read_text(encoding="ascii").split()
        if stored_sig == signature:
            return stored
    except (OSError, ValueError, UnicodeDecodeError):
        pass
    digest = compute()
    newest = max((max(st.st_mtime_ns, st.st_ctime_ns) for st in stats), default=0)
    if time.time_ns() - newest > RACY_NS:
        _write(memo, f"{signature} {digest}\n")
    return digest


def checked(path: str | os.PathLike, st: os.stat_result, check: Callable[[], bool]) -> bool:
    """`check()` (a check of the whole content of the file at `path`, whose stat data is `st`),
    or True without it where an earlier check of the same file with the same stat data held: a
    file checked once (the compiled rules, 10 MB) is not read whole by every run. Replacing the
    file (a new inode) or writing to it (a new ctime) makes the next call check again."""
    signature = f"{st.st_dev}\0{st.st_ino}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ctime_ns}\n"
    memo = _checked_memo(path)
    try:
        if memo.read_text(encoding="ascii") == signature:
            return True
    except (OSError, UnicodeDecodeError):
        pass
    if not check():
        return False
    if time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) > RACY_NS:
        _write(memo, signature)
    return True


def forget_checked(path: str | os.PathLike) -> None:
    """Drop the memo of `checked` for a file that is removed."""
    try:
        _checked_memo(path).unlink(missing_ok=True)
    except OSError:
        pass


def _checked_memo(path: str | os.PathLike) -> Path:
    return resources.cache_dir("digests") / f"checked-{sha256(os.fsencode(path)).hexdigest()[:16]}"


def _write(path: Path, text: str) -> None:
    write_atomically(path, text.encode("ascii"))


def write_atomically(path: Path, data: bytes) -> None:
    """Write a cache file atomically, and silently not at all where the cache cannot be written
    (a read-only home costs the next run its speed, nothing else)."""
    tmp = path.parent / f".{path.name}.{os.getpid()}.tmp"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except OSError:
        try:
            tmp.unlink(missing_ok=True)  # a part written before the disk filled
        except OSError:
            pass
