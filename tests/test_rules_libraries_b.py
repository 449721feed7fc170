"""Rule data and generator of part 2b: NCCL, CUPTI, NVTX, NVRTC, libdevice, cuComplex,
cooperative groups, CUB/Thrust, CUTLASS/CuTe.

The generator is tested on small headers written here (so it runs anywhere); the committed
rule files are checked for shape and provenance; and where `../shared/reference/` exists the
generated names are checked against Moore Threads' musify table.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from musify.rules.loader import load_ruleset, parse_rule_file
from tools.gen_rules import cccl, cutlass, libraries_b, nccl, nvrtc, nvtx
from tools.gen_rules.libraries_b import Emitter, Record, attest, generate

REPO = Path(__file__).resolve().parents[1]
REFERENCE = REPO.parent / "shared" / "reference"
DIRECTORIES = ("nccl", "cupti", "nvtx", "nvrtc", "libdevice", "cucomplex", "cooperative_groups",
               "cub", "thrust", "cutlass")
LIBRARIES = {"nccl", "cupti", "nvtx", "nvrtc", "libdevice", "cucomplex", "cooperative-groups",
             "cub", "thrust", "cutlass"}


def _files() -> list[Path]:
    return sorted(p for d in DIRECTORIES for p in (REPO / "rules" / d).glob("*.yaml"))


@pytest.fixture(scope="module")
def ruleset():
    return load_ruleset()


# --- naming helpers -----------------------------------------------------------------------

@pytest.mark.parametrize(("cuda", "musa"), [
    ("ncclAllReduce", "mcclAllReduce"), ("NCCL_MAJOR", "MCCL_MAJOR"),
    ("pncclSend", "pmcclSend"), ("ncclCommCuDevice", "mcclCommCuDevice"),
])
def test_mccl_name(cuda: str, musa: str) -> None:
    assert nccl.mccl_name(cuda) == musa


@pytest.mark.parametrize(("cuda", "musa"), [
    ("nvrtcCompileProgram", "mtrtcCompileProgram"), ("NVRTC_SUCCESS", "MTRTC_SUCCESS"),
    ("_nvrtcProgram", "_mtrtcProgram"), ("nvrtcGetCUBIN", "mtrtcGetMUBIN"),
])
def test_mtrtc_name(cuda: str, musa: str) -> None:
    assert nvrtc.mtrtc_name(cuda) == musa


def test_header_spellings() -> None:
    assert nvtx.mttx_header("nvtx3/nvToolsExt.h") == "mttx3/mtToolsExt.h"
    assert nvtx.mttx_header("nvtx3/nvToolsExtCudaRt.h") == "mttx3/mtToolsExtMusaRt.h"
    assert cutlass.mutlass_header("cutlass/cutlass.h") == "mutlass/mutlass.h"
    assert cutlass.mutlass_header("cute/tensor.hpp") == "mute/tensor.hpp"
    assert cutlass.mutlass_header("cutlass/gemm/device/gemm.h") == "mutlass/gemm/device/gemm.h"
    assert cccl.thrust_header("thrust/system/cuda/execution_policy.h") == \
        "thrust/system/musa/execution_policy.h"
    assert cccl.thrust_header("thrust/device_vector.h") == "thrust/device_vector.h"


@pytest.mark.parametrize(("cuda", "musa"), [
    ("CUTLASS_HOST_DEVICE", "MUTLASS_HOST_DEVICE"), ("CUTE_HOST_DEVICE", "MUTE_HOST_DEVICE"),
    ("CUTLASS_ENABLE_CUDA_HOST_ADAPTER", "MUTLASS_ENABLE_MUSA_HOST_ADAPTER"),
    ("CUTE_ARCH_TMA_SM90_ENABLED", "MUTE_ARCH_TMA_SM90_ENABLED"),
])
def test_mutlass_macro_name(cuda: str, musa: str) -> None:
    assert cutlass.mutlass_name(cuda) == musa


# --- generator machinery ------------------------------------------------------------------

def test_flow_records_are_valid_yaml_with_quoting() -> None:
    rec = Record("a.h", "header", musa="b.h", note='has: colon, "quotes"', inferred=True)
    assert yaml.safe_load(rec.flow()) == {"cuda": "a.h", "musa": "b.h", "kind": "header",
                                         "note": 'has: colon, "quotes"', "inferred": True}
    assert yaml.safe_load(Record("true", "macro", status="unchanged").flow())["cuda"] == "true"


def test_attest_marks_unspelled_renames_inferred_and_notes_disagreements() -> None:
    recs = [Record("cuA", "function", musa="muA"), Record("cuB", "function", musa="muB"),
            Record("cuC", "function", musa="muC"), Record("cub", "namespace", status="unchanged"),
            Record("x.h", "header", musa="y.h", inferred=False, note="MUSA_FACTS")]
    out = {r.cuda: r for r in attest(recs, {"cuA": "muA", "cuB": "muBee"}, "table")}
    assert out["cuA"].inferred is False and out["cuA"].note is None
    assert out["cuB"].note == "table spells it muBee; ours follows the naming pattern"
    assert out["cuC"].inferred is True
    assert out["cub"].inferred is False
    assert out["x.h"].inferred is False


def _mini_nccl(root: Path) -> None:
    (root / "nccl.h").write_text(
        "#ifndef NCCL_H_\n#define NCCL_H_\n#define NCCL_MAJOR 2\n#define NCCL_MINOR 99\n"
        "#define NCCL_PATCH 1\ntypedef struct ncclComm* ncclComm_t;\n"
        "typedef enum { ncclSuccess = 0, ncclInvalidUsage = 5 } ncclResult_t;\n"
        "ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device);\n"
        "ncclResult_t pncclCommCuDevice(const ncclComm_t comm, int* device);\n"
        "int helper_not_nccl(void);\n#endif\n")
    dist = root.parent / "nvidia_nccl_cu13-2.99.1.dist-info"
    dist.mkdir()


def test_generate_writes_sorted_deterministic_file_with_provenance(tmp_path: Path) -> None:
    include = tmp_path / "site" / "include"
    include.mkdir(parents=True)
    _mini_nccl(include)
    rules = tmp_path / "rules"
    emitter = nccl.EMITTERS[0]
    out = generate(emitter, [tmp_path / "nothing", include], {"nccl.h": "mccl.h"}, "test", rules)
    first = out.read_bytes()
    assert generate(emitter, [include], {"nccl.h": "mccl.h"}, "test", rules).read_bytes() == first
    text = first.decode()
    assert "do not edit" in text.splitlines()[0]
    assert "nvidia-nccl-cu13 2.99.1" in text and "NCCL_MINOR=99" in text
    rules_by_name = {r.cuda: r for r in parse_rule_file(out)}
    assert rules_by_name["ncclCommCuDevice"].musa == "mcclCommCuDevice"
    assert rules_by_name["pncclCommCuDevice"].musa == "pmcclCommCuDevice"
    assert rules_by_name["ncclResult_t"].inferred
    assert rules_by_name["nccl.h"].musa == "mccl.h" and not rules_by_name["nccl.h"].inferred
    assert "helper_not_nccl" not in rules_by_name and "NCCL_H_" not in rules_by_name
    names = [r.cuda for r in parse_rule_file(out) if r.kind != "header"]
    assert names == sorted(names)


def test_main_reports_a_missing_include_folder(tmp_path: Path, capsys) -> None:
    dummy = Emitter("x", "x", "absent.h", "none", lambda root: [], lambda root: "")
    assert libraries_b.main(["--include", str(tmp_path), "--rules", str(tmp_path)], [dummy]) == 1
    assert "no include folder has absent.h" in capsys.readouterr().err


def test_cccl_keeps_cub_and_renames_thrusts_cuda_system(tmp_path: Path) -> None:
    (tmp_path / "cub" / "block").mkdir(parents=True)
    (tmp_path / "cub" / "cub.cuh").write_text("#define CUB_STDERR\n#define CUB_RUNTIME_FUNCTION\n")
    (tmp_path / "cub" / "block" / "block_reduce.cuh").write_text("#define CUB_MIN_X(a) a\n")
    (tmp_path / "thrust" / "system" / "cuda").mkdir(parents=True)
    (tmp_path / "thrust" / "version.h").write_text("#define THRUST_VERSION 300500\n"
                                                     "#define THRUST_DEVICE_SYSTEM_CUDA 1\n")
    (tmp_path / "thrust" / "system" / "cuda" / "vector.h").write_text("\n")
    cub = {r.cuda: r for r in cccl.build_cub(tmp_path)}
    assert cub["cub"].status == "unchanged" and cub["cub/block/block_reduce.cuh"].status == "unchanged"
    assert cub["CUB_STDERR"].status == "unchanged"
    thrust = {r.cuda: r for r in cccl.build_thrust(tmp_path)}
    assert thrust["thrust::cuda"].musa == "thrust::musa"
    assert thrust["thrust/system/cuda/vector.h"].musa == "thrust/system/musa/vector.h"
    assert thrust["THRUST_DEVICE_SYSTEM_CUDA"].musa == "THRUST_DEVICE_SYSTEM_MUSA"
    assert thrust["thrust/version.h"].status == "unchanged"


# --- the committed rule files ---------------------------------------------------------------

def test_committed_files_load_and_use_known_libraries() -> None:
    files = _files()
    assert len(files) >= 10
    for path in files:
        rules = parse_rule_file(path)
        assert rules, path
        assert {r.library for r in rules} <= LIBRARIES, path


def test_generated_files_record_their_source() -> None:
    for path in _files():
        if not path.name.startswith("generated"):
            continue
        head = path.read_text(encoding="utf-8").splitlines()[:4]
        assert "do not edit" in head[0], path
        assert head[2].startswith("# Read: ") and "unknown package" not in head[2], path


def test_ruleset_spot_checks(ruleset) -> None:
    expect = {
        "ncclAllReduce": "mcclAllReduce", "cuptiActivityEnable": "muptiActivityEnable",
        "CUpti_ActivityKind": "MUpti_ActivityKind", "nvtxRangePushA": "mttxRangePushA",
        "nvrtcCreateProgram": "mtrtcCreateProgram", "__nv_expf": "__mt_expf",
        "__nvvm_atom_add_gen_f": "__mtvm_atom_add_gen_f", "cuFloatComplex": "muFloatComplex",
        "make_cuDoubleComplex": "make_muDoubleComplex", "CUTLASS_HOST_DEVICE": "MUTLASS_HOST_DEVICE",
        "cutlass": "mutlass", "cute": "mute",
    }
    got = {name: ruleset.names[name].replacement for name in expect if name in ruleset.names}
    assert got == expect
    for header, musa in {"nccl.h": "mccl.h", "cupti.h": "mupti.h", "cuComplex.h": "muComplex.h",
                         "cutlass/cutlass.h": "mutlass/mutlass.h", "cub/cub.cuh": None,
                         "cooperative_groups.h": None, "thrust/device_vector.h": None}.items():
        assert ruleset.headers[header].replacement == musa, header
    assert ruleset.names["cub"].status == "unchanged"
    assert ruleset.names["cooperative_groups"].status == "unchanged"
    quals = {rule.cuda: rule.musa for entries in ruleset.qualified.values() for _, rule in entries}
    assert quals["thrust::cuda"] == "thrust::musa"
    assert quals["thrust::cuda_cub"] == "thrust::musa_cub"


def test_inferred_libraries_are_marked(ruleset) -> None:
    """No public MUSA source spells NVRTC or the NVTX functions: every rename there is inferred."""
    for rule in ruleset.all_rules():
        if rule.library in ("nvrtc", "nvtx") and rule.replacement:
            assert rule.inferred, rule.origin


# --- against Moore Threads' table ------------------------------------------------------------

@pytest.fixture(scope="module")
def general() -> dict[str, str]:
    path = REFERENCE / "musify" / "general.json"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("library", ["cupti", "libdevice", "cucomplex"])
def test_agrees_with_musify_table(ruleset, general, library: str) -> None:
    shared = agreed = 0
    for rule in ruleset.all_rules():
        if rule.library == library and rule.cuda in general and rule.kind != "header":
            shared += 1
            agreed += (rule.replacement or rule.cuda) == general[rule.cuda]
    print(f"\n{library}: {agreed}/{shared} agree with musify")
    assert shared >= 20 and agreed / shared >= 0.99


def test_catalogue_names_of_these_libraries_are_known(ruleset) -> None:
    path = REFERENCE / "cuda_api_names.txt"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    prefixes = ("CUB_", "Cub", "_CUB", "__CUB", "_Cub", "nvrtc", "NVRTC", "cuC", "make_cuComplex",
                "make_cuFloatComplex", "make_cuDoubleComplex", "cuComplex", "cuFloatComplex",
                "cuDoubleComplex")
    ours = [n for n in path.read_text(encoding="utf-8").split() if n.startswith(prefixes)
            and not n.startswith(("cuCtx", "cuCoredump"))]
    assert len(ours) > 100
    missing = [n for n in ours if n not in ruleset.names]
    assert not missing, missing
