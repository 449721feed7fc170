"""Shared fixtures: a small hand-built RuleSet for engine tests, and an isolated rules cache."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from musify.rules.model import Rule, RuleSet

REPO = Path(__file__).resolve().parents[1]
REFERENCE = REPO.parent / "shared" / "reference"


@pytest.fixture(scope="session", autouse=True)
def _every_record_validates():
    """Every run record the suite produces (in-process) is checked against the shipped JSON
    Schema, so a field added without its schema entry, or a wrong type, fails the test that made it."""
    from musify.records import RunRecord
    from musify.schemas import validate_record

    plain = RunRecord.to_json
    plain_pieces = RunRecord.iter_bytes  # what --json writes (and dumps joins), streamed

    def checked(self, deterministic: bool = False, packed: bool = False) -> dict:
        doc = plain(self, deterministic, packed)
        if not packed:  # the renderers' view (edits left packed); the record itself is checked below
            validate_record(doc)
        return doc

    def checked_pieces(self, deterministic: bool = False, totals: dict | None = None):
        assert totals is None or totals == self.totals  # totals handed in are this record's
        pieces = list(plain_pieces(self, deterministic, totals))
        validate_record(json.loads(b"".join(pieces)))
        yield from pieces

    RunRecord.to_json = checked
    RunRecord.iter_bytes = checked_pieces
    yield
    RunRecord.to_json = plain
    RunRecord.iter_bytes = plain_pieces


@pytest.fixture(scope="session", autouse=True)
def _isolated_cache(tmp_path_factory):
    """Tests never write the user's ~/.cache; the compiled rules are cached once per session."""
    if "MUSIFY_CACHE_DIR" not in os.environ:
        os.environ["MUSIFY_CACHE_DIR"] = str(tmp_path_factory.mktemp("musify-cache"))
    yield


def _r(cuda, musa=None, kind="function", library="cudart", status="renamed", **kw) -> Rule:
    return Rule(cuda=cuda, musa=musa if status != "unchanged" else cuda, kind=kind, library=library,
                status=status, **kw)


def small_ruleset() -> RuleSet:
    rs = RuleSet(digest="test", vendor_pattern="cuda|CUDA|cu[A-Z]|CU_")
    for rule in [
        _r("cudaMalloc", "musaMalloc"), _r("cudaFree", "musaFree"), _r("cudaMemcpy", "musaMemcpy"),
        _r("cudaMemcpyHostToDevice", "musaMemcpyHostToDevice", "enumerator"),
        _r("cudaError_t", "musaError_t", "type"), _r("cudaSuccess", "musaSuccess", "enumerator"),
        _r("cudaGetErrorString", "musaGetErrorString"), _r("cudaDeviceSynchronize", "musaDeviceSynchronize"),
        _r("CUDA_VERSION", "MUSA_COMP_VERSION", "macro"), _r("__CUDACC__", "__MUSACC__", "macro"),
        _r("cuInit", "muInit", library="cuda-driver"), _r("CUdeviceptr", "MUdeviceptr", "type", "cuda-driver"),
        _r("cudaGraphInstantiateWithParams", status="unsupported", note="no MUSA counterpart"),
        _r("threadIdx", kind="variable", library="cuda-device", status="unchanged"),
        _r("__nv_bfloat16", "__mt_bfloat16", "type", "bf16"),
        _r("nvrtcCompileProgram", "mtrtcCompileProgram", library="nvrtc", inferred=True),
        _r("cuda_runtime.h", "musa_runtime.h", "header"), _r("cuda_fp16.h", "musa_fp16.h", "header", "fp16"),
        _r("cudnn.h", kind="header", library="cudnn", status="unsupported"),
        _r("cutlass/", "mutlass/", "header", "cutlass"),
        _r("thrust::cuda", "thrust::musa", "namespace", "thrust"),
    ]:
        rs.add(rule)
    return rs


@pytest.fixture
def rules() -> RuleSet:
    return small_ruleset()


def install_rules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, yaml_text: str) -> Path:
    """Make `yaml_text` the whole built-in rule database for one test (with its own cache)."""
    d = tmp_path / "rules" / "rt"
    d.mkdir(parents=True, exist_ok=True)
    (d / "r.yaml").write_text(yaml_text)
    from musify.resources import data_dir
    from musify.rules.vocab import TABLES

    for table in TABLES:  # the front ends' vocabularies: every run needs them, no test replaces them
        (tmp_path / "rules" / table).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "rules" / table).write_bytes((data_dir("rules") / table).read_bytes())
    monkeypatch.setenv("MUSIFY_RULES_DIR", str(tmp_path / "rules"))
    monkeypatch.setenv("MUSIFY_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "rules"


def pytest_report_header() -> str:
    """Say which scanner the run tests: the compiled one, or the pure-Python fallback."""
    from musify.frontend.scanner import SCANNER

    return f"musify scanner: {SCANNER} ({'compiled _cscan' if SCANNER == 'c' else 'pure Python'})"
