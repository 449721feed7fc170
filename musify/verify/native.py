"""Verify with the real compilers: `--backend cuda` (nvcc, an NVIDIA GPU) and `--backend mcc` (a MUSA GPU).

- `cuda`: the original built with nvcc; the port built with nvcc through `shims/musa_on_cuda/`
  (`-x cu` for `.mu`, `-I` the shims, `-include musa_on_cuda.h`, MUSA libraries linked by their
  CUDA names: `-lmublas` is `-lcublas`); both run on the NVIDIA GPU, at its own arch (one arch,
  warp 32: a 128-lane hazard cannot show here).
- `mcc`: the port built with mcc for each `--arch` (`--offload-arch=mp_XX`, `-lmusart`, the MUSA
  libraries it includes); the original runs on the emulator's CUDA face, since a MUSA machine has
  no NVIDIA GPU to run an nvcc build on and the emulator gives the reference outputs anywhere.

Each source is compiled on its own (`-c`, under the compile time limit) and the objects linked, so a
compiler error names the port's own file and line. The project flags verify gathered (-I -D -U
-std= -include, host flags, -l -L -Wl) are spelt for each compiler. Where the compiler is present
and the GPU is not, everything is still built (build verdicts are real) and each run is `not-run`
with the reason; nothing is counted as passed (docs/verify.md, "Backends").
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

from musify import resources
from musify.arch import MUSA_PRODUCTS, WARP_WIDTH
from musify.emu.build import collect_files, drop_included_sources
from musify.sandbox import Limits, Outcome, run_tool
from musify.sandbox import run as sandboxed
from musify.verify.backend import Built, EmuBackend, timed
from musify.verify.programs import Program
from musify.verify.settings import Settings

SHIM = resources.data_dir("shims/musa_on_cuda")
DEVICE_SUFFIXES = {".cu", ".cuh", ".mu", ".muh"}
# what a GPU program needs from the environment: the driver's device selection, library paths
_PASSED_ON = ("CUDA_", "NVIDIA_", "MUSA_", "MTHREADS_", "LD_LIBRARY_PATH", "OMP_")
_ANGLE_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*<([^>\n]+)>', re.MULTILINE)


@dataclass(frozen=True)
class Gpu:
    name: str  # "NVIDIA H100 80GB HBM3"
    arch: str = ""  # "sm_90" where the driver says; "" when not known


def nvidia_gpu() -> Gpu | None:
    """The first NVIDIA GPU: `nvidia-smi -L` listing one, or a `/dev/nvidia0` device node."""
    smi = shutil.which("nvidia-smi")
    if smi:
        listed = run_tool([smi, "-L"], time_limit=30)
        lines = [ln for ln in listed.stdout.splitlines() if ln.startswith("GPU ")]
        if listed.returncode == 0 and lines:
            query = run_tool([smi, "--query-gpu=name,compute_cap", "--format=csv,noheader"], time_limit=30)
            name, _, cap = (query.stdout.splitlines() or [""])[0].rpartition(",")
            if query.returncode == 0 and re.fullmatch(r"\d+\.\d+", cap.strip()):
                return Gpu(name.strip(), "sm_" + cap.strip().replace(".", ""))
            return Gpu(lines[0].split(":", 1)[-1].split("(UUID")[0].strip())
    if Path("/dev/nvidia0").exists():
        return Gpu("NVIDIA GPU (/dev/nvidia0)")
    return None


def musa_gpu() -> Gpu | None:
    """A Moore Threads GPU: `mthreads-gmi` (the driver's management tool) succeeding, or a
    `/dev/mtgpu*` device node; its arch where the tool names a product musify knows (MTT S5000)."""
    gmi = shutil.which("mthreads-gmi")
    if gmi:
        out = run_tool([gmi], time_limit=30)
        if out.returncode == 0:
            product = re.search(r"\bMTT\s+(S\d+)\b", out.stdout)
            if product:
                return Gpu(f"MTT {product[1]}", MUSA_PRODUCTS.get(product[1], ""))
            return Gpu(f"MUSA GPU ({gmi})")
    nodes = sorted(Path("/dev").glob("mtgpu*"))
    return Gpu(f"MUSA GPU ({nodes[0]})") if nodes else None


def find_compiler(name: str, home_variable: str, default_home: str, environ: dict[str, str]) -> str | None:
    """`name` on the PATH, else in `$HOME_VARIABLE/bin` (the toolkit's default root)."""
    found = shutil.which(name, path=environ.get("PATH"))
    if found:
        return found
    candidate = Path(environ.get(home_variable, default_home)) / "bin" / name
    return str(candidate) if candidate.is_file() and os.access(candidate, os.X_OK) else None


@lru_cache(maxsize=1)
def _header_libraries() -> dict[str, str]:
    """Header name (CUDA or MUSA spelling) -> the rules' library it belongs to."""
    from musify.rules.loader import load_ruleset

    out: dict[str, str] = {}
    for rule in load_ruleset().headers.values():
        out[rule.cuda] = rule.library
        if rule.musa:
            out.setdefault(rule.musa, rule.library)
    return out


def _link_records() -> list[dict]:
    from musify.rules.vocab import records, toolchain_vocab

    return records(toolchain_vocab(), "library")


def included_libraries(sources: Sequence[Path]) -> list[dict]:
    """The toolchain library records (rules/build/toolchain.toml) of the libraries the program's
    files include a header of (`<mublas.h>` or `<cublas_v2.h>`: cublas/mublas)."""
    by_header = _header_libraries()
    used = set()
    for path in collect_files(list(sources)):
        try:
            text = path.read_text(errors="replace")
        except OSError:
            continue
        used |= {by_header[h] for h in _ANGLE_INCLUDE.findall(text) if h in by_header}
    return [r for r in _link_records() if r.get("rules_library", r["cuda"].lower()) in used]


def _libraries(sources: Sequence[Path], flags: Sequence[str], vendor: str) -> list[str]:
    """-l flags for `vendor` ("cuda" or "musa"): the included libraries' and the project's own -l
    words, a library of the other vendor spelt as this one's (-lmublas is -lcublas on CUDA)."""
    other = "musa" if vendor == "cuda" else "cuda"
    records = _link_records()
    rename = {r[other]: r[vendor] for r in records if r.get(vendor)}
    out = [f"-l{r[vendor]}" for r in included_libraries(sources) if r.get(vendor) and
           not (vendor == "cuda" and r.get("runtime"))]  # nvcc links the runtime itself
    if vendor == "musa":
        out = [f"-l{r['musa']}" for r in records if r.get("runtime")][:1] + out
    for f in flags:
        if f.startswith("-l"):
            out.append("-l" + rename.get(f[2:], f[2:]))
    return list(dict.fromkeys(out))


@dataclass(frozen=True)
class Compiler:
    """One vendor compiler driver and how it spells things."""

    path: str
    vendor: str  # "cuda" (nvcc) or "musa" (mcc)
    toolkit: str = ""  # the toolkit's root when the driver is not in its bin/ (a wrapper script)

    @property
    def home(self) -> Path:
        below = Path(self.path).resolve().parents[1]
        return below if (below / self.libdir).is_dir() or not self.toolkit else Path(self.toolkit)

    @property
    def libdir(self) -> str:
        return "lib" if self.vendor == "musa" else "lib64"

    def split_flags(self, flags: Sequence[str]) -> tuple[list[str], list[str]]:
        """(compile flags, link flags) from the project flags (musify/emu/flags.py's spelling)."""
        compile_, link = [], []
        host = (lambda f: ["-Xcompiler", f]) if self.vendor == "cuda" else (lambda f: [f])
        words = iter(flags)
        for f in words:
            if f == "-include":
                compile_ += [f, next(words, "")]
            elif f.startswith(("-I", "-D", "-U")) or f == "-g":
                compile_.append(f)
            elif f.startswith("-std="):
                compile_.append(f.replace("gnu++", "c++") if self.vendor == "cuda" else f)
            elif f.startswith("-l"):
                continue  # _libraries() spells them for this vendor
            elif f.startswith("-L"):
                link.append(f)
            elif f.startswith("-Wl,"):
                link += ["-Xlinker", f[4:]] if self.vendor == "cuda" else [f]
            elif f in ("-fopenmp", "-pthread"):
                compile_ += host(f)
                link += host(f)
            else:
                compile_ += host(f)
        return compile_, link

    def compile_command(self, source: Path, obj: Path, flags: list[str], arch: str, through_shims: bool) -> list[str]:
        cmd = [self.path, "-O2"]
        device = source.suffix in DEVICE_SUFFIXES
        if self.vendor == "cuda":
            cmd += [f"-arch={arch}"] if arch else []
            if through_shims:
                cmd += (["-x", "cu"] if source.suffix in (".mu", ".muh") else []) + \
                    ["-I", str(SHIM), "-include", "musa_on_cuda.h"]
        else:
            cmd += ([f"--offload-arch={arch}"] if device else []) + (["-x", "musa"] if source.suffix == ".cu" else [])
            include = self.home / "include"
            if not device and include.is_dir():  # a host .cpp calling the MUSA runtime finds its headers
                cmd += ["-I", str(include)]
        return [*cmd, *flags, "-c", str(source), "-o", str(obj)]

    def link_command(self, objects: list[Path], exe: Path, flags: list[str], libraries: list[str], arch: str) -> list[str]:
        libdir = self.home / self.libdir
        rpath = ["-Xlinker", f"-rpath={libdir}"] if self.vendor == "cuda" else [f"-Wl,-rpath,{libdir}"]
        # the driver library's link stubs, where the toolkit has them: a machine without the driver
        # still links a driver-API program (the GPU's own library is the one loaded at run time)
        stubs = ["-L", str(libdir / "stubs")] if (libdir / "stubs").is_dir() else []
        cmd = [self.path, *([f"-arch={arch}"] if arch and self.vendor == "cuda" else []), *map(str, objects),
               "-o", str(exe), *flags, *(["-L", str(libdir), *rpath] if libdir.is_dir() else []), *stubs]
        return cmd + libraries


def run_native(executable: Path, args: Sequence[str], cwd: Path, limits: Limits, stdin: bytes | None) -> Outcome:
    """A GPU program, contained like any run, with the driver's variables, and no address-space
    limit: a GPU runtime reserves far more virtual memory than any sensible limit (docs/verify.md)."""
    env = {k: v for k, v in os.environ.items() if k.startswith(_PASSED_ON)}
    return sandboxed([str(executable), *args], cwd, replace(limits, memory=None), stdin, env)


class NativeBackend:
    """`--backend cuda` and `--backend mcc` (module docstring)."""

    def __init__(self, name: str, port: Compiler, original: Compiler | None, gpu: Gpu | None, missing_gpu: str):
        self.name = name
        self.port, self.original = port, original
        self.gpu = gpu
        self.not_run = "" if gpu else missing_gpu
        self.device = f"{gpu.name} ({self._lanes(gpu)})" if gpu else ""
        self.scratch = Path(tempfile.mkdtemp(prefix=f"musify-verify-{name}-"))
        atexit.register(shutil.rmtree, self.scratch, True)

    def _lanes(self, gpu: Gpu) -> str:
        """The GPU's arch and warp width, as the record shows them: an NVIDIA warp is 32 lanes."""
        warp = 32 if self.name == "cuda" else WARP_WIDTH.get(gpu.arch)
        return ", ".join(x for x in (gpu.arch, f"warp {warp}" if warp else "") if x) or "arch not known"

    def targets(self, archs: tuple[str, ...]) -> tuple[str, ...]:
        if self.name == "cuda":  # the GPU's own arch, or nvcc's default where there is no GPU
            return ((self.gpu.arch if self.gpu and self.gpu.arch else "sm_native" if self.gpu else "nvcc-default"),)
        return archs

    def not_honoured(self, ignored: list[tuple[str, str]]) -> list[list[str]]:
        """Device options and -O levels are verify's to choose here too (the GPU's arch, -O2);
        the rest is left out for the emulator's reasons (musify/emu/flags.py sorts them)."""
        tool = Path(self.port.path).name
        chosen = f"not passed to {tool}: the {self.name} backend sets the arch and -O2 itself"
        return [[flag, chosen if "device-code" in why or "optimisation" in why else why] for flag, why in ignored]

    def build_original(self, program: Program, settings: Settings) -> Built:
        if self.original is None:  # mcc: the reference outputs come from the emulator
            return EmuBackend().build_original(program, settings)
        return self._build(self.original, program.sources, program.build.flags.flags, self._nvcc_arch(), False, settings)

    def build_port(self, program: Program, target: str, settings: Settings) -> Built:
        arch = self._nvcc_arch() if self.name == "cuda" else target
        built = self._build(self.port, program.port_sources, program.port_flags.flags, arch, self.name == "cuda",
                            settings)
        built.not_run = self.not_run_for(target) if built.ok else ""
        return built

    def not_run_for(self, target: str) -> str:
        """Why a port built for `target` cannot run here: no GPU, or (mcc) a GPU of another arch."""
        if self.not_run or self.name == "cuda":
            return self.not_run
        if self.gpu and self.gpu.arch and target != self.gpu.arch:
            return f"the MUSA GPU here ({self.gpu.name}) is {self.gpu.arch}; a port built for {target} does not run on it"
        return ""

    def _nvcc_arch(self) -> str:
        if not self.gpu:
            return ""  # nvcc's default target: the build is checked, nothing runs
        return self.gpu.arch or "native"

    def _build(self, compiler: Compiler, sources: list[Path], flags: list[str], arch: str, through_shims: bool,
               settings: Settings) -> Built:
        return timed(lambda: self._compile_and_link(compiler, sources, flags, arch, through_shims, settings))

    def _compile_and_link(self, compiler: Compiler, sources: list[Path], flags: list[str], arch: str,
                          through_shims: bool, settings: Settings) -> Built:
        sources = drop_included_sources(list(sources))
        odd = next((s for s in sources if not s.is_file()), None)
        if odd is not None:  # a FIFO or a device would hang the compiler that reads it
            return Built(None, 0.0, message=f"{odd}: not a regular file")
        out = Path(tempfile.mkdtemp(dir=self.scratch))
        compile_flags, link_flags = compiler.split_flags(flags)
        objects = []
        for i, source in enumerate(sources):
            obj = out / f"{i}-{source.stem}.o"
            cmd = compiler.compile_command(source, obj, compile_flags, arch, through_shims)
            failed = _step(cmd, source.parent, settings.compile_time_limit, str(source))
            if failed:
                return failed
            objects.append(obj)
        exe = out / "prog"
        cmd = compiler.link_command(objects, exe, link_flags, _libraries(sources, flags, compiler.vendor), arch)
        failed = _step(cmd, out, settings.compile_time_limit, "linking " + " ".join(s.name for s in sources))
        return failed or Built(exe, 0.0, run_native, not_run=self.not_run, command=cmd)


def _step(cmd: list[str], cwd: Path, time_limit: float, what: str) -> Built | None:
    """One compiler run; a Built without an executable when it fails, None when it succeeds."""
    proc = run_tool(cmd, cwd=cwd, time_limit=time_limit)
    log = proc.stdout + proc.stderr
    if proc.timed_out:
        return Built(None, 0.0, message=f"the compiler did not finish within {time_limit:g} s ({what})", log=log,
                     command=cmd)
    if proc.returncode != 0:
        last = (log.strip().splitlines() or [proc.reason()])[-1]
        return Built(None, 0.0, message=f"compilation failed ({what}): {last}", log=log, command=cmd)
    return None


def native_backend(name: str, environ: dict[str, str]) -> NativeBackend:
    """The `cuda` or `mcc` backend; ValueError when its compiler is not installed."""
    nvcc = find_compiler("nvcc", "CUDA_HOME", "/usr/local/cuda", environ)
    if name == "cuda":
        if nvcc is None:
            raise ValueError("backend cuda needs nvcc: not on the PATH, nor in $CUDA_HOME/bin")
        compiler = Compiler(nvcc, "cuda", environ.get("CUDA_HOME", "/usr/local/cuda"))
        return NativeBackend("cuda", compiler, compiler, nvidia_gpu(),
                             "no NVIDIA GPU here (nvidia-smi -L lists none, no /dev/nvidia0)")
    if name == "mcc":
        mcc = find_compiler("mcc", "MUSA_HOME", "/usr/local/musa", environ)
        if mcc is None:
            raise ValueError("backend mcc needs mcc: not on the PATH, nor in $MUSA_HOME/bin")
        return NativeBackend("mcc", Compiler(mcc, "musa", environ.get("MUSA_HOME", "/usr/local/musa")), None, musa_gpu(),
                             "no MUSA GPU here (mthreads-gmi did not succeed, no /dev/mtgpu*)")
    raise ValueError(f"unknown backend {name!r} (emu, cuda, mcc)")
