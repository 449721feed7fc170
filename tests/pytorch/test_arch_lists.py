"""TORCH_CUDA_ARCH_LIST's value and host `-arch` flags in build files, as found in real projects
(torch_scatter's CI scripts export `TORCH_CUDA_ARCH_LIST="3.5;5.0+PTX;..."`; its setup.py and
pycuda's pass `-arch arm64` / `-arch i386` to Apple's compiler and linker)."""

from __future__ import annotations

import pytest

from musify.options import Options
from musify.rules import load_ruleset
from musify.runner import migrate_text


@pytest.fixture(scope="module")
def rules():
    return load_ruleset()


def port(rules, text: str, path: str, options: Options | None = None) -> tuple[str, list]:
    options = options or Options()
    new, ctx, _ = migrate_text(text, path, rules, options)
    again, _, edits = migrate_text(new, path, rules, options)
    assert edits == [] and again == new, f"not a fixed point:\n{new}"
    return new, ctx.diagnostics


def seen(diags) -> list[tuple[str, int, str]]:
    return [(d.id, d.line, d.severity) for d in diags]


def test_a_shell_arch_list_becomes_musa_architectures(rules):
    src = ('export TORCH_CUDA_ARCH_LIST="3.5;5.0+PTX;6.0;7.0;7.5;8.0;8.6"\n'
           "TORCH_CUDA_ARCH_LIST=9.0a\n"
           "echo $TORCH_CUDA_ARCH_LIST\n")
    new, diags = port(rules, src, "env.sh")
    assert new == ('export TORCH_MUSA_ARCH_LIST="21;22"\n'
                   "TORCH_MUSA_ARCH_LIST=31\n"
                   "echo $TORCH_MUSA_ARCH_LIST\n")
    # 3.5 ... 8.6 have no exact entry in the default map (sm_80, sm_90): a warning; 9.0 has one
    assert seen(diags) == [("MU6022", 1, "warning"), ("MU6022", 2, "note")]
    assert "'3.5;5.0+PTX;6.0;7.0;7.5;8.0;8.6' rewritten to '21;22'" in diags[0].message


def test_the_arch_map_decides_the_list(rules):
    options = Options(arch_map=((70, 210), (80, 220), (90, 310)))
    new, diags = port(rules, "TORCH_CUDA_ARCH_LIST='7.0;8.0;9.0'\n", "build.sh", options)
    assert new == "TORCH_MUSA_ARCH_LIST='21;22;31'\n"
    assert seen(diags) == [("MU6022", 1, "note")]


def test_a_list_that_is_not_numbers_is_kept_and_reported(rules):
    src = ('TORCH_CUDA_ARCH_LIST="7.0 8.0"\n'  # over two words: not read whole
           "TORCH_CUDA_ARCH_LIST=$ARCHES\n"
           "TORCH_CUDA_ARCH_LIST=Ampere\n")
    new, diags = port(rules, src, "env.sh")
    assert new == src.replace("TORCH_CUDA_ARCH_LIST", "TORCH_MUSA_ARCH_LIST")
    assert seen(diags) == [("MU6025", 1, "warning"), ("MU6025", 2, "warning"), ("MU6025", 3, "warning")]
    assert "'Ampere' is not a compute capability" in diags[2].message


def test_python_arch_list_values(rules):
    src = ("import os\n"
           'os.environ["TORCH_CUDA_ARCH_LIST"] = "8.0;8.6+PTX"\n'
           'os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "9.0")\n'
           'env = {"TORCH_CUDA_ARCH_LIST": "Ampere", "CC": "gcc"}\n'
           'env2 = dict(TORCH_CUDA_ARCH_LIST="8.0")\n'
           'os.environ["TORCH_CUDA_ARCH_LIST"] = f"{major}.{minor}"\n'
           'print("8.0;8.6")\n'
           'os.environ["TORCH_CUDA_ARCH_LIST"] = saved\n'  # put back as it was: no diagnostic
           'archs = os.environ.get("TORCH_CUDA_ARCH_LIST", "").strip()\n'
           'shown = os.environ.get("TORCH_CUDA_ARCH_LIST", "Not Set")\n'  # a default for display: quiet
           'used = os.getenv("TORCH_CUDA_ARCH_LIST", "8.0")\n')
    new, diags = port(rules, src, "setup.py")
    assert new == ("import os\n"
                   'os.environ["TORCH_MUSA_ARCH_LIST"] = "22"\n'
                   'os.environ.setdefault("TORCH_MUSA_ARCH_LIST", "31")\n'
                   'env = {"TORCH_MUSA_ARCH_LIST": "Ampere", "CC": "gcc"}\n'
                   'env2 = dict(TORCH_CUDA_ARCH_LIST="22")\n'  # a keyword is a Python name: kept
                   'os.environ["TORCH_MUSA_ARCH_LIST"] = f"{major}.{minor}"\n'
                   'print("8.0;8.6")\n'  # not given to the variable: untouched
                   'os.environ["TORCH_MUSA_ARCH_LIST"] = saved\n'
                   'archs = os.environ.get("TORCH_MUSA_ARCH_LIST", "").strip()\n'
                   'shown = os.environ.get("TORCH_MUSA_ARCH_LIST", "Not Set")\n'
                   'used = os.getenv("TORCH_MUSA_ARCH_LIST", "22")\n')
    assert sorted(seen(diags)) == [("MU6022", 2, "warning"), ("MU6022", 3, "note"), ("MU6022", 5, "note"),
                                   ("MU6022", 11, "note"), ("MU6025", 4, "warning"), ("MU6025", 6, "warning")]


def test_host_arch_flags_are_not_nvcc_flags(rules):
    src = ("import sys, platform\n"
           "from torch.utils.cpp_extension import CUDAExtension\n"
           "args = {'cxx': ['-O2'], 'nvcc': ['-O3', '-arch=sm_80']}\n"
           "if sys.platform == 'darwin' and platform.machine() == 'arm64':\n"
           "    args['cxx'] += ['-arch', 'arm64']\n"
           "link = ['-arch', 'x86_64']\n"
           "ext = CUDAExtension('k', ['k.cpp'], extra_compile_args=args, extra_link_args=link)\n")
    new, diags = port(rules, src, "setup.py")
    assert "['-arch', 'arm64']" in new and "['-arch', 'x86_64']" in new
    assert "'mcc': ['-O3', '--offload-arch=mp_22']" in new
    assert [d.id for d in diags if d.id.startswith("MU602")] == ["MU6022"]


def test_host_arch_flags_in_a_makefile(rules):
    src = ("CXXFLAGS += -arch arm64 -O2\n"
           "NVCCFLAGS = -arch=sm_90 -arch=$(GPU_ARCH)\n")
    new, diags = port(rules, src, "Makefile")
    assert new == ("CXXFLAGS += -arch arm64 -O2\n"
                   "NVCCFLAGS = --offload-arch=mp_31 -arch=$(GPU_ARCH)\n")
    assert [(d.id, d.line) for d in diags] == [("MU6022", 2), ("MU6023", 2)]


def test_cmake_arch_list(rules):
    src = ('set(TORCH_CUDA_ARCH_LIST "8.0;8.6")\n'
           "set(ENV{TORCH_CUDA_ARCH_LIST} 9.0)\n"
           'set(TORCH_CUDA_ARCH_LIST "8.6" CACHE STRING "the archs")\n'
           "set(TORCH_CUDA_ARCH_LIST 7.0 8.0)\n")
    new, diags = port(rules, src, "CMakeLists.txt")
    assert new == ('set(TORCH_MUSA_ARCH_LIST "22")\n'
                   "set(ENV{TORCH_MUSA_ARCH_LIST} 31)\n"
                   'set(TORCH_MUSA_ARCH_LIST "22" CACHE STRING "the archs")\n'
                   "set(TORCH_MUSA_ARCH_LIST 7.0 8.0)\n")
    assert seen(diags) == [("MU6022", 1, "warning"), ("MU6022", 2, "note"), ("MU6022", 3, "warning"),
                           ("MU6025", 4, "warning")]
