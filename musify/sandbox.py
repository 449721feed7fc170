"""Run a program under test, or a compiler, contained (docs/sandbox.md).

`emu-run` and `verify` run code their user did not write, so every run here gets: its own
process group (killed as a whole at the time limit and again when the program ends, so no child
outlives it); address-space, CPU, file-size and core limits (`setrlimit`); output read through a
bounded buffer (head and tail kept, the rest only counted, the program stopped past a total);
its own working directory; a cleaned environment. On Linux, where unprivileged user namespaces
work, it also runs in fresh user, mount, network and PID namespaces (unshare(1)): every mount
but the working directory is read-only, there is no network, and the end of the program's PID
namespace kills anything it left behind. `Outcome.isolation` says which of the two a run got.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

CHILD = Path(__file__).with_name("_sandbox_child.py")
TIMEOUT_EXIT = 124  # as timeout(1)
_UNSHARE = ("--user", "--map-root-user", "--mount", "--net", "--pid", "--fork", "--kill-child", "--mount-proc")
_BASE_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LC_ALL": "C", "LANG": "C"}
_live: set[int] = set()  # process groups of runs in progress, for kill_all()
_live_lock = threading.Lock()
_MEMORY_WORDS = ("std::bad_alloc", "out of memory", "Cannot allocate memory", "cudaErrorMemoryAllocation")


@dataclass(frozen=True)
class Limits:
    """What a run may use. `memory` is address space in bytes (None: unlimited, e.g. under ASan)."""

    time: float = 60.0
    memory: int | None = 8 << 30
    cpu: float | None = None  # CPU seconds; None: time x CPU count (an emulated block is a thread)
    file_size: int | None = 1 << 30  # largest file the program may write
    output: int = 256 << 20  # stdout + stderr bytes before the program is stopped
    keep: int = 4 << 20  # bytes kept per stream (first and last halves)
    isolate: str = "auto"  # "auto": namespaces where they work; "namespaces": require them; "none"


@dataclass(frozen=True)
class Outcome:
    returncode: int  # the program's exit status; -N for signal N; 124 at the time limit
    stdout: str
    stderr: str
    status: str  # exited | signal | timeout | output-limit | memory-limit | cpu-limit
    seconds: float
    isolation: str  # "namespaces" or "process-group"
    signal: int = 0
    max_rss: int = 0  # bytes
    stdout_bytes: int = 0  # produced, whether kept or not
    stderr_bytes: int = 0
    lock_failed: tuple[str, ...] = ()  # mounts that could not be made read-only

    @property
    def passed(self) -> bool:
        return self.status == "exited" and self.returncode == 0

    @property
    def timed_out(self) -> bool:
        return self.status == "timeout"

    def reason(self, limits: Limits | None = None) -> str:
        """How the run ended, as a predicate ("did not finish within 60 s and was stopped")."""
        if self.status == "exited":
            return f"exited with status {self.returncode}"
        if self.status == "signal":
            name = signal.Signals(self.signal).name if self.signal in signal.valid_signals() else "?"
            return f"was killed by signal {self.signal} ({name})"
        limits = limits or Limits()
        return {"timeout": f"did not finish within {limits.time:g} s and was stopped",
                "memory-limit": f"ran out of its memory limit ({_size(limits.memory)})",
                "output-limit": f"printed more than the output limit ({_size(limits.output)}) and was stopped",
                "cpu-limit": "used up its CPU-time limit and was stopped"}[self.status]


def _size(n: int | None) -> str:
    return "unlimited" if n is None else f"{n / (1 << 30):g} GiB" if n >= 1 << 30 else f"{n >> 20} MiB"


class _Tail:
    """A stream's first and last `keep / 2` bytes, and how many bytes went by in all."""

    def __init__(self, keep: int):
        self.half = max(1, keep // 2)
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, data: bytes) -> None:
        self.total += len(data)
        room = self.half - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            if len(self.tail) > 2 * self.half:
                del self.tail[: len(self.tail) - self.half]

    def text(self) -> str:
        tail = self.tail[-self.half :] if len(self.tail) > self.half else self.tail
        skipped = self.total - len(self.head) - len(tail)
        middle = f"\n[musify: {skipped} bytes of output not kept]\n".encode() if skipped > 0 else b""
        return bytes(self.head + middle + tail).decode("utf-8", errors="replace")


@lru_cache(maxsize=1)
def namespaces_available() -> bool:
    """Whether unprivileged user+mount+net+pid namespaces work here (probed once per process)."""
    unshare = shutil.which("unshare")
    if sys.platform != "linux" or unshare is None:
        return False
    try:
        probe = subprocess.run([unshare, *_UNSHARE, "true"], capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return probe.returncode == 0


def clean_env(workdir: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment a program under test sees: a fixed PATH and locale, HOME and TMPDIR in its
    working directory, and only the variables the caller names (nothing of the user's own)."""
    env = dict(_BASE_ENV, HOME=str(workdir), TMPDIR=str(workdir))
    env.update(extra or {})
    return env


@contextmanager
def workspace(files: Sequence[Path] = (), prefix: str = "musify-run-") -> Iterator[Path]:
    """A fresh temporary directory holding copies of `files` (by name), removed afterwards."""
    root = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        for f in files:
            f = Path(f)
            if f.is_dir():
                shutil.copytree(f, root / f.name, symlinks=False, dirs_exist_ok=True)
            else:
                shutil.copy2(f, root / f.name)
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def run(argv: Sequence[str], workdir: Path, limits: Limits = Limits(), stdin: bytes | None = None,
        env: Mapping[str, str] | None = None) -> Outcome:
    """Run `argv` contained in `workdir` under `limits`; never raises for what the program does."""
    use_ns = limits.isolate != "none" and namespaces_available()
    if limits.isolate == "namespaces" and not use_ns:
        raise OSError("unprivileged user namespaces are not available here (unshare(1) failed)")
    program = [str(Path(argv[0]).resolve()) if os.sep in str(argv[0]) else shutil.which(argv[0]) or argv[0],
               *map(str, argv[1:])]
    rlimits = {"RLIMIT_CORE": 0, "RLIMIT_AS": limits.memory, "RLIMIT_FSIZE": limits.file_size,
               "RLIMIT_CPU": int(limits.cpu if limits.cpu is not None else limits.time * (os.cpu_count() or 1)) + 1}
    read_fd, write_fd = os.pipe()
    config = {"workdir": str(Path(workdir).resolve()), "lock_fs": use_ns, "rlimits": rlimits, "status_fd": write_fd}
    cmd = [sys.executable, "-I", "-S", str(CHILD), json.dumps(config), "--", *program]
    if use_ns:
        cmd = [shutil.which("unshare") or "unshare", *_UNSHARE, *cmd]
    return _supervise(cmd, Path(workdir), limits, stdin, clean_env(Path(workdir), env), (read_fd, write_fd),
                      "namespaces" if use_ns else "process-group")


def run_tool(argv: Sequence[str], cwd: Path | None = None, time_limit: float = 600.0,
             keep: int = 1 << 20) -> Outcome:
    """Run a trusted tool (the compiler, make -n, cmake) with a time limit over its whole process
    group and bounded output, in the caller's environment (no other containment)."""
    limits = Limits(time=time_limit, memory=None, output=1 << 40, keep=keep, isolate="none")
    return _supervise(list(map(str, argv)), cwd, limits, None, None, None, "process-group")


def _supervise(cmd: list[str], cwd: Path | None, limits: Limits, stdin: bytes | None,
               env: dict[str, str] | None, status_pipe: tuple[int, int] | None, isolation: str) -> Outcome:
    t0 = time.monotonic()
    stdin_file = None
    if stdin is not None:
        stdin_file = tempfile.TemporaryFile()  # noqa: SIM115 (closed in the finally below)
        stdin_file.write(stdin)
        stdin_file.seek(0)
    try:
        proc = subprocess.Popen(cmd, stdin=stdin_file or subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, cwd=cwd, env=env, start_new_session=True,
                                pass_fds=(status_pipe[1],) if status_pipe else ())
    except OSError as exc:
        if status_pipe:
            os.close(status_pipe[0])
            os.close(status_pipe[1])
        return Outcome(127, "", f"musify: cannot run {cmd[0]}: {exc.strerror}\n", "exited", 0.0, isolation)
    finally:
        if stdin_file:
            stdin_file.close()
    if status_pipe:
        os.close(status_pipe[1])
    with _live_lock:
        _live.add(proc.pid)
    streams = (_Tail(limits.keep), _Tail(limits.keep))
    over = threading.Event()
    readers = [threading.Thread(target=_pump, args=(pipe, buf, streams, limits.output, over, proc.pid), daemon=True)
               for pipe, buf in ((proc.stdout, streams[0]), (proc.stderr, streams[1]))]
    for r in readers:
        r.start()
    done: dict = {}
    waiter = threading.Thread(target=lambda: done.update(zip(("pid", "status", "rusage"), os.wait4(proc.pid, 0))),
                              daemon=True)
    waiter.start()
    try:
        waiter.join(limits.time)
    except BaseException:  # Ctrl-C in the thread that waits: the run must not outlive musify
        _kill_group(proc.pid)
        raise
    timed_out = waiter.is_alive()
    _kill_group(proc.pid)  # at the limit, and in every case: nothing the program started survives it
    waiter.join()
    with _live_lock:
        _live.discard(proc.pid)
    proc.returncode = 0  # reaped by wait4 above; keeps Popen from trying again
    for r in readers:
        r.join(5)
    for pipe in (proc.stdout, proc.stderr):
        pipe.close()
    reported = _read_status(status_pipe[0]) if status_pipe else {}
    status = done["status"]
    code, sig = (-os.WTERMSIG(status), os.WTERMSIG(status)) if os.WIFSIGNALED(status) else (os.WEXITSTATUS(status), 0)
    if "signal" in reported:
        code, sig = -reported["signal"], reported["signal"]
    elif "exit" in reported:
        code, sig = reported["exit"], 0
    max_rss = done["rusage"].ru_maxrss * 1024
    stderr = streams[1].text()
    kind = _classify(timed_out, over.is_set(), sig, code, stderr, max_rss, limits)
    if kind == "timeout":
        code = TIMEOUT_EXIT
    return Outcome(code, streams[0].text(), stderr, kind, time.monotonic() - t0, isolation, sig, max_rss,
                   streams[0].total, streams[1].total, tuple(reported.get("lock_failed", ())))


def _classify(timed_out: bool, over: bool, sig: int, code: int, stderr: str, max_rss: int, limits: Limits) -> str:
    if over:
        return "output-limit"
    if timed_out:
        return "timeout"
    if sig == signal.SIGXCPU:
        return "cpu-limit"
    if (sig or code) and limits.memory and any(w in stderr for w in _MEMORY_WORDS):
        return "memory-limit"
    # The peak RSS only explains a death by signal: it includes what the launcher inherited when it
    # was forked from a large parent (a test runner, a long musify run), so a program that merely
    # exited non-zero must not be called out of memory because of it.
    if sig and limits.memory and max_rss > 0.75 * limits.memory:
        return "memory-limit"
    return "signal" if sig else "exited"


def _pump(pipe, buf: _Tail, streams: tuple[_Tail, _Tail], limit: int, over: threading.Event, pid: int) -> None:
    fd = pipe.fileno()
    while True:
        try:
            data = os.read(fd, 1 << 16)
        except OSError:
            return
        if not data:
            return
        buf.add(data)
        if streams[0].total + streams[1].total > limit and not over.is_set():
            over.set()
            _kill_group(pid)


def kill_all() -> None:
    """Stop every run in progress (on Ctrl-C: their waits then end at once, nothing is left)."""
    with _live_lock:
        groups = list(_live)
    for pgid in groups:
        _kill_group(pgid)


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _read_status(fd: int) -> dict:
    status: dict = {}
    with os.fdopen(fd, "rb") as fh:
        for line in fh.read().splitlines():
            try:
                status.update(json.loads(line))
            except ValueError:
                continue
    return status
