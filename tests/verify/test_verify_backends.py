"""`musify verify --backend cuda|mcc`: the native-toolchain backends.

No GPU is needed: where nvcc is installed, the cuda backend builds corpus originals with nvcc and
their ports with nvcc through shims/musa_on_cuda (one a compile error, named at its line), and
without an NVIDIA GPU every run is `not-run` (a GPU present: they must pass). The mcc backend runs
end to end, runs and comparison included, with a stand-in `mcc` on the PATH (it builds the port on
the emulator's MUSA face) and a stand-in `mthreads-gmi` as the GPU detector.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from verify_support import CORPORA, INPUTS, PROJECTS, edit, ported, program, requires_cxx, verdicts

from musify.report.summary import Report
from musify.schemas import validate_record
from musify.verify.backend import compiler_errors, make_backend
from musify.verify.flow import verify_record
from musify.verify.native import Compiler, Gpu, NativeBackend, _libraries, find_compiler, musa_gpu, nvidia_gpu
from musify.verify.settings import Settings

REPO = Path(__file__).resolve().parents[2]


def _script(folder: Path, name: str, body: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(body)
    path.chmod(0o755)
    return path


def test_compiler_errors_in_gcc_and_nvcc_spelling():
    log = ("/p/a.mu(27): error: identifier \"musaFreeNowhere\" is undefined\n"
           "/p/b.mu:3:9: error: 'cudaFree' was not declared in this scope\n"
           "/p/c.mu(4): error #20-D: identifier \"x\" is undefined\n/p/d.mu:5:1: warning: unused\n"
           "/p (copy)/e.mu:6:2: error: expected ';'\n")
    assert [(e["path"], e["line"], e["column"]) for e in compiler_errors(log)] == \
        [("/p/a.mu", 27, 0), ("/p/b.mu", 3, 9), ("/p/c.mu", 4, 0), ("/p (copy)/e.mu", 6, 2)]
    assert compiler_errors(log)[0]["message"] == 'identifier "musaFreeNowhere" is undefined'


def test_project_flags_and_libraries_are_spelt_for_each_compiler(tmp_path):
    flags = ["-I/inc", "-DN=3", "-std=gnu++17", "-fopenmp", "-Wall", "-include", "/inc/pre.h", "-L/lib",
             "-Wl,--as-needed", "-lm", "-lmublas"]
    compile_, link = Compiler("nvcc", "cuda").split_flags(flags)
    assert compile_ == ["-I/inc", "-DN=3", "-std=c++17", "-Xcompiler", "-fopenmp", "-Xcompiler", "-Wall",
                        "-include", "/inc/pre.h"]
    assert link == ["-Xcompiler", "-fopenmp", "-L/lib", "-Xlinker", "--as-needed"]
    compile_, link = Compiler("mcc", "musa").split_flags(flags)
    assert "-fopenmp" in compile_ and "-std=gnu++17" in compile_ and link == ["-fopenmp", "-L/lib", "-Wl,--as-needed"]
    port = tmp_path / "gemm.mu"
    port.write_text("#include <musa_runtime.h>\n#include <mublas.h>\n#include <murand_kernel.h>\n")
    # the port through musa_on_cuda links the CUDA libraries; nvcc links the runtime itself
    assert _libraries([port], flags, "cuda") == ["-lcublas", "-lcurand", "-lm"]
    # mcc is given the runtime (MUSA_FACTS section 3) and the MUSA spelling of every library
    assert _libraries([port], ["-lcublas"], "musa") == ["-lmusart", "-lmublas", "-lmurand"]


def test_gpu_detection_needs_a_listed_gpu_not_just_the_tool(tmp_path, monkeypatch):
    fake = tmp_path / "bin"
    _script(fake, "nvidia-smi", "#!/bin/sh\necho 'NVIDIA-SMI has failed because it could not communicate with the "
                                "NVIDIA driver.' >&2\nexit 9\n")
    monkeypatch.setenv("PATH", f"{fake}:{os.environ['PATH']}")
    if not Path("/dev/nvidia0").exists():
        assert nvidia_gpu() is None
    _script(fake, "nvidia-smi", '#!/bin/sh\ncase "$1" in -L) echo "GPU 0: NVIDIA H200 (UUID: GPU-1)";;\n'
                                '*) echo "NVIDIA H200, 9.0";; esac\n')
    gpu = nvidia_gpu()
    assert (gpu.name, gpu.arch) == ("NVIDIA H200", "sm_90")


def test_a_musa_gpu_runs_only_the_ports_built_for_its_arch(tmp_path, monkeypatch):
    fake = tmp_path / "bin"
    _script(fake, "mthreads-gmi", "#!/bin/sh\necho '  0  MTT S4000   | 00000000:01:00.0'\n")
    monkeypatch.setenv("PATH", f"{fake}:{os.environ['PATH']}")
    gpu = musa_gpu()
    assert gpu == Gpu("MTT S4000", "mp_22")
    backend = NativeBackend("mcc", Compiler("mcc", "musa"), None, gpu, "no MUSA GPU here")
    assert backend.device == "MTT S4000 (mp_22, warp 128)"
    assert backend.not_run_for("mp_22") == ""
    assert backend.not_run_for("mp_31") == ("the MUSA GPU here (MTT S4000) is mp_22; a port built for mp_31 "
                                            "does not run on it")
    assert NativeBackend("mcc", Compiler("mcc", "musa"), None, None, "no MUSA GPU here").not_run_for("mp_22") == \
        "no MUSA GPU here"


def test_a_missing_compiler_is_a_one_line_usage_error(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "MUSA_HOME": str(tmp_path / "none"), "PYTHONPATH": str(REPO)}
    with pytest.raises(ValueError, match="backend mcc needs mcc"):
        make_backend("mcc", env)
    src = tmp_path / "a.cu"
    src.write_text("int main() { return 0; }\n")
    proc = subprocess.run([sys.executable, "-m", "musify", "verify", str(src), str(src), "--backend", "mcc"],
                          capture_output=True, text=True, env=env, timeout=120, check=False)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [("musify verify: error: backend mcc needs mcc: not on the PATH, "
                                                 "nor in $MUSA_HOME/bin")]
    # the configuration may choose the backend; a wrong one names the file before anything runs
    (tmp_path / ".musify.toml").write_text('[verify]\nbackend = "gpu"\n')
    proc = subprocess.run([sys.executable, "-m", "musify", "migrate", str(src), "-o", str(tmp_path / "out"), "--verify"],
                          capture_output=True, text=True, env=env, timeout=120, check=False)
    assert proc.returncode == 2 and not (tmp_path / "out").exists()
    assert ".musify.toml: verify.backend must be one of emu, cuda, mcc, got 'gpu'" in proc.stderr


_nvcc = find_compiler("nvcc", "CUDA_HOME", "/usr/local/cuda", dict(os.environ))


@pytest.mark.skipif(_nvcc is None, reason="nvcc is not installed")
def test_cuda_backend_builds_with_nvcc_through_musa_on_cuda(tmp_path):
    """multi_file: a .cu and a host .cpp; make_omp: its Makefile's -I../common, -D and -Xcompiler
    -fopenmp; broken: a port calling a MUSA name that does not exist."""
    broken = tmp_path / "inputs" / "broken"
    shutil.copytree(CORPORA / "vector_add", broken, ignore=shutil.ignore_patterns("expected"))
    original, port, record = ported(tmp_path, CORPORA / "multi_file", PROJECTS / "make_omp", broken)
    edit(port / "broken" / "vector_add.mu", "musaFree(", "musaFreeNowhere(")
    line = next(n for n, t in enumerate((port / "broken" / "vector_add.mu").read_text().splitlines(), 1)
                if "musaFreeNowhere" in t)
    section = verify_record(record, port, Settings(backend="cuda", time_limit=60, jobs=2, base=str(original)))
    gpu = nvidia_gpu()
    target = section["archs"][0]
    assert section["backend"] == "cuda" and len(section["archs"]) == 1  # the GPU's one arch
    ok = "pass" if gpu else "not-run"
    assert verdicts(section) == {"multi_file": {target: ok}, "make_omp/app": {target: ok},
                                 "broken": {target: "build-fail-port"}}
    app = program(section, "make_omp/app")
    assert app["flags"]["honoured"][1:] == ["-DSCALE=3", "-fopenmp"]
    assert any(flag == "-arch=sm_80" and "cuda backend sets the arch" in why for flag, why in app["flags"]["not_honoured"])
    errors = program(section, "broken")["archs"][target]["errors"]
    assert errors[0]["path"] == str(port / "broken" / "vector_add.mu") and errors[0]["line"] == line
    assert "musaFreeNowhere" in errors[0]["message"]
    f = next(f for f in record.files if f.path.endswith("broken/vector_add.cu"))
    assert any(d.id == "MU5001" and d.line == line and "with nvcc through musa_on_cuda" in d.message
               for d in f.diagnostics)
    assert section["exit_code"] == 1
    validate_record(record.to_json())  # the new verdict and fields are in the schema
    if not gpu:  # built, not run: never reported as a success
        assert program(section, "multi_file")["original"]["run"] == "not-run"
        assert section["not_run"].startswith("no NVIDIA GPU here")
        assert any("built but not run (no NVIDIA GPU here" in p for p in Report(record).problems())


_FAKE_MCC = '''#!{python}
"""A stand-in for mcc: records its command line, builds the port on the emulator's MUSA face."""
import json, shutil, sys
from pathlib import Path
sys.path.insert(0, {repo!r})
from musify.emu.build import BuildError, BuildOptions, build

args = sys.argv[1:]
with open({log!r}, "a") as fh:
    fh.write(" ".join(args) + "\\n")
out = Path(args[args.index("-o") + 1])
if "-c" in args:
    arch = [a.split("=", 1)[1] for a in args if a.startswith("--offload-arch=")]
    out.write_text(json.dumps({{"source": args[args.index("-c") + 1], "arch": arch[0] if arch else "",
                               "flags": [a for a in args if a.startswith(("-I", "-D", "-U"))]}}))
    sys.exit(0)
objects = [json.loads(Path(a).read_text()) for a in args if a.endswith(".o")]
arch = next(o["arch"] for o in objects if o["arch"])
flags = tuple(f for o in objects for f in o["flags"])
try:
    made = build([Path(o["source"]) for o in objects], BuildOptions(face="musa", arch=arch, project_flags=flags))
except BuildError as exc:
    sys.stderr.write(exc.log)
    sys.exit(1)
shutil.copy(made.executable, out)
'''


@requires_cxx
def test_mcc_backend_builds_runs_and_compares_with_a_stand_in_mcc(tmp_path, monkeypatch):
    inputs = tmp_path / "inputs"
    shutil.copytree(INPUTS / "tiny", inputs / "tiny")
    shutil.copytree(inputs / "tiny", inputs / "tiny_index")
    original, port, record = ported(tmp_path, inputs / "tiny", inputs / "tiny_index")
    edit(port / "tiny_index" / "add.mu", "out[i] = a[i] + 2.0f", "out[i] = a[i / 2] + 2.0f")
    tools, log = tmp_path / "bin", tmp_path / "mcc.log"
    _script(tools, "mcc", _FAKE_MCC.format(python=sys.executable, repo=str(REPO), log=str(log)))
    monkeypatch.setenv("PATH", f"{tools}:{os.environ['PATH']}")
    settings = Settings(backend="mcc", archs=("mp_31",), time_limit=30, jobs=2, base=str(original))
    if not list(Path("/dev").glob("mtgpu*")):  # no MUSA GPU: the reference runs, the ports only build
        section = verify_record(record, port, settings)
        assert verdicts(section) == {"tiny": {"mp_31": "not-run"}, "tiny_index": {"mp_31": "not-run"}}
        assert program(section, "tiny")["original"]["build"] == "ok" and "run_seconds" in program(section, "tiny")["original"]
        assert section["not_run"].startswith("no MUSA GPU here") and section["exit_code"] == 1
        validate_record(record.to_json())
    _script(tools, "mthreads-gmi", "#!/bin/sh\necho 'MTT S5000'\n")  # the GPU detector finds one
    section = verify_record(record, port, settings)
    assert section["backend"] == "mcc" and section["device"] == "MTT S5000 (mp_31, warp 32)"
    assert verdicts(section) == {"tiny": {"mp_31": "pass"}, "tiny_index": {"mp_31": "fail"}}
    first = program(section, "tiny_index")["archs"]["mp_31"]["first_difference"]
    assert first["where"] == "stdout line 2" and first["original"].startswith("sum ")
    calls = log.read_text().splitlines()
    assert any("--offload-arch=mp_31" in c and "-c" in c.split() and c.split()[-3].endswith("add.mu") for c in calls)
    assert any("-lmusart" in c.split() for c in calls)  # the link line
    assert section["exit_code"] == 1 and "1 verify run failed on the port" in Report(record).problems()
