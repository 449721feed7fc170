"""The Python front end and the PyTorch Python pass on small inputs: what is rewritten, what is
reported, what is never touched."""

from __future__ import annotations

import pytest

from musify.options import Options
from musify.rules import load_ruleset
from musify.runner import migrate_text


@pytest.fixture(scope="module")
def rules():
    return load_ruleset()


def port(rules, text: str, path: str = "m.py") -> tuple[str, list]:
    new, ctx, _ = migrate_text(text, path, rules, Options())
    again, _, edits = migrate_text(new, path, rules, Options())
    assert edits == [] and again == new, f"not a fixed point:\n{new}"
    return new, ctx.diagnostics


def ids(diags) -> list[str]:
    return [d.id for d in diags]


def test_torch_cuda_chains_imports_and_the_package_import(rules):
    src = ('"""Docstring naming torch.cuda and "cuda"."""\n'
           "import os\n"
           "import torch  # the framework\n"
           "import torch.nn as nn\n"
           "from torch.cuda.amp import autocast\n"
           "from torch import cuda\n"
           "torch.cuda.synchronize()  # torch.cuda in a comment\n"
           "torch.backends.cudnn.benchmark = True\n"
           "x = torch.ones(3).cuda()\n"
           "flag = x.is_cuda\n")
    new, diags = port(rules, src)
    assert new == ('"""Docstring naming torch.cuda and "cuda"."""\n'
                   "import os\n"
                   "import torch  # the framework\n"
                   "import torch_musa\n"
                   "import torch.nn as nn\n"
                   "from torch.musa.amp import autocast\n"
                   "from torch import musa as cuda\n"
                   "torch.musa.synchronize()  # torch.cuda in a comment\n"
                   "torch.backends.mudnn.benchmark = True\n"
                   "x = torch.ones(3).musa()\n"
                   "flag = x.is_musa\n")
    assert diags == []


def test_aliases_and_crlf_line_ends(rules):
    new, _ = port(rules, "import torch as th\r\nth.cuda.empty_cache()\r\n")
    assert new == "import torch as th\r\nimport torch_musa\r\nth.musa.empty_cache()\r\n"


def test_device_strings_only_where_they_are_devices(rules):
    src = ("import torch\n"
           "def f(x, device='cuda'):\n"
           "    y = x.to('cuda:1')\n"
           "    z = torch.zeros(2, device=\"cuda\")\n"
           "    d = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
           "    name = 'cuda_kernels'\n"
           "    label = 'runs on cuda'\n"
           "    kind = 'cuda'\n"
           "    return x.device.type == 'cuda'\n")
    new, diags = port(rules, src)
    assert "device='musa'" in new and "x.to('musa:1')" in new and 'device="musa"' in new
    assert "torch.device('musa' if torch.musa.is_available() else 'cpu')" in new
    assert "'cuda_kernels'" in new and "'runs on cuda'" in new
    assert "kind = 'cuda'" in new  # not known to be a device: kept, and reported
    assert "x.device.type == 'musa'" in new
    assert sorted(ids(diags)) == ["MU6010", "MU6011", "MU6012"]
    assert [d.line for d in diags if d.id == "MU6012"] == [8]


def test_backend_and_fstring_devices(rules):
    src = ("import torch.distributed as dist\n"
           "dist.init_process_group(backend='nccl')\n"
           "dist.new_group(ranks, 'nccl')\n"
           "device = f'cuda:{rank}'\n"
           "print(f'cuda:{rank}')\n")
    new, diags = port(rules, src)
    assert "backend='mccl'" in new and "new_group(ranks, 'nccl')" in new  # only the first argument
    assert "device = f'musa:{rank}'" in new and "print(f'cuda:{rank}')" in new
    assert ids(diags) == ["MU6012"]


def test_a_file_that_does_not_parse_is_left_unchanged(rules):
    src = "import torch\nprint 'python 2'\ntorch.cuda.synchronize()\n"
    new, diags = port(rules, src)
    assert new == src
    assert ids(diags) == ["MU6001"] and diags[0].line == 2


def test_package_import_is_added_once_and_not_when_present(rules):
    new, _ = port(rules, "import torch\nimport torch\nx = 1\n")
    assert new.count("import torch_musa") == 1
    src = "import torch\nimport torch_musa\nx = torch.zeros(1, device='cuda')\n"
    new, _ = port(rules, src)
    assert new.count("import torch_musa") == 1 and "device='musa'" in new


def test_setup_py_extension_builder(rules):
    src = ("from setuptools import setup\n"
           "from torch.utils.cpp_extension import BuildExtension, CUDAExtension, CUDA_HOME\n"
           "setup(ext_modules=[CUDAExtension('m', ['a.cpp', 'k.cu'],\n"
           "      extra_compile_args={'cxx': ['-O2'], 'nvcc': ['-O2', '--expt-relaxed-constexpr',\n"
           "                                               '-arch=sm_80']})],\n"
           "      cmdclass={'build_ext': BuildExtension})\n")
    new, diags = port(rules, src, "setup.py")
    assert "from torch_musa.utils.musa_extension import BuildExtension, MUSAExtension, MUSA_HOME" in new
    assert "MUSAExtension('m'" in new and "'mcc': ['-O2', '--offload-arch=mp_22']" in " ".join(new.split())
    assert "'k.cu'" in new  # no such file in the (empty) project: not renamed
    assert {"MU6020", "MU6022", "MU6024"} <= set(ids(diags))


def test_names_torch_musa_lacks_split_the_import(rules):
    """causal-conv1d and mamba import CppExtension (and HIP_HOME) beside CUDAExtension: the names
    torch_musa is not known to provide stay with torch, the rest come from torch_musa."""
    src = ("from torch.utils.cpp_extension import load_inline, CUDAExtension\n"
           "load_inline('m', cpp_sources=[], cuda_sources=['x'])\n"
           "if True:\n"
           "    from torch.utils.cpp_extension import (\n"
           "        CppExtension as CE,\n"
           "        CUDA_HOME,\n"
           "    )\n"
           "    print(CUDA_HOME, CE)\n"
           "ext = CUDAExtension('m', ['a.cpp'])\n")
    new, diags = port(rules, src)
    assert new == ("from torch.utils.cpp_extension import load_inline\n"
                   "from torch_musa.utils.musa_extension import MUSAExtension\n"
                   "load_inline('m', cpp_sources=[], cuda_sources=['x'])\n"
                   "if True:\n"
                   "    from torch.utils.cpp_extension import CppExtension as CE\n"
                   "    from torch_musa.utils.musa_extension import MUSA_HOME\n"
                   "    print(MUSA_HOME, CE)\n"
                   "ext = MUSAExtension('m', ['a.cpp'])\n")
    assert ids(diags) == ["MU6006", "MU6013", "MU6006"]


def test_an_import_of_helpers_torch_musa_lacks_alone_is_left_without_a_word(rules):
    """The first half of a split, met again when the port is migrated a second time, needs nothing;
    a `*` import still hides the builders and is reported."""
    src = "from torch.utils.cpp_extension import CppExtension, HIP_HOME\n"
    assert port(rules, src) == (src, [])
    _, diags = port(rules, "from torch.utils.cpp_extension import *\n")
    assert ids(diags) == ["MU6004"]


def test_an_import_with_a_comment_inside_is_kept(rules):
    src = ("from torch.utils.cpp_extension import (  # the builders\n"
           "    load_inline, CUDAExtension)\n"
           "load_inline('m', cpp_sources=[], cuda_sources=['x'])\n")
    new, diags = port(rules, src)
    assert new == src
    assert ids(diags) == ["MU6004", "MU6013"]


def test_flag_tuples_and_lists_outside_extra_compile_args(rules):
    """Real setup.py files build nvcc flags with .extend/.append: a one-element tuple keeps its comma."""
    src = ("from setuptools import setup\n"
           "args = ['-gencode', 'arch=compute_70,code=sm_70']\n"
           "args.extend(('-gencode', 'arch=compute_80,code=sm_80'))\n"
           "args.extend(('--expt-relaxed-constexpr', '-O3'))\n"
           "args.append('--extended-lambda')\n")
    new, diags = port(rules, src)
    assert new == ("from setuptools import setup\n"
                   "args = ['--offload-arch=mp_21']\n"
                   "args.extend(('--offload-arch=mp_22',))\n"
                   "args.extend(('-O3',))\n"
                   "args.append('--extended-lambda')\n")
    assert [d.id for d in diags] == ["MU6022", "MU6022", "MU6020", "MU6014"]


def test_flags_dropped_one_after_another_go_in_one_edit(rules):
    """MinkowskiEngine's `NVCC_FLAGS += ["--expt-relaxed-constexpr", "--expt-extended-lambda"]`:
    each dropped flag took the comma between them, the two edits overlapped and its setup.py
    failed to migrate (MU0022, then MU0001). A run of drops is one edit, whatever stands around it."""
    src = ("from setuptools import setup\n"
           "NVCC_FLAGS += ['--expt-relaxed-constexpr', '--expt-extended-lambda']\n"
           "a = ['-O3', '--expt-relaxed-constexpr', '--expt-extended-lambda']\n"
           "b = ('--expt-relaxed-constexpr', '--expt-extended-lambda', '-O3', '--expt-relaxed-constexpr')\n"
           "c = (\n    '--expt-relaxed-constexpr',\n    '--expt-extended-lambda',\n    '-lineinfo',\n)\n")
    new, diags = port(rules, src)
    assert new == ("from setuptools import setup\n"
                   "NVCC_FLAGS += []\n"
                   "a = ['-O3']\n"
                   "b = ('-O3',)\n"
                   "c = (\n)\n")
    assert set(ids(diags)) == {"MU6020"}


def test_a_flag_and_its_value_appended_by_two_statements(rules):
    """flash-attn, causal-conv1d and mamba collect their architectures with
    `cc_flag.append("-gencode")` then `cc_flag.append("arch=...")`: the pair becomes one MUSA flag.
    A pair sharing a line with another statement is reported and left; other lists are untouched."""
    src = ("from setuptools import setup\n"
           "cc_flag = []\n"
           "if True:\n"
           "    cc_flag.append('-gencode')  # Ampere\n"
           "    cc_flag.append('arch=compute_80,code=sm_80')\n"
           "cc_flag.append('-gencode'); cc_flag.append('arch=compute_90,code=sm_90')\n"
           "other.append('-gencode')\n"
           "cc_flag.append('arch=compute_75,code=sm_75')\n")
    new, diags = port(rules, src)
    assert new == ("from setuptools import setup\n"
                   "cc_flag = []\n"
                   "if True:\n"
                   "    cc_flag.append('--offload-arch=mp_22')  # Ampere\n"
                   "cc_flag.append('-gencode'); cc_flag.append('arch=compute_90,code=sm_90')\n"
                   "other.append('-gencode')\n"
                   "cc_flag.append('arch=compute_75,code=sm_75')\n")
    assert sorted((d.id, d.line) for d in diags if d.id in ("MU6022", "MU6014")) == [("MU6014", 6), ("MU6022", 4)]
    assert "write --offload-arch=mp_31 in their place by hand" in next(d.message for d in diags if d.id == "MU6014")


def test_nvcc_parallel_threads_are_dropped(rules):
    """causal-conv1d's `append_nvcc_threads` adds `["--threads", "4"]`: a build-speed option of nvcc only."""
    src = ("from setuptools import setup\n"
           "def append_nvcc_threads(args):\n"
           "    return args + ['--threads', '4']\n"
           "flags = ['-O3', '--threads=8']\n")
    new, diags = port(rules, src)
    assert new == ("from setuptools import setup\n"
                   "def append_nvcc_threads(args):\n"
                   "    return args + []\n"
                   "flags = ['-O3']\n")
    assert ids(diags) == ["MU6020", "MU6020"]


def test_flag_lists_of_a_file_that_builds_nothing_are_left_alone(rules):
    """Triton's compiler.py hands ["-lineinfo"] to ptxas: not an nvcc flag list, never rewritten."""
    src = ("import torch\n"
           "debug_info = ['-lineinfo', '-suppress-debug-info']\n"
           "debug_info += ['-lineinfo']\n"
           "opt = '--expt-relaxed-constexpr'\n"
           "dev = torch.device('cuda')\n")
    new, diags = port(rules, src)
    assert "debug_info = ['-lineinfo', '-suppress-debug-info']\ndebug_info += ['-lineinfo']\n" \
        "opt = '--expt-relaxed-constexpr'\n" in new
    assert "torch.device('musa')" in new  # the file is still ported
    assert not {"MU6014", "MU6020", "MU6022"} & set(ids(diags))


def test_a_file_naming_nothing_the_pass_rewrites_is_not_parsed(rules):
    """A Python 2 file that names no torch, cuda, nvcc... has nothing to migrate: it is left as it
    is with no MU6001, and its tree is never parsed; one that names torch is parsed and reported."""
    src = "print 'plain python 2'\nx = 1\n"
    new, ctx, _ = migrate_text(src, "old.py", rules, Options())
    assert new == src and ctx.diagnostics == []
    new, diags = port(rules, "import torch\nprint 'python 2'\n")
    assert ids(diags) == ["MU6001"]


def test_python_spans_are_made_when_asked_for():
    from musify.frontend.python import scan_python

    sc = scan_python("x = 'cuda'  # a comment\n")
    assert "_made" not in sc.tree.__dict__ and sc.__dict__["_spans"] is None  # nothing parsed yet
    assert [(s, e) for s, e, _ in sc.spans] == [(4, 10), (12, 23)]
    assert sc.tree.module is not None


def test_a_source_name_two_folders_hold_is_renamed_when_both_are(rules):
    """GPTQModel lists `str(root / "quantization" / "gemv_cuda.cu")`: two of its folders hold a
    `gemv_cuda.cu`, and the name stayed (MU6024, "not in the input tree"). Renamed alike, either
    file's new name is the reference's."""
    from musify.passes.includes import build_project_info

    files = ["pkg/ext.py", "ext/awq/quantization/gemv_cuda.cu", "ext/awq/new/gemv/gemv_cuda.cu", "ext/other.cu"]
    project = build_project_info(files, {f: f[:-3] + ".mu" for f in files if f.endswith(".cu")})
    src = 'sources = [str(root / "quantization" / "gemv_cuda.cu"), "missing.cu"]\n'
    new, ctx, _ = migrate_text(src, "pkg/ext.py", rules, Options(), project)
    assert new == 'sources = [str(root / "quantization" / "gemv_cuda.mu"), "missing.cu"]\n'
    assert [d.id for d in ctx.diagnostics] == ["MU6024"]  # the file no folder holds
