"""Build and run each program's original and port, and give each arch a verdict.

Where they are built and run is the backend's (backend.py: the emulator by default, the original on
its CUDA face at warp 32 and the port on its MUSA face at each `--arch`'s warp width; native.py:
nvcc or mcc and a real GPU). Whatever the backend, every run is contained (musify/sandbox.py) in a
fresh working directory holding copies of the program's data files, and compared by one Comparer.
Programs are verified on `jobs` threads (each build and run is a process of its own).

Verdicts: `pass`; `fail` (with the first difference and a diff); `original-fails` (the original
itself does not succeed here: not verifiable on this backend, never a port failure);
`build-fail-original`; `build-fail-port` (the compiler's errors at the port's lines); `timeout`;
`not-run` (built, but this machine has no GPU for the backend: nothing was proven about results).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from musify.sandbox import Limits, Outcome, kill_all, workspace
from musify.verify.backend import Backend, Built, EmuBackend, build_options
from musify.verify.compare import Comparer, Run
from musify.verify.programs import Program
from musify.verify.settings import Settings

__all__ = ["build_options", "verify_all", "verify_program"]
RACE_EXIT = 86
RACE_MARK = "musify-emu: shared-memory race:"
_EMU_STOP = 3  # the emulator stopped the program (divergent barrier, stack overflow)


def verify_all(programs: list[Program], settings: Settings,
               done: Callable[[Program, dict], None] | None = None, backend: Backend | None = None) -> list[dict]:
    """Verify every program (in parallel on `settings.jobs` threads); results in program order."""
    comparer = Comparer(settings.rtol, settings.atol, settings.ignore)
    backend = backend or EmuBackend()

    def one(program: Program) -> dict:
        result = verify_program(program, settings, comparer, backend)
        if done:
            done(program, result)
        return result

    pool = ThreadPoolExecutor(max_workers=max(1, settings.jobs))
    try:
        return list(pool.map(one, programs))
    except KeyboardInterrupt:
        pool.shutdown(wait=False, cancel_futures=True)
        kill_all()  # the compilers and programs in flight; their threads then finish at once
        raise
    finally:
        pool.shutdown(wait=True)


def verify_program(program: Program, settings: Settings, comparer: Comparer, backend: Backend | None = None) -> dict:
    """The verify record of one program: its original's outcome and a verdict per arch."""
    backend = backend or EmuBackend()
    targets = backend.targets(settings.archs)
    base = Path(settings.base)
    result: dict = {"name": program.name, "kind": program.kind, "sources": [str(s) for s in program.sources],
                    "port_sources": [str(s) for s in program.port_sources],
                    "flags": {"from": program.build.where, "honoured": program.build.flags.flags,
                              "not_honoured": backend.not_honoured(program.build.flags.ignored),
                              "problem": program.build.problem},
                    "original": {}, "archs": {}}
    if program.problem:
        for arch in targets:
            result["archs"][arch] = {"verdict": "build-fail-port", "reason": program.problem}
        return result
    limits = Limits(time=program.spec.time_limit or settings.time_limit, memory=settings.memory_limit)
    if program.spec.ignore:
        comparer = Comparer(settings.rtol, settings.atol, settings.ignore + program.spec.ignore)
    data = [base / d for d in program.spec.data]
    stdin = (base / program.spec.stdin).read_bytes() if program.spec.stdin else None
    original = backend.build_original(program, settings)
    result["original"]["build_seconds"] = original.seconds
    if not original.ok:
        result["original"]["build"] = "failed"
        for arch in targets:
            result["archs"][arch] = {"verdict": "build-fail-original", "reason": original.first_error(),
                                     "errors": original.errors()}
        return result
    if original.not_run:  # built; no device to run it on: the ports are built, nothing is run
        result["original"].update(build="ok", run="not-run", reason=original.not_run)
        for arch in targets:
            result["archs"][arch] = _port_not_run(backend.build_port(program, arch, settings), original.not_run)
        return result
    runs = [_run(original, args, limits, stdin, data, program.spec.outputs) for args in program.spec.args]
    result["original"].update(build="ok", run_seconds=round(sum(r[1].seconds for r in runs), 3),
                              isolation=runs[0][1].isolation if runs else "",
                              **({"lock_failed": list(runs[0][1].lock_failed)} if runs and runs[0][1].lock_failed else {}))
    failing = next((r for r in runs if not _succeeded(r[1], program.spec.exit_code)), None)
    if failing:
        reason = _failure(failing[1], limits)
        result["original"]["reason"] = reason
        for arch in targets:
            result["archs"][arch] = {"verdict": "original-fails", "reason": reason,
                                     "races": _races(failing[1].stderr)}
        return result
    for arch in targets:
        result["archs"][arch] = _verify_port(program, backend.build_port(program, arch, settings), comparer, runs,
                                             limits, stdin, data)
    return result


def _port_not_run(built: Built, why: str) -> dict:
    entry: dict = {"build_seconds": built.seconds}
    if not built.ok:
        return entry | {"verdict": "build-fail-port", "reason": built.first_error(), "errors": built.errors()}
    return entry | {"verdict": "not-run", "reason": f"built, not run: {why}"}


def _verify_port(program: Program, built: Built, comparer: Comparer, originals: list,
                 limits: Limits, stdin: bytes | None, data: list[Path]) -> dict:
    if not built.ok or built.not_run:
        return _port_not_run(built, built.not_run)
    entry: dict = {"build_seconds": built.seconds}
    run_seconds = 0.0
    for (expected, _), args in zip(originals, program.spec.args):
        got, outcome = _run(built, args, limits, stdin, data, program.spec.outputs)
        run_seconds += outcome.seconds
        entry["run_seconds"] = round(run_seconds, 3)
        if outcome.status == "timeout":
            return entry | {"verdict": "timeout", "reason": f"the port {outcome.reason(limits)}", "args": list(args)}
        races = _races(outcome.stderr)
        if races:
            return entry | {"verdict": "fail", "reason": "shared-memory race", "races": races, "args": list(args)}
        diff = comparer.first_difference(expected, got)
        if diff:
            reason = diff.line() if outcome.status in ("exited",) else f"the port {outcome.reason(limits)}"
            return entry | {"verdict": "fail", "reason": reason, "first_difference": diff.to_json(), "args": list(args)}
    return entry | {"verdict": "pass"}


def _run(built: Built, args, limits: Limits, stdin: bytes | None, data: list[Path],
         outputs: tuple[str, ...]) -> tuple[Run, Outcome]:
    with workspace(data) as work:
        outcome = built.runner(built.executable, list(args), work, limits, stdin)
        files = {name: (work / name).read_bytes() for name in outputs if (work / name).is_file()}
    return Run(outcome.returncode, outcome.stdout, outcome.stderr, files), outcome


def _succeeded(outcome: Outcome, exit_code: int) -> bool:
    return outcome.status == "exited" and outcome.returncode == exit_code and RACE_MARK not in outcome.stderr


def _failure(outcome: Outcome, limits: Limits) -> str:
    if RACE_MARK in outcome.stderr or outcome.returncode == RACE_EXIT and outcome.status == "exited":
        return "shared-memory race"
    if outcome.status == "exited" and outcome.returncode == _EMU_STOP and "emu: error" in outcome.stderr:
        line = next(ln for ln in outcome.stderr.splitlines() if "emu: error" in ln)
        return f"stopped by the emulator: {line.split('emu: error:', 1)[-1].strip()}"
    last = (outcome.stderr.strip().splitlines() or [""])[-1][:200]
    return f"the original {outcome.reason(limits)}" + (f" ({last})" if last else "")


def _races(stderr: str) -> list[str]:
    return [line.split(RACE_MARK, 1)[1].strip() for line in stderr.splitlines() if RACE_MARK in line][:10]
