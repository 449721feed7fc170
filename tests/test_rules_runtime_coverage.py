"""Every runtime/driver name in HIPIFY's CUDA name catalogue is known to the rules.

The catalogue (`../shared/reference/cuda_api_names.txt`, read, never copied) lists names from
many CUDA releases, so this also checks that names removed before CUDA 13 are hand-curated.
Library prefixes (cuBLAS, cuRAND, ...) belong to the library rule files and are left out here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from musify.rules import load_ruleset

CATALOGUE = Path(__file__).resolve().parents[1].parent / "shared" / "reference" / "cuda_api_names.txt"
SELECTED = re.compile(r"^(cuda|CUDA|cu[A-Z]|CU[a-z]|CU_)")
LIBRARIES = re.compile(r"^(CUBLAS|CURAND|CUFFT|CUSPARSE|CUSOLVER|CUDNN)")


def runtime_driver_names(text: str) -> list[str]:
    return [n for n in text.split() if SELECTED.match(n) and not LIBRARIES.match(n)]


def test_selection_matches_the_brief() -> None:
    names = runtime_driver_names("cudaMalloc CUdeviceptr CU_CTX_MAP_HOST cuInit CUDA_SUCCESS "
                                 "cublasSgemm CUBLAS_OP_N CUDNN_STATUS_SUCCESS CUSTOM_THING Cubic")
    assert names == ["cudaMalloc", "CUdeviceptr", "CU_CTX_MAP_HOST", "cuInit", "CUDA_SUCCESS"]


def test_every_catalogued_runtime_and_driver_name_is_known() -> None:
    if not CATALOGUE.is_file():
        pytest.skip(f"{CATALOGUE} not present")
    names = runtime_driver_names(CATALOGUE.read_text(encoding="utf-8"))
    ruleset = load_ruleset()
    missing = [n for n in names if n not in ruleset and n not in ruleset.qualified]
    print(f"runtime/driver coverage: {len(names) - len(missing)}/{len(names)}")
    assert not missing, f"{len(missing)} catalogued names unknown to the rules: {missing[:40]}"
