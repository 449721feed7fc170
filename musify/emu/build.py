"""Compile CUDA or MUSA sources against the emulator with g++ (or $CXX), cached by content.

The sources and the project headers they include with quotes are rewritten (rewrite.py) into a
build folder that mirrors their layout, so relative includes find the rewritten copies. The face
is chosen by extension (.mu/.muh: MUSA, anything else: CUDA) unless given. A build is keyed by a
hash of every rewritten file, the flags, the emulator headers and the compiler, and kept under
musify's cache root (`emu/`), so rebuilding an unchanged program costs one hash.

Most of a fresh build is g++ parsing the emulator headers, so with g++ the face header every
device file includes implicitly is precompiled once per face and flag set (kept in the cache
too); `build_many` runs independent builds on a few worker threads.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import lru_cache

try:
    import fcntl
except ImportError:  # not POSIX: builds still work, concurrent PCH builds just repeat work
    fcntl = None
from pathlib import Path

from musify import resources
from musify.arch import emulator_target
from musify.emu.rewrite import rewrite
from musify.emu.split import MARKER as SPLIT_MARKER
from musify.sandbox import run_tool

EMU_ROOT = resources.data_dir("shims/emu")
DEVICE_EXTENSIONS = {".cu", ".cuh", ".mu", ".muh"}
_QUOTED_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"\n]+)"', re.MULTILINE)
_RUNTIME_HEADER = {"cuda": "cuda_runtime.h", "musa": "musa_runtime.h"}


class BuildError(Exception):
    """The compiler rejected the program; `log` holds its messages."""

    def __init__(self, message: str, log: str):
        super().__init__(message)
        self.log = log


@dataclass(frozen=True)
class BuildOptions:
    face: str | None = None  # "cuda" or "musa"; None: by the first source's extension
    warp: int | None = None  # None: from arch (mp_21/mp_22 -> 128), else 32
    arch: str | None = None  # sm_80, mp_21, mp_22, mp_31
    sanitize: bool = False
    optimize: int = 2  # -O level; sanitizer builds use -O1 whatever this says
    arch_macro: bool = False  # define __CUDA_ARCH__/__MUSA_ARCH__ (docs/emulator.md)
    racecheck: bool = False  # report shared-memory races (exit status 86; docs/emulator.md)
    split: bool = True  # region-split eligible kernels (split.py; also off with MUSIFY_EMU_SPLIT=0)
    extra_flags: tuple[str, ...] = field(default_factory=tuple)  # g++ flags, also used for the precompiled header
    # the project's flags (-I, -D, -std=, -fopenmp, -l; musify/emu/flags.py sorts them): on the program's
    # command line only, so every project shares one precompiled header (g++ checks that it still applies)
    project_flags: tuple[str, ...] = field(default_factory=tuple)
    compile_timeout: float = 600.0  # seconds before the compiler is stopped (an include of a FIFO hangs)

    def resolved(self, sources: list[Path]) -> tuple[str, int, int]:
        """(face, warp size, EMU_ARCH value) for these sources."""
        face = self.face or ("musa" if sources[0].suffix in (".mu", ".muh") else "cuda")
        arch = self.arch or ("sm_80" if face == "cuda" else "mp_31")
        _, value, arch_warp = emulator_target(arch)
        return face, self.warp or arch_warp, value


@dataclass(frozen=True)
class Build:
    executable: Path
    command: list[str]
    cached: bool


def cache_root() -> Path:
    """The emulator's build cache, under musify's one cache root (musify.resources)."""
    return resources.cache_dir("emu")


@lru_cache(maxsize=4)
def _compiler_identity(cxx: str) -> str:
    try:
        return subprocess.run([cxx, "--version"], capture_output=True, text=True, check=False).stdout
    except OSError:
        return cxx


_digest_lock = threading.Lock()
_digest_memo: dict[tuple, str] = {}


def _emulator_digest() -> str:
    """Hash of every emulator header, recomputed only when a header's size or mtime changes.

    Listing and stat-ing the headers costs well under a millisecond; reading them is done once per
    process (and again only after an edit, which happens during development).
    """
    files = sorted(p for p in EMU_ROOT.rglob("*") if p.is_file())
    signature = tuple((str(p), st.st_mtime_ns, st.st_size) for p in files for st in [p.stat()])
    with _digest_lock:
        known = _digest_memo.get(signature)
        if known is None:
            h = hashlib.sha256()
            for path in files:
                h.update(str(path.relative_to(EMU_ROOT)).encode())
                h.update(path.read_bytes())
            known = _digest_memo[signature] = h.hexdigest()
        return known


def collect_files(sources: list[Path]) -> list[Path]:
    """The sources plus every existing file they reach through quoted includes."""
    seen: dict[Path, None] = {}
    todo = [p.resolve() for p in sources]
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen[path] = None
        try:
            text = path.read_text(errors="replace")
        except OSError:
            continue
        for name in _QUOTED_INCLUDE.findall(text):
            candidate = (path.parent / name).resolve()
            if candidate.is_file() and candidate not in seen:
                todo.append(candidate)
    return list(seen)


def drop_included_sources(sources: list[Path]) -> list[Path]:
    """The sources less those another source reaches through a quoted include.

    Some programs `#include "kernels.cu"` into main.cu; a build system that lists both would
    define everything in kernels.cu twice, so such a source is compiled only where it is included.
    Order is kept; of sources that include each other, the first listed stays.
    """
    resolved = [Path(s).resolve() for s in sources]
    dropped: set[Path] = set()
    for path in resolved:
        if path in dropped:
            continue
        reached = set(collect_files([path])) - {path}
        dropped |= {other for other in resolved if other in reached and other != path}
    return [s for s, r in zip(sources, resolved) if r not in dropped]


def _is_device_file(path: Path) -> bool:
    return path.suffix in DEVICE_EXTENSIONS


def prepare(sources: list[Path], workdir: Path, split: bool = False) -> list[Path]:
    """Write rewritten copies of the sources and their headers under workdir; return the sources' copies.
    `split`: eligible kernels run as loops over threads between barriers (split.py)."""
    files = collect_files(sources)
    root = Path(os.path.commonpath([str(p.parent) for p in files]))
    for path in files:
        target = workdir / path.relative_to(root)
        target.parent.mkdir(parents=True, exist_ok=True)
        text = path.read_text(errors="replace")
        target.write_text(rewrite(text, str(path), split) if _is_device_file(path) or "<<<" in text else text)
    return [workdir / p.resolve().relative_to(root) for p in sources]


def _base_flags(options: BuildOptions, face: str, warp: int, arch: int) -> list[str]:
    """Flags shared by every translation unit of a build (and its precompiled face header)."""
    level = 1 if options.sanitize else max(0, min(3, options.optimize))
    flags = ["-std=c++17", f"-O{level}", "-pthread", f"-DEMU_WARP_SIZE={warp}", f"-DEMU_ARCH={arch}",
             "-I", str(EMU_ROOT / face), "-I", str(EMU_ROOT / "libs" / face)]
    if options.arch_macro:
        flags.append("-DEMU_DEFINE_ARCH_MACRO")
    if options.sanitize:
        flags += ["-fsanitize=address", "-fno-omit-frame-pointer", "-g"]  # -g: reports name lines
    if options.racecheck:
        if options.sanitize:
            raise ValueError("--racecheck and --sanitize cannot be combined (g++ has one instrumentation at a time)")
        # ThreadSanitizer's instrumentation calls emu/racecheck.hpp (its runtime is never linked);
        # -g1: line tables, so that a race names its source lines
        flags += ["-DMUSIFY_EMU_RACECHECK=1", "-fsanitize=thread", "--param=tsan-instrument-func-entry-exit=0",
                  "-g1"]
    if runtime_linked(options):
        flags.append("-DEMU_RUNTIME_LINKED")
    return flags + list(options.extra_flags)


def runtime_linked(options: BuildOptions) -> bool:
    """Whether a build links the runtime compiled once per flag set (`runtime_object`) and lets
    the program see its declarations only (shims/emu/emu/config.hpp). That is the case wherever
    the face header is precompiled (g++, `MUSIFY_EMU_PCH` not 0), except sanitizer and race-check
    builds, whose instrumentation must cover the runtime as it does now (they stay header-only),
    and projects that set the emulator's own macros (the runtime would not see them)."""
    if options.sanitize or options.racecheck or not _uses_gcc_pch(os.environ.get("CXX", "g++")):
        return False
    return not any(f.startswith(("-DEMU_", "-UEMU_", "-DMUSIFY_EMU", "-UMUSIFY_EMU")) for f in options.project_flags)


def _is_link_flag(flag: str) -> bool:
    return flag.startswith(("-l", "-L", "-Wl,"))


def compile_command(sources: list[Path], output: Path, options: BuildOptions, include_dirs: list[Path],
                    prelude: Path | None = None, compile_only: bool = False,
                    runtime: Path | None = None) -> list[str]:
    """The compiler command line; device files include `prelude` (a precompiled face header) if given,
    and `runtime` (the compiled runtime, `runtime_object`) is linked in when given.

    `compile_only`: one source to one object file (-c), for builds linked in a separate step.
    """
    face, warp, arch = options.resolved(sources)
    cmd = [os.environ.get("CXX", "g++"), *_base_flags(options, face, warp, arch),
           *(f for f in options.project_flags if not _is_link_flag(f))]
    for d in include_dirs:
        cmd += ["-I", str(d)]
    for src in sources:
        if _is_device_file(src):
            cmd += ["-x", "c++", "-include", str(prelude or _RUNTIME_HEADER[face]), str(src), "-x", "none"]
        else:
            cmd.append(str(src))
    if runtime and not compile_only:
        cmd.append(str(runtime))
    return cmd + (["-c"] if compile_only else []) + ["-o", str(output)] + \
        ([] if compile_only else [f for f in options.project_flags if _is_link_flag(f)])


def _compile(copies: list[Path], out: Path, options: BuildOptions, include_dirs: list[Path],
             prelude: Path | None, runtime: Path | None = None):
    """Run the compiler (under the compile time limit); a race-check build compiles each source
    apart and links without the instrumentation's runtime (the emulator defines its entry points)."""
    if not options.racecheck:
        cmd = compile_command(copies, out, options, include_dirs, prelude, runtime=runtime)
        return cmd, run_tool(cmd, time_limit=options.compile_timeout)
    objects = []
    for i, src in enumerate(copies):
        obj = out.parent / f"obj{i}.o"
        cmd = compile_command([src], obj, options, include_dirs, prelude, compile_only=True)
        proc = run_tool(cmd, time_limit=options.compile_timeout)
        if proc.returncode != 0:
            return cmd, proc
        objects.append(str(obj))
    cmd = [os.environ.get("CXX", "g++"), "-pthread", *objects, *options.extra_flags, "-o", str(out),
           *(f for f in options.project_flags if _is_link_flag(f) or f == "-fopenmp")]  # -fopenmp links libgomp
    return cmd, run_tool(cmd, time_limit=options.compile_timeout)


def _uses_gcc_pch(cxx: str) -> bool:
    identity = _compiler_identity(cxx)
    return os.environ.get("MUSIFY_EMU_PCH", "1") != "0" and "Free Software Foundation" in identity \
        and "clang" not in identity


_pch_failed: set[str] = set()


def _flag_folder(options: BuildOptions, sources: list[Path]) -> tuple[Path, list[str], str, str]:
    """(cache folder, flags, face, compiler) of what is built once per face and flag set: the
    precompiled face header and the compiled runtime."""
    face, warp, arch = options.resolved(sources)
    cxx = os.environ.get("CXX", "g++")
    flags = _base_flags(options, face, warp, arch)
    key = hashlib.sha256("\0".join([cxx, *flags, _compiler_identity(cxx), _emulator_digest()]).encode())
    return cache_root() / "pch" / key.hexdigest()[:24], flags, face, cxx


def _own_timeout(options: BuildOptions) -> float:
    """The time limit for building the emulator's own parts (precompiled header, runtime.o): the
    program's compile limit guards against the program's inputs (an include of a FIFO), but these
    parts are shared, built once per flag set, and take seconds on a busy machine, so a tight limit
    given for the program must not fail them (default 600 s, or the program's limit when longer)."""
    return max(options.compile_timeout, 600.0)


def _built_once(folder: Path, name: str, command: list[str], timeout: float) -> subprocess.CompletedProcess | None:
    """Make `folder/name` with `command` (its output path given as the last argument) unless it is
    there. Concurrent builds (threads or processes) wait on the folder's file lock rather than
    building the same file twice; a partial file is never seen under the final name. Returns the
    failed compiler run, or None when the file is there."""
    target = folder / name
    if target.is_file():
        return None
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / f"{name}.lock", "w") as lock:  # one lock per file: the two build side by side
        if fcntl:
            fcntl.flock(lock, fcntl.LOCK_EX)
        if target.is_file():
            return None
        partial = folder / f"{name}.{os.getpid()}.{threading.get_ident()}"
        proc = run_tool([*command, str(partial)], time_limit=timeout)
        if proc.returncode != 0:
            partial.unlink(missing_ok=True)
            return proc
        os.replace(partial, target)
    return None


def precompiled_prelude(options: BuildOptions, sources: list[Path]) -> Path | None:
    """A header that includes the face's runtime header, precompiled for these flags (g++ only).

    g++ uses `prelude.h.gch` in place of `prelude.h` when the flags match and silently reads the
    text otherwise, so a stale or unusable PCH costs time, never correctness.
    """
    cxx = os.environ.get("CXX", "g++")
    if options.sanitize or not _uses_gcc_pch(cxx):  # sanitizer builds are rare: not worth a PCH
        return None
    folder, flags, face, cxx = _flag_folder(options, sources)
    if str(folder) in _pch_failed:
        return None
    prelude = folder / "prelude.h"
    if not (folder / "prelude.h.gch").is_file():
        folder.mkdir(parents=True, exist_ok=True)
        prelude.write_text(f"#include <{_RUNTIME_HEADER[face]}>\n")
        if _built_once(folder, "prelude.h.gch", [cxx, *flags, "-x", "c++-header", str(prelude), "-o"],
                       _own_timeout(options)) is not None:
            _pch_failed.add(str(folder))
            return None
    return prelude


def runtime_object(options: BuildOptions, sources: list[Path]) -> Path:
    """The emulator runtime (shims/emu/emu/runtime.cpp) compiled for these flags, once per flag
    set, compiler and emulator version (the key of the precompiled header's folder, which it
    shares); raises BuildError when the compiler rejects it."""
    folder, flags, face, cxx = _flag_folder(options, sources)
    failed = _built_once(folder, "runtime.o", [cxx, *flags, "-DEMU_RUNTIME_IMPL", "-x", "c++", "-include",
                                               _RUNTIME_HEADER[face], str(EMU_ROOT / "emu" / "runtime.cpp"),
                                               "-c", "-o"], _own_timeout(options))
    if failed is not None:
        raise BuildError("the emulator runtime did not compile" + (" in time" if failed.timed_out else ""),
                         failed.stderr)
    return folder / "runtime.o"


def splits(options: BuildOptions) -> bool:
    """Whether kernels are region-split (split.py): not under `--racecheck` (its hooks follow the
    fibers' barriers), nor `--sanitize` (reports keep the fibers' stacks), nor with MUSIFY_EMU_SPLIT=0."""
    return options.split and os.environ.get("MUSIFY_EMU_SPLIT", "1") != "0" and not options.sanitize \
        and not options.racecheck


def build(sources: list[Path], options: BuildOptions = BuildOptions(), keep_dir: Path | None = None) -> Build:
    """Compile (or find in the cache) the program made of `sources`; raise BuildError on failure.
    A program whose region-split rewrite does not compile is built again without the split, so
    the split can never reject a program the fibers accept."""
    sources = drop_included_sources([Path(s) for s in sources])
    if not sources:
        raise ValueError("no sources to build")
    for src in sources:
        if not src.is_file():  # a FIFO or device would hang the rewrite that reads it
            raise BuildError(f"{src}: not a regular file", "")
    if splits(options):
        try:
            return _build(sources, options, keep_dir, True)
        except _SplitFailed:
            pass
    return _build(sources, options, keep_dir, False)


class _SplitFailed(Exception):
    pass


def _build(sources: list[Path], options: BuildOptions, keep_dir: Path | None, split: bool) -> Build:
    with tempfile.TemporaryDirectory(prefix="musify-emu-") as tmp:
        work = Path(tmp) / "src"
        copies = prepare(sources, work, split)
        include_dirs = sorted({p.resolve().parent for p in sources})
        probe = compile_command(copies, Path("prog"), options, include_dirs)
        key = hashlib.sha256()
        key.update("\0".join(probe).replace(str(work), "<work>").encode())
        key.update(_compiler_identity(probe[0]).encode())
        key.update(_emulator_digest().encode())
        for path in sorted(work.rglob("*")):
            if path.is_file():
                key.update(str(path.relative_to(work)).encode())
                key.update(path.read_bytes())
        cache = cache_root() / key.hexdigest()[:32]
        exe = cache / "prog"
        if keep_dir:
            shutil.copytree(work, keep_dir, dirs_exist_ok=True)
        if exe.is_file():
            if keep_dir:
                shutil.copy2(exe, keep_dir / "prog")
            return Build(exe, probe, True)
        out = Path(tmp) / "prog"
        with ThreadPoolExecutor(max_workers=1) as side:  # a cold cache builds the runtime beside the PCH
            pending = side.submit(runtime_object, options, sources) if runtime_linked(options) else None
            prelude = precompiled_prelude(options, sources) if any(map(_is_device_file, copies)) else None
            runtime = pending.result() if pending else None
        cmd, proc = _compile(copies, out, options, include_dirs, prelude, runtime)
        if proc.timed_out:
            raise BuildError(f"the compiler did not finish within {options.compile_timeout:g} s "
                             f"({' '.join(str(s) for s in sources)})", proc.stderr)
        if proc.returncode != 0 and split and any(
                SPLIT_MARKER in p.read_text(errors="replace") for p in work.rglob("*") if p.is_file()):
            raise _SplitFailed()
        if proc.returncode != 0:
            raise BuildError(f"compilation failed ({' '.join(str(s) for s in sources)})", proc.stderr)
        cache.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".tmp-", dir=cache.parent))
        shutil.move(str(out), staging / "prog")
        try:
            staging.rename(cache)
        except OSError:  # another process stored the same build meanwhile
            shutil.rmtree(staging, ignore_errors=True)
        if keep_dir:
            shutil.copy2(exe, keep_dir / "prog")
        return Build(exe, cmd, False)


def build_many(jobs: list[tuple[list[Path], BuildOptions]], workers: int = 2) -> list[Build | BuildError]:
    """Build several programs at once on `workers` threads (each build is one compiler process).

    Returns, in the order of `jobs`, each Build or the BuildError its compiler reported, so that one
    broken program does not hide the others.
    """

    def one(job: tuple[list[Path], BuildOptions]) -> Build | BuildError:
        try:
            return build(*job)
        except BuildError as exc:
            return exc

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        return list(pool.map(one, jobs))
