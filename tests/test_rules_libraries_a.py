"""Rule tables of cuBLAS/cuBLASLt, cuRAND, cuFFT, cuSPARSE, cuSOLVER, NPP and cuDNN.

Checks the committed tables against HIPIFY's catalogue (every name of these libraries known)
and Moore Threads' musify table (>= 99% agreement on shared keys, every difference explained),
both read from `../shared/reference/` and skipped when it is absent; and checks the generator
itself on a small header written here, so it is tested without the NVIDIA wheels.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from musify.rules.loader import load_ruleset
from musify.rules.model import RuleSet
from tools.gen_rules import cufft, cusparse
from tools.gen_rules.libraries_a import main
from tools.musify_differences import compare, load_oracle

REPO = Path(__file__).resolve().parents[1]
REFERENCE = REPO.parent / "shared" / "reference"
LIBRARIES = ("cublas", "cublaslt", "curand", "cufft", "cusparse", "cusolver", "npp", "cudnn")
# Catalogue names of these libraries: their prefixes, plus the few that carry none.
_OURS = re.compile(r"_*(?i:cublas|curand|cufft|cusparse|cusolver|npp|cudnn)"
                   r"|(?:bsr|csr|csc|prune|gesvdj|syevj)\w*Info|MAX_CUFFT_ERROR|NVFFT_\w+")


@pytest.fixture(scope="module")
def ours() -> RuleSet:
    subset = RuleSet()
    for rule in load_ruleset().all_rules():
        if rule.library in LIBRARIES:
            subset.add(rule)
    return subset


def test_every_catalogue_name_of_these_libraries_is_known(ours: RuleSet) -> None:
    path = REFERENCE / "cuda_api_names.txt"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    names = [n for n in path.read_text(encoding="utf-8").split() if _OURS.match(n)]
    missing = [n for n in names if n not in ours.names]
    print(f"\nlibraries-a catalogue coverage: {len(names) - len(missing)}/{len(names)}")
    assert len(names) > 4000
    assert not missing, f"{len(missing)} catalogue names are in no rule: {missing[:20]}"


def test_agreement_with_musify_on_these_libraries(ours: RuleSet) -> None:
    try:
        oracle = load_oracle(REFERENCE)
    except OSError:
        pytest.skip(f"musify tables not found under {REFERENCE}")
    result = compare(ours, *oracle)
    print(f"\nlibraries-a agreement: {result.agreed}/{result.shared} = {100 * result.agreement:.2f}%")
    assert result.shared > 14000
    assert result.agreement >= 0.99
    undocumented = [f"{d.origin}: {d.cuda} (musify {d.musify}, ours {d.ours})" for d in result.missing_notes]
    assert not undocumented, "\n".join(undocumented[:20])


def test_cudnn_is_reported_never_renamed(ours: RuleSet) -> None:
    cudnn = [r for r in ours.all_rules() if r.library == "cudnn"]
    assert len(cudnn) > 1000
    assert {(r.status, r.diag) for r in cudnn} == {("unsupported", "MU2030")}
    assert ours.headers["cudnn.h"].status == "unsupported"


def test_irregular_names_follow_their_sources(ours: RuleSet) -> None:
    assert ours.names["curandStatePhilox4_32_10_t"].musa == "murand_state_philox4x32_10"
    assert ours.headers["cublas_v2.h"].musa == "mublas.h"
    assert ours.headers["curand_philox4x32_x.h"].musa == "murand_philox4x32_10.h"
    assert ours.names["cublasLtMatmul"].library == "cublaslt"
    assert ours.names["Npp8u"].status == "unchanged"
    assert ours.names["nppiAdd_8u_C1RSfs"].musa == "mtppiAdd_8u_C1RSfs"  # NPP 12, gone in NPP 13


@pytest.mark.parametrize("library", LIBRARIES)
def test_generated_tables_are_marked_and_sorted(library: str) -> None:
    path = REPO / "rules" / library / "generated.yaml"
    text = path.read_text(encoding="utf-8")
    assert "do not edit" in text.splitlines()[0]
    assert re.search(r"^# read: nvidia-\S+ \d", text, re.MULTILINE), "package and version not recorded"
    records = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))["rules"]
    keys = [(r["cuda"], r["kind"]) for r in records]
    assert len(keys) > 100 and keys == sorted(keys)


HEADER = """\
#ifndef CUSPARSE_H_
#define CUSPARSE_H_
#define CUSPARSE_VER_MAJOR 12
#define CUSPARSE_VER_MINOR 9
#define CUSPARSE_VER_PATCH 4
#if defined(_MSC_VER)
#   define CUSPARSE_DEPRECATED_TYPE_MSVC
        __declspec(deprecated("gone soon"))
#   define CUSPARSE_DEPRECATED_TYPE
#else
#   define CUSPARSE_DEPRECATED_TYPE_MSVC
#   define CUSPARSE_DEPRECATED_TYPE __attribute__((deprecated))
#endif
extern "C" {
struct csrsv2Info;
typedef CUSPARSE_DEPRECATED_TYPE_MSVC struct csrsv2Info *csrsv2Info_t CUSPARSE_DEPRECATED_TYPE;
typedef enum { CUSPARSE_STATUS_SUCCESS = 0 } cusparseStatus_t;
#if defined(NEW_TABLE)
static const double table[] = {
#else
static const double table[] = {
#endif
    1.0 };
cusparseStatus_t cusparseCreate(void **handle);
int helper_without_vendor_word(int);
}
#endif
"""


def _fake_wheel(root: Path, name: str, version: str, files: dict[str, str]) -> Path:
    (root / f"{name.replace('-', '_')}-{version}.dist-info").mkdir(parents=True)
    (root / f"{name.replace('-', '_')}-{version}.dist-info" / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    include = root / "nvidia" / "include"
    include.mkdir(parents=True)
    for file, text in files.items():
        (include / file).write_text(text)
    return include


def test_generator_reads_awkward_headers(tmp_path: Path) -> None:
    new = _fake_wheel(tmp_path / "new", "nvidia-cusparse", "12.9.4.2", {"cusparse.h": HEADER})
    old = _fake_wheel(tmp_path / "old", "nvidia-cusparse-cu12", "12.5.0.1",
                      {"cusparse.h": "void cusparseScsrmv(int);\ncusparseStatus_t cusparseCreate(void **);\n"})
    rules = tmp_path / "rules"
    oracle = tmp_path / "general.json"
    oracle.write_text('{"cusparseCreate": "musparseCreate"}')
    args = ["--include", str(new), "--include", str(old), "--rules", str(rules), "--oracle", str(oracle)]
    assert main(cusparse.SPEC, args) == 0
    text = (rules / "cusparse" / "generated.yaml").read_text()
    assert "# read: nvidia-cusparse 12.9.4.2 (headers 12.9.4): cusparse.h" in text
    records = {r["cuda"]: r for r in yaml.safe_load(text)["rules"]}
    assert records["cusparseCreate"] == {"cuda": "cusparseCreate", "musa": "musparseCreate",
                                         "kind": "function", "library": "cusparse", "section": "cusparse"}
    assert records["csrsv2Info_t"]["status"] == "unchanged"  # the typedef name, not the attribute
    assert records["CUSPARSE_STATUS_SUCCESS"]["inferred"] is True  # not in the oracle
    assert records["cusparseScsrmv"]["section"] == "legacy"  # only the older headers declare it
    assert records["cusparse.h"] == {"cuda": "cusparse.h", "musa": "musparse.h", "kind": "header",
                                     "library": "cusparse", "section": "headers", "inferred": True}
    assert "helper_without_vendor_word" not in records and "table" not in records
    assert "CUSPARSE_H_" not in records  # include guards are not API
    again = tmp_path / "again"
    main(cusparse.SPEC, args[:-4] + ["--rules", str(again), "--oracle", str(oracle)])
    assert (again / "cusparse" / "generated.yaml").read_text() == text  # deterministic


def test_generator_reports_unsupported_names(tmp_path: Path) -> None:
    header = "typedef enum { NVFFT_PLAN_PROPERTY_INT64_PATIENT_JIT = 1 } cufftProperty;\n"
    include = _fake_wheel(tmp_path, "nvidia-cufft", "12.5.0.14", {"cufft.h": header})
    main(cufft.SPEC, ["--include", str(include), "--rules", str(tmp_path / "r"),
                      "--oracle", str(tmp_path / "none.json")])
    records = {r["cuda"]: r for r in yaml.safe_load((tmp_path / "r" / "cufft" / "generated.yaml")
                                                     .read_text())["rules"]}
    assert records["NVFFT_PLAN_PROPERTY_INT64_PATIENT_JIT"]["status"] == "unsupported"
    assert records["cufftProperty"]["musa"] == "mufftProperty"
