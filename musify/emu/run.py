"""Run an emulator build with a time limit, so that a hanging program ends with a clear message."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

TIMEOUT_EXIT = 124


@dataclass(frozen=True)
class RunResult:
    returncode: int
    stdout: str
    stderr: str
    timed_out: bool


def run(executable: Path, args: list[str] | tuple[str, ...] = (), timeout: float = 60.0,
        cwd: Path | None = None) -> RunResult:
    """Run the program; on timeout kill it and say so in stderr (exit status 124, as timeout(1))."""
    try:
        proc = subprocess.run([str(executable), *args], capture_output=True, text=True, timeout=timeout,
                              cwd=cwd, check=False, errors="replace")
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else exc.stdout or ""
        err = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else exc.stderr or ""
        message = f"emu: the program did not finish within {timeout:g} s and was stopped\n"
        return RunResult(TIMEOUT_EXIT, out, err + message, True)
    return RunResult(proc.returncode, proc.stdout, proc.stderr, False)
