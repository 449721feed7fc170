"""Warp shuffles behind the project's macros: MU2023 settled at the run's end (warp_macros.py).

vLLM's MoE kernels reduce with `for (int mask = 16; mask > 0; mask >>= 1)` around
`VLLM_SHFL_XOR_SYNC`, which its `cuda_compat.h` defines as `__shfl_xor_sync`; torch_scatter's loops
call `SHFL_UP_SYNC` from its `utils.cuh`. The loop is a 32-lane warp's offsets whichever file the
macro is defined in, and whichever process or cache entry the file's result came from.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from musify import api, pool
from musify.options import Options

COMPAT = """#pragma once
#ifndef USE_ROCM
  #define WARP_XOR(var, lane_mask) \\
    __shfl_xor_sync(uint32_t(-1), var, lane_mask)
#else
  #define WARP_XOR(var, lane_mask) __shfl_xor(var, lane_mask)
#endif
#define SHFL_UP_SYNC __shfl_up_sync
#define NOT_A_SHUFFLE(x) helper(x) /* __shfl_sync */
"""

KERNEL = """#include "compat.h"
__global__ void topk(float* out, const float* in) {
  float best = in[threadIdx.x];
  for (int mask = 16; mask > 0; mask >>= 1) {
    best = fmaxf(best, WARP_XOR(best, mask));
  }
  for (int i = 0; i < 32; ++i) out[i] = NOT_A_SHUFFLE(best);
  for (int o = 1; o < 32; o *= 2) best += SHFL_UP_SYNC(0xffffffff, best, o);
  for (int o = 1; o < n; o *= 2) best += WARP_XOR(best, o);
  out[threadIdx.x] = best;
}

__device__ float direct(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
  for (int o = 16; o > 0; o >>= 1) v += WARP_XOR(v, o);
  return v;
}
"""


def _tree(root: Path, compat: str = COMPAT) -> Path:
    (root / "src" / "core").mkdir(parents=True)
    (root / "src" / "core" / "compat.h").write_text(compat)
    (root / "src" / "core" / "kernel.cu").write_text(KERNEL)
    return root / "src"


def _warp_loops(tmp_path: Path, src: Path, **options) -> list[tuple]:
    out = tmp_path / f"out{len(list(tmp_path.glob('out*')))}"
    record, _ = api.migrate([str(src)], Options(**{"cache": False, **options}), "out", str(out))
    doc = json.loads(record.dumps())
    return [(Path(f["path"]).name, d["line"], d["args"]["func"], d["args"]["count"], d["sites"])
            for f in doc["files"] for d in f["diagnostics"] if d["id"] == "MU2023"]


def test_a_loop_calling_a_shuffle_through_a_project_macro_is_reported(tmp_path: Path) -> None:
    """The two loops over a 32-lane warp's offsets that call the header's shuffle macros are one
    MU2023 in `topk` (the second a site); a loop calling a macro that calls no shuffle, or one
    whose bounds are no warp's, is not; `direct` keeps the one MU2023 its own shuffle gives."""
    found = _warp_loops(tmp_path, _tree(tmp_path))
    assert found == [("kernel.cu", 4, "topk", 2, [[8, 3]]), ("kernel.cu", 14, "direct", 1, [])]


def test_without_the_macros_definition_nothing_is_settled(tmp_path: Path) -> None:
    """The same kernel in a run whose header defines the macros as no shuffle: only `direct`."""
    src = _tree(tmp_path, "#define WARP_XOR(v, m) (v)\n#define SHFL_UP_SYNC(a, v, o) (v)\n"
                          "#define NOT_A_SHUFFLE(x) (x)\n")
    assert _warp_loops(tmp_path, src) == [("kernel.cu", 14, "direct", 1, [])]


def test_every_way_of_running_settles_alike(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """-j2 (the kernel and the header in different workers' hands), the pure-Python loop search,
    and --suppress."""
    src = _tree(tmp_path)
    want = _warp_loops(tmp_path, src)
    assert _warp_loops(tmp_path, src, jobs=2) == want
    from musify.passes.hazards import warp_macros

    monkeypatch.setattr(warp_macros, "_NATIVE", None)
    assert _warp_loops(tmp_path, src) == want
    assert _warp_loops(tmp_path, src, suppress=("MU2023",)) == []


def test_a_cached_file_is_settled_by_the_run_that_reads_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernel's result comes from the incremental cache while its header changes: the run
    settles its pending loops against the header as it is now, without migrating it again."""
    monkeypatch.setenv("MUSIFY_CACHE_DIR", str(tmp_path / "cache"))
    src = _tree(tmp_path)
    assert len(_warp_loops(tmp_path, src, cache=True)) == 2
    (src / "core" / "compat.h").write_text("#define WARP_XOR(v, m) (v)\n#define SHFL_UP_SYNC(a, v, o) (v)\n")
    seen: list[str] = []
    real = pool.migrate_file_stated
    monkeypatch.setattr(pool, "migrate_file_stated", lambda job, *args: seen.append(job.rel) or real(job, *args))
    assert _warp_loops(tmp_path, src, cache=True) == [("kernel.cu", 14, "direct", 1, [])]
    assert seen == ["core/compat.h"]
