"""libdevice and NVVM builtins: `__nv_*` -> `__mt_*`, `__nvvm_*` -> `__mtvm_*`.

Three sources, three generated files in `rules/libdevice/`:
- `generated.yaml`: the functions libdevice defines, read from the bitcode's symbol table
  (`nvvm/libdevice/libdevice.10.bc`, listed with `llvm-nm`, which LLVM's packages provide);
- `generated_nvvm.yaml`: the `__nvvm_*` builtins clang's CUDA headers call
  (`__clang_cuda_intrinsics.h` and its neighbours in clang's resource folder);
- `generated_cuda_headers.yaml`: the `__nv_*`/`__nvvm_*` names the CUDA headers themselves use
  (`crt/`, `sm_*_intrinsics`), except the fp16/bf16/fp8 types, which the core rules own.
musify's table spells 390 `__nv_` and 167 `__nvvm_` names so (MUSA_FACTS section 1).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from tools.gen_rules.libraries_b import Emitter, Record, renamed
from tools.gen_rules.naming import musa_name

_USED = re.compile(r"\b__nv(?:vm)?_[A-Za-z0-9_]+")
# headers whose __nv_ names are the fp16/bf16/fp8 API (rules/fp16, bf16, fp8)
_FLOAT_HEADERS = re.compile(r"cuda_(fp16|bf16|fp8|fp6|fp4)\.hp?p?$")


def llvm_nm() -> str:
    for name in ("llvm-nm", *(f"llvm-nm-{v}" for v in range(30, 10, -1))):
        if found := shutil.which(name):
            return found
    raise RuntimeError("llvm-nm not found: install LLVM (Debian: llvm) to read libdevice.10.bc")


def libdevice_functions(bitcode: Path) -> list[str]:
    """The `__nv_*` symbols the bitcode defines (`T` lines of `llvm-nm`)."""
    out = subprocess.run([llvm_nm(), str(bitcode)], check=True, capture_output=True, text=True).stdout
    return sorted({line.split()[-1] for line in out.splitlines()
                   if line.split()[-2:-1] == ["T"] and line.split()[-1].startswith("__nv_")})


def names_used(files: list[Path]) -> list[str]:
    found: set[str] = set()
    for path in files:
        found.update(_USED.findall(path.read_text(encoding="utf-8", errors="replace")))
    return sorted(found)


def build_bitcode(root: Path) -> list[Record]:
    return [renamed(n, musa_name(n), "function", section="libdevice")
            for n in libdevice_functions(root / "libdevice.10.bc")]


def build_nvvm(root: Path) -> list[Record]:
    files = sorted(root.glob("__clang_cuda_*.h"))
    return [renamed(n, musa_name(n), "function", section="nvvm builtins")
            for n in names_used(files) if n.startswith("__nvvm_")]


def build_cuda_headers(root: Path) -> list[Record]:
    files = [p for p in sorted(root.rglob("*.h*")) if p.is_file() and not _FLOAT_HEADERS.search(p.name)
             and "cccl" not in p.relative_to(root).parts]
    return [renamed(n, musa_name(n), "function", section="device headers") for n in names_used(files)]


EMITTERS = [
    Emitter("libdevice", "libdevice", "libdevice.10.bc", "nvidia_nvvm", build_bitcode,
            lambda root: "libdevice.10.bc"),
    Emitter("libdevice", "libdevice", "__clang_cuda_intrinsics.h", "clang", build_nvvm,
            lambda root: f"clang {root.parent.name} resource headers", filename="generated_nvvm.yaml"),
    Emitter("libdevice", "libdevice", "crt/host_defines.h", "nvidia_cuda_crt", build_cuda_headers,
            lambda root: "CUDA include folder", filename="generated_cuda_headers.yaml"),
]
