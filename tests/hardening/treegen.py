"""Generated CUDA trees for the hardening tests: headers that include each other (cycles too),
sources that include headers across directories, and helpers to read a tree back."""

from __future__ import annotations

import os
import random
import re
from pathlib import Path

API = ["cudaMalloc(&p, 4);", "cudaFree(p);", "cudaDeviceSynchronize();", "cudaStream_t s;",
       "cudaError_t e = cudaSuccess;", "cudaMemcpy(p, q, 4, cudaMemcpyHostToDevice);"]


def make_tree(root: Path, n_files: int, dirs: int = 20, seed: int = 1) -> None:
    """About `n_files` .cu/.cuh files under `dirs` directories; 60% headers."""
    rnd = random.Random(seed)
    per = max(1, n_files // dirs)
    headers = [(d, i) for d in range(dirs) for i in range(int(per * 0.6))]
    for d in range(dirs):
        (root / f"d{d}").mkdir(parents=True, exist_ok=True)
        for i in range(per):
            is_header = i < int(per * 0.6)
            lines = ["#pragma once"] if is_header else []
            for hd, hi in rnd.sample(headers, 3):
                lines.append(f'#include "h{hi}.cuh"' if hd == d else f'#include "../d{hd}/h{hi}.cuh"')
            lines.append(f"// file {d}/{i}: cudaMalloc in a comment stays")
            calls = " ".join(rnd.sample(API, 2))
            lines.append(f"void f_{d}_{i}() {{ void *p, *q; {calls} }}")
            if not is_header:
                lines.append(f"__global__ void k_{d}_{i}(float *x) {{ x[threadIdx.x] = 0; }}")
            name = f"h{i}.cuh" if is_header else f"s{i}.cu"
            (root / f"d{d}" / name).write_text("\n".join(lines) + "\n")


def read_tree(root: Path) -> dict[str, bytes]:
    out = {}
    for dirpath, _dirs, files in os.walk(root):
        for f in files:
            p = Path(dirpath) / f
            out[p.relative_to(root).as_posix()] = p.read_bytes() if not p.is_symlink() else b"->" + os.readlink(p).encode()
    return out


_INC = re.compile(rb'#include "([^"]+)"')


def missing_includes(root: Path, tree: dict[str, bytes]) -> list[str]:
    bad = []
    for rel, data in tree.items():
        for m in _INC.finditer(data):
            target = os.path.normpath(os.path.join(os.path.dirname(rel), m.group(1).decode()))
            if target not in tree:
                bad.append(f"{rel} includes missing {m.group(1).decode()}")
    return bad
