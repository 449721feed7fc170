"""-j N with -o: the workers write the ports; a write that fails is still one failed file, reported
the same whatever N, and every N gives the same tree and record."""

from __future__ import annotations

import pytest

from musify.api import migrate
from musify.options import Options

KERNEL = "#include <cuda_runtime.h>\n__global__ void k{i}(float* x) {{ x[threadIdx.x] = {i}; }}\n" \
         "void run{i}(float* d) {{ cudaMalloc(&d, 4); k{i}<<<1, 1>>>(d); cudaFree(d); }}\n"


def _tree(root, n=10):
    for i in range(n):
        sub = root / f"dir{i % 3}"
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"k{i}.cu").write_text(KERNEL.format(i=i))
    (root / "notes.txt").write_text("cudaMalloc in a note\n")
    (root / "dir0" / "plain.h").write_text("int plain;\n")


def _files(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_port_that_cannot_be_written_fails_that_file_only(tmp_path, jobs):
    tree = tmp_path / "tree"
    _tree(tree)
    out = tmp_path / "out"
    (out / "dir1" / "k4.mu").mkdir(parents=True)  # a folder where a port goes
    record, _ = migrate([str(tree)], Options(cache=False, jobs=jobs), "out", str(out))
    bad = [f for f in record.files if f.status == "failed"]
    assert [f.rel for f in bad] == ["dir1/k4.cu"]
    assert bad[0].diagnostics[-1].id == "MU0009" and bad[0].error.startswith("cannot write output")
    written = _files(out)
    for f in record.files:
        if f.rel != "dir1/k4.cu":
            assert f.output_path in written, f.rel
    assert b"musaMalloc" in written["dir0/k0.mu"] and written["notes.txt"] == b"cudaMalloc in a note\n"


def test_every_n_writes_the_same_tree_and_record(tmp_path):
    tree = tmp_path / "tree"
    _tree(tree, n=24)
    seen = []
    for jobs in (1, 2, 3):
        out = tmp_path / f"out{jobs}"
        record, _ = migrate([str(tree)], Options(cache=False, jobs=jobs), "out", str(out))
        d = record.to_json(deterministic=True)
        d.pop("output")
        seen.append((_files(out), d))
    assert seen[0] == seen[1] == seen[2]
    assert len(seen[0][0]) == 26


def test_a_run_forked_from_a_process_that_imported_musify_keeps_its_workers(tmp_path):
    """A program that imports musify and forks the run (a test harness, a service that migrates
    in children) gets a working -j2: the workers take the run's process for their parent, not
    whichever process first imported musify (each took the importer for its parent and, finding
    another, left at once: the run failed with a broken pool)."""
    import os
    import sys

    _tree(tmp_path / "tree", n=40)
    pid = os.fork()
    if pid == 0:  # pragma: no cover -- the child's exit status says it
        code = 1
        try:
            sys.stderr = open(os.devnull, "w")  # noqa: SIM115
            record, _ = migrate([str(tmp_path / "tree")], Options(cache=False, jobs=2), "out", str(tmp_path / "out"))
            code = 0 if all(f.status != "failed" for f in record.files) else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert (tmp_path / "out" / "dir0" / "k0.mu").is_file()
