"""Where verify builds and runs a program: the backend interface, and the emulator backend.

A backend builds a program's original and its port (`build_original`, `build_port`, for each of
its `targets`) and says how each binary runs; the engine (engine.py) runs them all the same way in
the sandbox, compares them with one Comparer and gives the same verdicts, whatever the backend.
A `Built` that cannot run here carries the reason (`not_run`: no GPU), and the engine then gives
the verdict `not-run` instead of pretending.

- `emu` (this module): the CPU emulator; the original on its CUDA face at warp 32, the port on its
  MUSA face at each `--arch`'s warp width. Runs anywhere g++ does.
- `cuda` and `mcc` (native.py): the real compilers, runs on a real GPU where one is present.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Protocol

from musify.arch import emulator_target
from musify.emu.build import BuildError, BuildOptions, build
from musify.emu.run import run as emu_run
from musify.sandbox import Limits, Outcome
from musify.verify.programs import Program
from musify.verify.settings import Settings

# gcc/clang: `path:12:3: error: msg`; nvcc's front end: `path(12): error: msg`
_ERROR = re.compile(r"^(?P<path>[^:\n]+?)(?::(?P<line>\d+):(?:(?P<col>\d+):)?|\((?P<pline>\d+)\):) "
                    r"(?:fatal )?error(?: #\w+(?:-D)?)?: (?P<msg>.*)$", re.MULTILINE)

Runner = Callable[[Path, Sequence[str], Path, Limits, "bytes | None"], Outcome]


@dataclass
class Built:
    """One build: the executable, or why there is none (`message`, and the compiler's `log`)."""

    executable: Path | None
    seconds: float
    runner: Runner | None = None  # how the executable runs (in the sandbox, in a working directory)
    not_run: str = ""  # why it cannot run here ("" when it can): the verdict is then `not-run`
    message: str = ""
    log: str = ""
    command: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.executable is not None

    def first_error(self) -> str:
        """The compiler's first error, `path:line: message`, or the build's message."""
        errors = compiler_errors(self.log, 1)
        return f"{errors[0]['path']}:{errors[0]['line']}: {errors[0]['message']}" if errors else self.message

    def errors(self) -> list[dict]:
        return compiler_errors(self.log)


class Backend(Protocol):
    """What the engine asks of a backend. `name` goes in the record; `device` says what runs the
    port ("CPU emulator", "NVIDIA H100 80GB HBM3 (sm_90)", "" when nothing can); `not_run` why its
    ports cannot run here ("" when they can); `targets` are the record's arch keys."""

    name: str
    device: str
    not_run: str

    def targets(self, archs: tuple[str, ...]) -> tuple[str, ...]: ...

    def not_honoured(self, ignored: list[tuple[str, str]]) -> list[list[str]]: ...

    def build_original(self, program: Program, settings: Settings) -> Built: ...

    def build_port(self, program: Program, target: str, settings: Settings) -> Built: ...


def compiler_errors(log: str, limit: int = 20) -> list[dict]:
    """The compiler's first errors (gcc, clang or nvcc spelling), at the program's own lines."""
    out = []
    for m in _ERROR.finditer(log):
        out.append({"path": m["path"].strip(), "line": int(m["line"] or m["pline"]), "column": int(m["col"] or 0),
                    "message": m["msg"]})
        if len(out) == limit:
            break
    return out


def timed(build_step: Callable[[], Built]) -> Built:
    """Run a build step and set how long it took."""
    t0 = time.monotonic()
    built = build_step()
    built.seconds = round(time.monotonic() - t0, 3)
    return built


def build_options(face: str, arch: str, flags: list[str], settings: Settings) -> BuildOptions:
    """Emulator build options; the race check where this emulator has one (docs/verify.md)."""
    _, _, warp = emulator_target(arch)
    extra = {"racecheck": True} if settings.racecheck and "racecheck" in {f.name for f in fields(BuildOptions)} else {}
    return BuildOptions(face=face, arch=arch, warp=warp, optimize=1, project_flags=tuple(flags),
                        compile_timeout=settings.compile_time_limit, **extra)


def _run_on_emulator(executable: Path, args: Sequence[str], cwd: Path, limits: Limits, stdin: bytes | None) -> Outcome:
    return emu_run(executable, list(args), cwd=cwd, limits=limits, stdin=stdin)


def emulator_build(sources: list[Path], options: BuildOptions) -> Built:
    """Build on the emulator; a compiler error is a Built without an executable."""
    def step() -> Built:
        try:
            made = build(sources, options)
        except BuildError as exc:
            return Built(None, 0.0, message=str(exc), log=exc.log)
        return Built(made.executable, 0.0, _run_on_emulator, command=made.command)
    return timed(step)


class EmuBackend:
    """The reference emulator: no GPU, no vendor compiler; the port at every MUSA arch's warp width."""

    name = "emu"
    device = "CPU emulator"
    not_run = ""

    def targets(self, archs: tuple[str, ...]) -> tuple[str, ...]:
        return archs

    def not_honoured(self, ignored: list[tuple[str, str]]) -> list[list[str]]:
        """The project flags this backend's builds leave out, each with why."""
        return [list(x) for x in ignored]

    def build_original(self, program: Program, settings: Settings) -> Built:
        return emulator_build(program.sources, build_options("cuda", "sm_80", program.build.flags.flags, settings))

    def build_port(self, program: Program, target: str, settings: Settings) -> Built:
        return emulator_build(program.port_sources, build_options("musa", target, program.port_flags.flags, settings))


def make_backend(name: str, environ: dict[str, str] | None = None) -> Backend:
    """The backend called `name`; ValueError (a usage error, one line) when its compiler is missing."""
    if name == "emu":
        return EmuBackend()
    from musify.verify.native import native_backend

    return native_backend(name, dict(os.environ if environ is None else environ))
