"""Run an emulator build contained (musify/sandbox.py): a time limit over the whole process group,
memory and CPU limits, bounded output, its own working directory, and namespaces where they work."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from musify.sandbox import TIMEOUT_EXIT, Limits, Outcome, workspace
from musify.sandbox import run as sandboxed

RunResult = Outcome  # returncode, stdout, stderr, timed_out, passed, status, reason()

__all__ = ["TIMEOUT_EXIT", "RunResult", "run"]
# the emulator's own settings (EMU_THREADS, ...) and OpenMP's reach the program; nothing else does
_PASSED_ON = ("EMU_", "MUSIFY_EMU_", "OMP_")


def run(executable: Path, args: Sequence[str] = (), timeout: float = 60.0, cwd: Path | None = None,
        limits: Limits | None = None, stdin: bytes | None = None, env: Mapping[str, str] | None = None,
        data: Sequence[Path] = ()) -> Outcome:
    """Run the program with `args`; when it is stopped, stderr ends with a line saying why.

    `cwd` is the working directory (written to by the program); without one the program gets a
    fresh temporary directory holding copies of `data`, removed afterwards."""
    limits = limits or Limits(time=timeout)
    env = {**{k: v for k, v in os.environ.items() if k.startswith(_PASSED_ON)}, **(env or {})}
    if cwd is not None:
        outcome = sandboxed([str(executable), *args], Path(cwd), limits, stdin, env)
    else:
        with workspace(data) as work:
            outcome = sandboxed([str(executable), *args], work, limits, stdin, env)
    if outcome.status in ("exited", "signal"):
        return outcome
    return replace(outcome, stderr=outcome.stderr + f"emu: the program {outcome.reason(limits)}\n")
