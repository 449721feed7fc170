"""What `musify verify` is asked to do: the `[tool.musify.verify]` table (or `[verify]` in a
`.musify.toml`) over the defaults, with the command line over both (docs/verify.md).

A bad value is a `ConfigError` naming the file and the key, so a misspelt setting never
silently verifies something else.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from musify.config import ConfigError

# lines that report how long something took or how fast it went differ from run to run
DEFAULT_IGNORE = (
    r"(?i)\b(time|times|timing|elapsed|duration|latency|bandwidth|throughput|speed-?up|took)\b",
    r"(?i)\b\d+(\.\d+)?\s*(ms|us|µs|ns|msec|usec|sec|secs|seconds)\b",
    r"(?i)\b[GMKT]i?B/s\b|\b[GMT]?FLOP/?s\b|\bGFLOPS\b",
)
DEFAULT_ARCHES = ("mp_22", "mp_31")
BACKENDS = ("emu", "cuda", "mcc")


@dataclass(frozen=True)
class ProgramSpec:
    """One `[[verify.programs]]` entry; paths are relative to the configuration file's directory."""

    name: str
    sources: tuple[str, ...] = ()  # empty: the sources found in directory `name`
    args: tuple[tuple[str, ...], ...] = ((),)
    stdin: str | None = None  # a file to feed on standard input
    data: tuple[str, ...] = ()  # files copied into the working directory
    outputs: tuple[str, ...] = ()  # files the program writes, compared
    time_limit: float | None = None
    exit_code: int = 0
    harness: bool = True  # False: do not generate a harness for this directory's kernels
    ignore: tuple[str, ...] = ()  # more output lines to leave out for this program (added to the run's)


@dataclass(frozen=True)
class Settings:
    archs: tuple[str, ...] = DEFAULT_ARCHES
    time_limit: float = 60.0
    memory_limit: int | None = 8 << 30
    compile_time_limit: float = 600.0
    rtol: float = 1e-5
    atol: float = 1e-8
    ignore: tuple[str, ...] = DEFAULT_IGNORE
    exclude: tuple[str, ...] = ()  # program names (directory paths) or globs not verified
    programs: tuple[ProgramSpec, ...] = ()
    jobs: int = 1
    build_dir: str | None = None  # -p: a compile_commands.json's folder
    extra_flags: tuple[str, ...] = ()  # given by hand (-I, -D, ... on the command line)
    racecheck: bool = True
    harness: bool = True
    harness_size: int = 1000  # elements per generated input array
    base: str = "."  # the configuration file's directory
    progress: bool = True
    backend: str = "emu"  # where to build and run: emu, cuda, mcc (backend.py, native.py)

    def with_(self, **changes) -> Settings:
        return replace(self, **{k: v for k, v in changes.items() if v is not None})


_TOP = {"archs": list, "time_limit": (int, float), "memory_limit_gib": (int, float), "compile_time_limit": (int, float),
        "rtol": (int, float), "atol": (int, float), "ignore": list, "exclude": list, "programs": list,
        "racecheck": bool, "harness": bool, "harness_size": int, "backend": str}
_PROGRAM = {"name": str, "sources": list, "args": list, "stdin": str, "data": list, "outputs": list,
            "time_limit": (int, float), "exit_code": int, "harness": bool, "ignore": list}


def from_table(table: dict, where: str, base: str) -> Settings:
    """Settings from a configuration table (`where` names the file in errors)."""
    for key, value in table.items():
        _check(key, value, _TOP, where, "verify")
    patterns = list(table.get("ignore", [])) + [p for e in table.get("programs", []) if isinstance(e, dict)
                                                 for p in e.get("ignore", [])]
    for pattern in patterns:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ConfigError(f"{where}: verify.ignore: bad pattern {pattern!r}: {exc}") from None
    programs = []
    for i, entry in enumerate(table.get("programs", [])):
        if not isinstance(entry, dict) or "name" not in entry:
            raise ConfigError(f"{where}: verify.programs[{i}] needs a table with a 'name'")
        for key, value in entry.items():
            _check(key, value, _PROGRAM, where, f"verify.programs[{i}]")
        args = entry.get("args", [])
        sets = [args] if not args or not isinstance(args[0], list) else args
        programs.append(ProgramSpec(
            name=entry["name"], sources=tuple(entry.get("sources", ())),
            args=tuple(tuple(str(a) for a in s) for s in sets) or ((),), stdin=entry.get("stdin"),
            data=tuple(entry.get("data", ())), outputs=tuple(entry.get("outputs", ())),
            time_limit=entry.get("time_limit"), exit_code=entry.get("exit_code", 0),
            harness=entry.get("harness", True), ignore=tuple(entry.get("ignore", ()))))
    if table.get("backend", "emu") not in BACKENDS:
        raise ConfigError(f"{where}: verify.backend must be one of {', '.join(BACKENDS)}, got {table['backend']!r}")
    memory = table.get("memory_limit_gib")
    return Settings(
        archs=tuple(table.get("archs", DEFAULT_ARCHES)), time_limit=float(table.get("time_limit", 60.0)),
        memory_limit=(None if memory == 0 else int(memory * (1 << 30))) if memory is not None else 8 << 30,
        compile_time_limit=float(table.get("compile_time_limit", 600.0)),
        rtol=float(table.get("rtol", 1e-5)), atol=float(table.get("atol", 1e-8)),
        ignore=tuple(table.get("ignore", DEFAULT_IGNORE)), exclude=tuple(table.get("exclude", ())),
        programs=tuple(programs), racecheck=table.get("racecheck", True), harness=table.get("harness", True),
        harness_size=table.get("harness_size", 1000), base=base, backend=table.get("backend", "emu"))


def _check(key: str, value: object, known: dict, where: str, table: str) -> None:
    if key not in known:
        raise ConfigError(f"{where}: {table}: unknown key {key!r} (known: {', '.join(sorted(known))})")
    if not isinstance(value, known[key]) or isinstance(value, bool) and known[key] is not bool:
        raise ConfigError(f"{where}: {table}.{key} has the wrong type ({type(value).__name__})")
