"""A small, fixed rule set for the hazard tests, so they do not depend on the built-in tables
(written by others and changing) beyond musify's own shim table and what the built-in rules say
is special about a name: every record with a hazard tag or a hazard (MU2xxx) diagnostic, since
the passes find their names through those and never by spelling."""

from __future__ import annotations

from pathlib import Path

import pytest

from musify.rules.loader import load_ruleset, parse_rule_file
from musify.rules.model import Rule, RuleSet

REPO = Path(__file__).resolve().parents[2]

_RENAMES = {
    "__CUDA_ARCH__": "__MUSA_ARCH__", "CUDA_VERSION": "MUSA_COMP_VERSION", "CUDART_VERSION": "MUSART_VERSION",
    "cudaMalloc": "musaMalloc", "cudaFree": "musaFree", "cudaEventDisableTiming": "musaEventDisableTiming",
    "cudaDeviceSynchronize": "musaDeviceSynchronize", "cudaStream_t": "musaStream_t",
    "cudaLaunchAttributeClusterDimension": "musaLaunchAttributeClusterDimension",
    "cudaError_t": "musaError_t", "cudaSuccess": "musaSuccess",
}


def hazard_ruleset() -> RuleSet:
    rs = RuleSet()
    for cuda, musa in _RENAMES.items():
        rs.add(Rule(cuda, musa, "function", "cudart", "renamed"))
    for name in ("cudnnCreate", "cudnnHandle_t"):
        rs.add(Rule(name, None, "function", "cudnn", "unsupported", diag="MU2030"))
    rs.add(Rule("cudnn.h", None, "header", "cudnn", "unsupported", diag="MU2030"))
    for rule in load_ruleset().all_rules():
        if (rule.hazard or (rule.diag or "").startswith("MU2")):
            rs.add(rule)
    shim_file = REPO / "rules" / "shims" / "shims.yaml"
    for rule in parse_rule_file(shim_file, shim_file.read_bytes(), rel_to=REPO):
        rs.add(rule)
    return rs


@pytest.fixture(scope="session")
def ruleset() -> RuleSet:
    return hazard_ruleset()


@pytest.fixture(autouse=True)
def _cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("MUSIFY_CACHE_DIR", str(tmp_path / "cache"))
