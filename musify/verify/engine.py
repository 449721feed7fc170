"""Build and run each program's original and port on the emulator, and give each arch a verdict.

The original is built on the CUDA face at warp 32; the port on the MUSA face at each `--arch`'s
warp width (mp_22: 128, mp_31: 32). Every run is contained (musify/sandbox.py) in a fresh
working directory holding copies of the program's data files. Programs are verified on `jobs`
threads (each build and run is a process of its own).

Verdicts: `pass`; `fail` (with the first difference and a diff); `original-fails` (the original
itself does not succeed here: not verifiable on this backend, never a port failure);
`build-fail-original`; `build-fail-port` (the compiler's errors at the port's lines); `timeout`.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import fields
from pathlib import Path

from musify.arch import emulator_target
from musify.emu.build import BuildError, BuildOptions, build
from musify.emu.run import run
from musify.sandbox import Limits, Outcome, kill_all, workspace
from musify.verify.compare import Comparer, Run
from musify.verify.programs import Program
from musify.verify.settings import Settings

RACE_EXIT = 86
RACE_MARK = "musify-emu: shared-memory race:"
_ERROR = re.compile(r"^(?P<path>[^:\n]+):(?P<line>\d+):(?:(?P<col>\d+):)? (?:fatal )?error: (?P<msg>.*)$", re.MULTILINE)
_EMU_STOP = 3  # the emulator stopped the program (divergent barrier, stack overflow)


def build_options(face: str, arch: str, flags: list[str], settings: Settings) -> BuildOptions:
    """Emulator build options; the race check where this emulator has one (docs/verify.md)."""
    _, _, warp = emulator_target(arch)
    extra = {"racecheck": True} if settings.racecheck and "racecheck" in {f.name for f in fields(BuildOptions)} else {}
    return BuildOptions(face=face, arch=arch, warp=warp, optimize=1, project_flags=tuple(flags),
                        compile_timeout=settings.compile_time_limit, **extra)


def verify_all(programs: list[Program], settings: Settings,
               done: Callable[[Program, dict], None] | None = None) -> list[dict]:
    """Verify every program (in parallel on `settings.jobs` threads); results in program order."""
    comparer = Comparer(settings.rtol, settings.atol, settings.ignore)

    def one(program: Program) -> dict:
        result = verify_program(program, settings, comparer)
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


def verify_program(program: Program, settings: Settings, comparer: Comparer) -> dict:
    """The verify record of one program: its original's outcome and a verdict per arch."""
    base = Path(settings.base)
    result: dict = {"name": program.name, "kind": program.kind, "sources": [str(s) for s in program.sources],
                    "port_sources": [str(s) for s in program.port_sources],
                    "flags": {"from": program.build.where, "honoured": program.build.flags.flags,
                              "not_honoured": [list(x) for x in program.build.flags.ignored],
                              "problem": program.build.problem},
                    "original": {}, "archs": {}}
    if program.problem:
        for arch in settings.archs:
            result["archs"][arch] = {"verdict": "build-fail-port", "reason": program.problem}
        return result
    limits = Limits(time=program.spec.time_limit or settings.time_limit, memory=settings.memory_limit)
    if program.spec.ignore:
        comparer = Comparer(settings.rtol, settings.atol, settings.ignore + program.spec.ignore)
    data = [base / d for d in program.spec.data]
    stdin = (base / program.spec.stdin).read_bytes() if program.spec.stdin else None
    original = _build(program.sources, build_options("cuda", "sm_80", program.build.flags.flags, settings))
    result["original"]["build_seconds"] = original[1]
    if isinstance(original[0], BuildError):
        result["original"]["build"] = "failed"
        reason = _first_error(original[0])
        for arch in settings.archs:
            result["archs"][arch] = {"verdict": "build-fail-original", "reason": reason,
                                     "errors": _errors(original[0].log)}
        return result
    runs = [_run(original[0].executable, args, limits, stdin, data, program.spec.outputs) for args in program.spec.args]
    result["original"].update(build="ok", run_seconds=round(sum(r[1].seconds for r in runs), 3),
                              isolation=runs[0][1].isolation if runs else "",
                              **({"lock_failed": list(runs[0][1].lock_failed)} if runs and runs[0][1].lock_failed else {}))
    failing = next((r for r in runs if not _succeeded(r[1], program.spec.exit_code)), None)
    if failing:
        reason = _failure(failing[1], limits)
        result["original"]["reason"] = reason
        for arch in settings.archs:
            result["archs"][arch] = {"verdict": "original-fails", "reason": reason,
                                     "races": _races(failing[1].stderr)}
        return result
    for arch in settings.archs:
        result["archs"][arch] = _verify_port(program, arch, settings, comparer, runs, limits, stdin, data)
    return result


def _verify_port(program: Program, arch: str, settings: Settings, comparer: Comparer, originals: list,
                 limits: Limits, stdin: bytes | None, data: list[Path]) -> dict:
    built, seconds = _build(program.port_sources, build_options("musa", arch, program.port_flags.flags, settings))
    entry: dict = {"build_seconds": seconds}
    if isinstance(built, BuildError):
        return entry | {"verdict": "build-fail-port", "reason": _first_error(built),
                        "errors": _errors(built.log)}
    run_seconds = 0.0
    for (expected, _), args in zip(originals, program.spec.args):
        got, outcome = _run(built.executable, args, limits, stdin, data, program.spec.outputs)
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


def _build(sources: list[Path], options: BuildOptions):
    t0 = time.monotonic()
    try:
        built = build(sources, options)
    except BuildError as exc:
        built = exc
    return built, round(time.monotonic() - t0, 3)


def _run(executable: Path, args, limits: Limits, stdin: bytes | None, data: list[Path],
         outputs: tuple[str, ...]) -> tuple[Run, Outcome]:
    with workspace(data) as work:
        outcome = run(executable, list(args), cwd=work, limits=limits, stdin=stdin)
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


def _first_error(exc: BuildError) -> str:
    m = _ERROR.search(exc.log)
    return f"{m['path']}:{m['line']}: {m['msg']}" if m else str(exc)


def _errors(log: str) -> list[dict]:
    """The compiler's first errors, at the program's own lines (the rewrite keeps them)."""
    out = []
    for m in _ERROR.finditer(log):
        out.append({"path": m["path"], "line": int(m["line"]), "column": int(m["col"] or 0), "message": m["msg"]})
        if len(out) == 20:
            break
    return out
