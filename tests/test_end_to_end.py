"""Whole runs through the CLI: output modes, mirrors, atomic in-place writes, -j determinism, and
bad input that is reported without losing anything."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from musify.cli import main
from tests.conftest import install_rules

RULES_YAML = """schema: musify-rules/1
library: cudart
kind: function
status: renamed
vendor_prefixes: [cuda, "cu[A-Z]", CU_]
rules:
  - {cuda: cudaMalloc, musa: musaMalloc}
  - {cuda: cudaFree, musa: musaFree}
  - {cuda: cudaError_t, musa: musaError_t, kind: type}
  - {cuda: cudaSuccess, musa: musaSuccess, kind: enumerator}
  - {cuda: cuda_runtime.h, musa: musa_runtime.h, kind: header}
  - {cuda: threadIdx, status: unchanged, kind: variable, library: cuda-device}
"""

KERNEL = """#include <cuda_runtime.h>
#include "util.cuh"
// cudaMalloc in a comment stays
__global__ void k(float* a) { a[threadIdx.x] = 1.0f; }
int main() { float* p; cudaMalloc(&p, 4); k<<<1, 1>>>(p); cudaFree(p); return 0; }
"""


@pytest.fixture(autouse=True)
def tiny_rules(tmp_path, monkeypatch):
    install_rules(tmp_path, monkeypatch, RULES_YAML)


@pytest.fixture
def project(tmp_path):
    src = tmp_path / "proj"
    (src / "sub").mkdir(parents=True)
    (src / "main.cu").write_text(KERNEL)
    (src / "util.cuh").write_text("#pragma once\ninline cudaError_t ok() { return cudaSuccess; }\n")
    (src / "host.cpp").write_bytes(b"\xef\xbb\xbf#include <cuda_runtime.h>\r\nvoid f() { cudaFree(0); }\r\n")
    (src / "CMakeLists.txt").write_text("project(x CUDA)\n")
    (src / "sub" / "already.mu").write_text("musaMalloc(0);\n")
    (src / "sub" / "data.bin").write_bytes(bytes(range(256)))
    (src / ".gitignore").write_text("build/\n*.o\n")
    (src / "build").mkdir()
    (src / "build" / "gen.cu").write_text("cudaMalloc(0);\n")
    (src / "x.o").write_bytes(b"\0obj")
    os.chmod(src / "main.cu", 0o640)
    return src


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_output_mirror_is_complete_and_renamed(project, tmp_path):
    out = tmp_path / "out"
    r = invoke("migrate", project, "-o", out, "--json", tmp_path / "run.json")
    assert r.exit_code == 0, r.output
    files = tree(out)
    assert set(files) == {"main.mu", "util.muh", "host.cpp", "CMakeLists.txt", "sub/already.mu", "sub/data.bin",
                          ".gitignore"}
    assert b'#include "util.muh"' in files["main.mu"] and b"musaMalloc(&p, 4)" in files["main.mu"]
    assert b"// cudaMalloc in a comment stays" in files["main.mu"]
    assert files["host.cpp"] == b"\xef\xbb\xbf#include <musa_runtime.h>\r\nvoid f() { musaFree(0); }\r\n"
    assert files["sub/data.bin"] == bytes(range(256)) and files["sub/already.mu"] == b"musaMalloc(0);\n"
    assert stat.S_IMODE(os.stat(out / "main.mu").st_mode) == 0o640
    record = json.loads((tmp_path / "run.json").read_text())
    assert record["schema"] == "musify-run/2"
    assert record["totals"]["facts"]["launches"] == 1
    main_rec = next(f for f in record["files"] if f["rel"] == "main.cu")
    assert main_rec["output_path"] == "main.mu" and main_rec["renamed"]["cudaMalloc"] == 1
    # the port migrates to itself: nothing changes the second time
    r2 = invoke("migrate", out, "-o", tmp_path / "out2", "--json", tmp_path / "run2.json")
    assert r2.exit_code == 0
    assert tree(tmp_path / "out2") == files
    assert json.loads((tmp_path / "run2.json").read_text())["totals"]["edits"] == 0


def test_output_inside_input_is_refused(project):
    r = invoke("migrate", project, "-o", project / "port")
    assert r.exit_code == 2 and "inside the input tree" in r.output
    assert not (project / "port").exists()


def test_in_place_is_atomic_keeps_permissions_and_renames(project):
    r = invoke("migrate", project, "--in-place")
    assert r.exit_code == 0, r.output
    assert not (project / "main.cu").exists()
    assert (project / "main.mu").read_text().count("musaMalloc") == 1
    assert stat.S_IMODE(os.stat(project / "main.mu").st_mode) == 0o640
    assert (project / "build" / "gen.cu").read_text() == "cudaMalloc(0);\n"  # gitignored: untouched
    assert not list(project.rglob(".musify-*"))


def test_diff_and_stdout_write_nothing(project):
    before = tree(project)
    r = invoke("migrate", project / "main.cu", "--diff")
    assert r.exit_code == 0
    assert "--- a/main.cu" in r.output and "+++ b/main.mu" in r.output and "+int main() { float* p; musaMalloc" in r.output
    r = invoke("migrate", project / "host.cpp", "--stdout", "-q")
    assert "musaFree(0)" in r.output
    assert tree(project) == before


def test_jobs_give_identical_output_and_records(project, tmp_path):
    for i in range(12):
        (project / f"gen{i}.cu").write_text(KERNEL.replace("k(", f"k{i}("))
    records = []
    for jobs in (1, 2):
        out = tmp_path / f"out{jobs}"
        r = invoke("migrate", project, "-o", out, "-j", jobs, "--json", tmp_path / f"run{jobs}.json")
        assert r.exit_code == 0
        from musify.records import RunRecord

        rec = RunRecord.from_json(json.loads((tmp_path / f"run{jobs}.json").read_text()))
        d = rec.to_json(deterministic=True)
        d.pop("command")
        d.pop("output")
        records.append(d)
    assert tree(tmp_path / "out1") == tree(tmp_path / "out2")
    assert records[0] == records[1]


def test_exclude_glob(project, tmp_path):
    r = invoke("migrate", project, "-o", tmp_path / "o", "--exclude", "host.cpp")
    assert r.exit_code == 0
    assert not (tmp_path / "o" / "host.cpp").exists()


def test_bad_input_is_reported_and_the_rest_migrates(project, tmp_path):
    (project / "empty.cu").write_text("")
    (project / "pkg").mkdir()
    (project / "pkg" / "__init__.py").write_text("")  # a package's marker: empty by convention, no note
    (project / "binary.cu").write_bytes(b"\x7fELF\0\0cudaMalloc")
    (project / "latin1.cu").write_bytes(b"// caf\xe9\ncudaFree(p);\n")
    (project / "broken.cu").write_text('cudaFree(p);\nputs("open\n/* never closed\n')
    (project / "noread.cu").write_text("cudaFree(p);\n")
    os.chmod(project / "noread.cu", 0)
    (project / "link.cu").symlink_to("/etc/hostname")
    out = tmp_path / "out"
    r = invoke("migrate", project, "-o", out, "--json", tmp_path / "run.json")
    os.chmod(project / "noread.cu", 0o644)
    assert r.exit_code == 1
    lines = r.output
    if os.geteuid() != 0:  # root can read anything
        assert "noread.cu:1:1: error: MU0001: cannot read file" in lines
    assert "binary.cu:1:1: note: MU0002" in lines
    assert "empty.cu:1:1: note: MU0006" in lines
    assert "__init__.py" not in lines and (out / "pkg" / "__init__.py").read_bytes() == b""
    assert "latin1.cu:1:1: warning: MU0003: 1 byte(s)" in lines
    assert "broken.cu:2:6: error: MU0005" in lines and "broken.cu:3:1: error: MU0004" in lines
    assert "link.cu:1:1: note: MU0010" in lines
    assert (out / "latin1.mu").read_bytes() == b"// caf\xe9\nmusaFree(p);\n"
    assert (out / "broken.mu").read_text().startswith("musaFree(p);")
    assert (out / "binary.cu").read_bytes() == b"\x7fELF\0\0cudaMalloc"
    assert (out / "main.mu").exists()
    assert not (out / "link.cu").exists()


def test_file_vanishing_mid_run(project, tmp_path, monkeypatch):
    from musify import runner

    real = runner._read

    def vanish(job, result, shown):
        if job.rel == "main.cu":
            os.unlink(job.abspath)
        return real(job, result, shown)

    monkeypatch.setattr(runner, "_read", vanish)
    r = invoke("migrate", project, "-o", tmp_path / "out")
    assert r.exit_code == 1 and "main.cu:1:1: error: MU0008: file disappeared" in r.output
    assert (tmp_path / "out" / "util.muh").exists()


def test_missing_input_path(tmp_path):
    r = invoke("migrate", tmp_path / "nope.cu", "--diff")
    assert r.exit_code == 1 and "MU0001" in r.output


def test_check_mode(project):
    r = invoke("check", project / "util.cuh")
    assert r.exit_code == 1 and "would be migrated" in r.output
    clean = project / "clean.h"
    clean.write_text("int x;\n")
    assert invoke("check", clean).exit_code == 0


def test_config_file_excludes(project, tmp_path):
    (project / ".musify.toml").write_text('exclude = ["sub/*"]\n')
    r = invoke("migrate", project, "-o", tmp_path / "o")
    assert r.exit_code == 0 and not (tmp_path / "o" / "sub").exists()
    (project / ".musify.toml").write_text('exclud = ["sub/*"]\n')
    r = invoke("migrate", project, "-o", tmp_path / "o2")
    assert r.exit_code == 2 and ".musify.toml:1: exclud: unknown key" in r.output


def test_report_rerenders_a_record(project, tmp_path):
    invoke("migrate", project, "-o", tmp_path / "o", "--json", tmp_path / "run.json")
    r = invoke("report", tmp_path / "run.json", "--format", "csv")
    assert r.exit_code == 0 and r.output.splitlines()[0].startswith("path,output_path,status")
    assert r.output.splitlines()[-1].startswith("TOTAL,")


def test_statistics_count_what_was_left(tmp_path):
    src = tmp_path / "s"
    src.mkdir()
    (src / "a.cu").write_text("cudaMalloc(&p, 4);\ncudaFooBar(1);\ncudaFooBar(2);\n")
    r = invoke("migrate", src, "--diff", "--json", tmp_path / "run.json")
    assert r.exit_code == 0
    totals = json.loads((tmp_path / "run.json").read_text())["totals"]
    assert totals["references_converted"] == 1 and totals["references_unconverted"] == 2
    assert totals["unconverted_names"] == {"cudaFooBar": 2}
    assert totals["conversion_percent"] == 33.33
