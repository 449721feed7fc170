"""MUSA -> CUDA: the reversed RuleSet, MU1003 for many-to-one names, file renames backwards, and
the round trip CUDA -> MUSA -> CUDA giving back the input byte for byte."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from musify.cli import main
from musify.options import Options
from musify.rules.model import Rule, RuleSet
from musify.rules.reverse import reverse_choices, reverse_ruleset
from musify.runner import migrate_text
from tests.conftest import install_rules, small_ruleset

FORWARD = small_ruleset()
BACK = reverse_ruleset(FORWARD)
ONE_TO_ONE = sorted(n for n, r in FORWARD.names.items())
FILLER = ["int", "x", "y1", " ", " ", "\n", "\r\n", "(", ")", ";", "{", "}", ",", "&", "//", "/*", "*/", '"', "'",
          "#include <cuda_runtime.h>\n", "#include <cuda_fp16.h>\n", "#define ", "#ifdef ", "thrust::cuda", "::",
          "\\", "é"]
texts = st.lists(st.sampled_from(ONE_TO_ONE + FILLER), max_size=60).map("".join)


def _header(cuda: str, musa: str, **kw) -> Rule:
    return Rule(cuda=cuda, musa=musa, kind="header", library="cublas", status="renamed", **kw)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts)
def test_round_trip_is_byte_identical(text):
    musa, _, _ = migrate_text(text, "p.cu", FORWARD, Options())
    back, _, _ = migrate_text(musa, "p.mu", BACK, Options(reverse=True))
    assert back == text


def test_reversed_records():
    assert BACK.names["musaMalloc"].replacement == "cudaMalloc"
    assert BACK.headers["musa_runtime.h"].replacement == "cuda_runtime.h"
    assert BACK.names["cudaMalloc"].replacement is None  # a CUDA name going back stays as it is
    assert BACK.names["cudaMalloc"].status == "unchanged"
    new, ctx, _ = migrate_text("thrust::musa::par; mtrtcCompileProgram(p);", "a.mu", BACK, Options(reverse=True))
    assert new == "thrust::cuda::par; nvrtcCompileProgram(p);"
    assert not [d for d in ctx.diagnostics if d.id == "MU1004"]  # no "inferred" note on the way back


def test_many_to_one_picks_documented_winner_and_warns_once_per_file():
    rs = RuleSet()
    rs.add(_header("cublas_v2.h", "mublas.h"))
    rs.add(_header("cublas.h", "mublas.h"))
    back = reverse_ruleset(rs)
    assert reverse_choices(back) == {"mublas.h": ("cublas.h", "cublas_v2.h")}
    new, ctx, _ = migrate_text("#include <mublas.h>\n#include \"mublas.h\"\n", "g.mu", back, Options(reverse=True))
    assert new == "#include <cublas.h>\n#include \"cublas.h\"\n"
    mu1003 = [d for d in ctx.diagnostics if d.id == "MU1003"]
    assert len(mu1003) == 1 and mu1003[0].line == 1
    assert "cublas.h, cublas_v2.h" in mu1003[0].message and "chose 'cublas.h'" in mu1003[0].message


def test_reverse_false_keeps_a_record_out_and_public_beats_inferred():
    rs = RuleSet()
    rs.add(_header("cublas.h", "mublas.h", reverse=False))
    rs.add(_header("cublas_v2.h", "mublas.h"))
    rs.add(Rule("cuAaa", "muX", "function", "cuda-driver", "renamed", inferred=True))
    rs.add(Rule("cuZzz", "muX", "function", "cuda-driver", "renamed"))
    back = reverse_ruleset(rs)
    assert back.headers["mublas.h"].replacement == "cublas_v2.h"
    assert "mublas.h" not in reverse_choices(back)
    assert back.names["muX"].replacement == "cuZzz"
    assert reverse_choices(back)["muX"] == ("cuZzz", "cuAaa")


RULES_YAML = """schema: musify-rules/1
library: cudart
kind: function
status: renamed
rules:
  - {cuda: cudaMalloc, musa: musaMalloc}
  - {cuda: cudaFree, musa: musaFree}
  - {cuda: cuda_runtime.h, musa: musa_runtime.h, kind: header}
"""


@pytest.fixture
def tiny_rules(tmp_path, monkeypatch):
    install_rules(tmp_path, monkeypatch, RULES_YAML)


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_cli_round_trip_renames_files_back(tmp_path, tiny_rules):
    src = tmp_path / "proj"
    src.mkdir()
    (src / "main.cu").write_text('#include <cuda_runtime.h>\n#include "util.cuh"\n'
                                 "int main() { float* p; cudaMalloc(&p, 4); cudaFree(p); }\n")
    (src / "util.cuh").write_text("#pragma once\ninline void f() { cudaFree(0); }\n")
    (src / "host.cpp").write_text('#include "util.cuh"\n')
    runner = CliRunner()
    r1 = runner.invoke(main, ["migrate", str(src), "-o", str(tmp_path / "musa"), "-q"])
    assert r1.exit_code == 0, r1.output
    assert sorted(_tree(tmp_path / "musa")) == ["host.cpp", "main.mu", "util.muh"]
    r2 = runner.invoke(main, ["migrate", "--reverse", str(tmp_path / "musa"), "-o", str(tmp_path / "back"), "-q"])
    assert r2.exit_code == 0, r2.output
    assert _tree(tmp_path / "back") == _tree(src)


def test_reverse_leaves_cuda_files_alone(tmp_path, tiny_rules):
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.cu").write_text("musaMalloc(0);\n")
    (src / "b.mu").write_text("musaMalloc(0);\n")
    r = CliRunner().invoke(main, ["migrate", "--reverse", str(src), "-o", str(tmp_path / "out"), "-q"])
    assert r.exit_code == 0, r.output
    assert _tree(tmp_path / "out") == {"a.cu": b"musaMalloc(0);\n", "b.cu": b"cudaMalloc(0);\n"}
