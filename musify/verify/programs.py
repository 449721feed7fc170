"""Find the programs to verify and pair each original file with its port.

Pairs come from the run record (`path` -> the port tree joined with `output_path`), so renames
and include fix-ups never have to be guessed. A directory whose sources define one `main` is one
program (all its sources, less those another source `#include`s; the sources the build compiles
when its Makefile or compile database says); a directory with several mains makes one program per
main; a directory whose sources define kernels and no `main` is left to the harness. Programs the
configuration names (`[[verify.programs]]`) take their sources, arguments and data from it.
"""

from __future__ import annotations

import fnmatch
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from musify.emu.flags import FlagSet
from musify.records import RunRecord
from musify.verify.buildinfo import SOURCE_SUFFIXES, BuildInfo, read_build
from musify.verify.settings import ProgramSpec, Settings

_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)
_MAIN = re.compile(r"(?m)^[ \t]*(?:extern\s+\"C\"\s+)?(?:int|auto|void)\s+main\s*\(")
_KERNEL = re.compile(r"\b__global__\b")
_HEADER_SUFFIXES = {".h", ".hh", ".hpp", ".hxx", ".cuh", ".muh", ".inl"}
_INCLUDE = re.compile(r'(?m)^[ \t]*#[ \t]*include[ \t]*"([^"\n]+)"')


@dataclass
class Program:
    name: str  # its directory relative to the original root (or the configured name)
    sources: list[Path]  # original sources, absolute
    port_sources: list[Path]  # their ports, in the same order
    spec: ProgramSpec
    directory: Path  # where its build commands run (relative include paths start here)
    build: BuildInfo = field(default_factory=BuildInfo)
    port_flags: FlagSet = field(default_factory=FlagSet)
    kind: str = "program"  # "program" or "harness"
    problem: str = ""  # why it cannot be verified, when it cannot


@dataclass
class Pairing:
    """Original file -> port file, for every file of the record."""

    original_root: Path
    port_root: Path
    ports: dict[Path, Path]
    inputs: tuple[Path, ...] = ()  # the migration's input folders, for program names

    def port_of(self, original: Path) -> Path:
        original = original.resolve()
        if original in self.ports:
            return self.ports[original]
        return self.port_root / original.relative_to(self.original_root)

    def remap_flags(self, flags: FlagSet) -> FlagSet:
        """The same flags with include paths inside the original tree moved into the port tree."""
        out = FlagSet(ignored=list(flags.ignored))
        for f in flags.flags:
            if f.startswith(("-I", "-L")) and _inside(Path(f[2:]), self.original_root):
                f = f[:2] + str(self.port_root / Path(f[2:]).resolve().relative_to(self.original_root))
            out.flags.append(f)
        return out


def pairing(record: RunRecord, port_root: Path) -> Pairing:
    """Pairs from the record; PORT may be one file when ORIGINAL is one (`verify a.cu a.mu`)."""
    single = port_root.is_file()
    tree = port_root.parent if single else port_root
    ports = {Path(f.path).resolve(): (tree / f.output_path).resolve() for f in record.files}
    if single and len(record.inputs) == 1:
        ports[Path(record.inputs[0]).resolve()] = port_root.resolve()
        port_root = tree
    originals = [p for p in ports] or [Path(i).resolve() for i in record.inputs]
    if len(originals) == 1:
        root = originals[0].parent
    else:
        root = Path(os.path.commonpath([str(p) for p in originals]))
    if len(record.inputs) == 1 and Path(record.inputs[0]).is_dir():
        root = Path(record.inputs[0]).resolve()
    inputs = tuple(Path(i).resolve() for i in record.inputs if Path(i).is_dir())
    return Pairing(root, port_root.resolve(), ports, inputs if len(inputs) > 1 else ())


def find_programs(record: RunRecord, pair: Pairing, settings: Settings) -> list[Program]:
    """Every program of the original tree (configured ones first), with its port's sources."""
    by_dir: dict[Path, list[Path]] = {}
    musa_dirs = {Path(f.path).resolve().parent for f in record.files if f.kind == "musa"}
    for original in pair.ports:
        if original.suffix in SOURCE_SUFFIXES and original.parent not in musa_dirs:
            by_dir.setdefault(original.parent, []).append(original)  # a folder of MUSA files is no original
    configured = {spec.name: spec for spec in settings.programs}
    programs: list[Program] = []
    for spec in settings.programs:
        if spec.sources:
            base = Path(settings.base).resolve()
            sources = [(base / s).resolve() for s in spec.sources]
            directory = sources[0].parent
            programs.append(_program(spec.name, sources, spec, directory, pair, settings, BuildInfo()))
    for directory in sorted(by_dir):
        name = _name(directory, pair)
        if name in configured and configured[name].sources or _excluded(name, settings.exclude):
            continue
        spec = configured.get(name, ProgramSpec(name=name))
        programs += _programs_in(directory, sorted(by_dir[directory]), spec, pair, settings)
    return programs


def _programs_in(directory: Path, files: list[Path], spec: ProgramSpec, pair: Pairing,
                 settings: Settings) -> list[Program]:
    build_dir = Path(settings.build_dir).resolve() if settings.build_dir else None
    info = read_build(directory, build_dir, settings.compile_time_limit, pair.original_root)
    sources = [s for s in info.sources if s in pair.ports] or _own_sources(files)
    mains = [s for s in sources if _MAIN.search(_code(s))]
    if mains and not info.sources:
        sources += [s for s in _implementations(sources, pair) if s not in sources]
    if not mains:
        if any(_KERNEL.search(_code(s)) for s in sources) and spec.harness and settings.harness:
            return [_program(spec.name, sources, spec, directory, pair, settings, info, kind="harness")]
        return []
    if len(mains) == 1:
        return [_program(spec.name, sources, spec, directory, pair, settings, info)]
    shared = [s for s in sources if s not in mains]
    return [_program(f"{spec.name}/{m.stem}", [m, *shared], spec, directory, pair, settings, info) for m in mains]


def _program(name: str, sources: list[Path], spec: ProgramSpec, directory: Path, pair: Pairing,
             settings: Settings, info: BuildInfo, kind: str = "program") -> Program:
    flags = FlagSet(list(info.flags.flags), list(info.flags.ignored))
    flags.merge(FlagSet(list(settings.extra_flags)))
    info.flags = flags
    port_sources = [pair.port_of(s) for s in sources]
    missing = [p for p in port_sources if not p.is_file()]
    problem = info.problem or (f"port file missing: {missing[0]}" if missing else "")
    return Program(name, sources, port_sources, spec, directory, info, pair.remap_flags(flags), kind, problem)


def _implementations(sources: list[Path], pair: Pairing) -> list[Path]:
    """Sources elsewhere in the tree that implement a header the program includes: `x.cuh`
    included means `x.cu` (or `.cpp`, `.cc`) beside it is part of the program (a driver in
    `driver/` calling the kernels of `csrc/`), unless it has a `main` of its own."""
    from musify.emu.build import collect_files

    found: list[Path] = []
    frontier = list(sources)
    while frontier:
        new: list[Path] = []
        for header in collect_files(frontier):
            if header.suffix not in _HEADER_SUFFIXES:
                continue
            for suffix in (".cu", ".cpp", ".cc", ".cxx"):
                impl = header.with_suffix(suffix)
                if impl in pair.ports and impl not in sources and impl not in found and impl not in new \
                        and not _MAIN.search(_code(impl)):
                    new.append(impl)
        found += new
        frontier = new
    return found


def _own_sources(files: list[Path]) -> list[Path]:
    """The directory's sources less those another of them includes (`#include "kernels.cu"`)."""
    included = set()
    for f in files:
        for name in _INCLUDE.findall(_code(f, strip_comments=False)):
            included.add((f.parent / name).resolve())
    return [f for f in files if f not in included]


def _code(path: Path, strip_comments: bool = True) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    return _COMMENT.sub(" ", text) if strip_comments else text


def _name(directory: Path, pair: Pairing) -> str:
    """A program's name: its folder relative to the input (input/folder when there are several)."""
    for top in pair.inputs:
        if directory == top or top in directory.parents:
            return f"{top.name}/{_rel(directory, top)}" if directory != top else top.name
    return _rel(directory, pair.original_root)


def _rel(path: Path, root: Path) -> str:
    try:
        rel = path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()
    return rel if rel != "." else path.name


def _excluded(name: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatch(name, p) or name == p for p in patterns)


def _inside(path: Path, root: Path) -> bool:
    try:
        path.resolve().relative_to(root)
    except ValueError:
        return False
    return True
