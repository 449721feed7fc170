"""`musify verify` on real builds: a faithful port passes; a corrupted one fails with the first
difference; one that still calls a CUDA name is build-fail-port at that line; originals that loop,
allocate without bound or write outside their folder end with a clear verdict and the run goes on.
All in one verify run (two programs at a time) to keep the number of emulator builds down."""

from __future__ import annotations

import shutil

from verify_support import INPUTS, ported, requires_cxx

from musify.sandbox import namespaces_available
from musify.verify.command import load_settings
from musify.verify.flow import verify_record

pytestmark = requires_cxx


def test_verdicts_for_good_corrupted_broken_and_misbehaving_programs(tmp_path):
    outside = tmp_path / "outside.txt"
    inputs = tmp_path / "inputs"
    for name in ("tiny", "tiny_index", "tiny_swap", "tiny_cuda_name"):
        shutil.copytree(INPUTS / "tiny", inputs / name)
    original, port, record = ported(tmp_path, inputs / "tiny", inputs / "tiny_index", inputs / "tiny_swap",
                                    inputs / "tiny_cuda_name", INPUTS / "misbehave")
    (original / ".musify.toml").write_text(
        f'[verify]\nmemory_limit_gib = 0.5\n[[verify.programs]]\nname = "misbehave/escape"\nargs = ["{outside}"]\n')
    good = (port / "tiny" / "add.mu").read_text()
    (port / "tiny_index" / "add.mu").write_text(good.replace("out[i] = a[i] + 2.0f", "out[i] = a[i / 2] + 2.0f"))
    swapped = good.replace("musaMemcpyHostToDevice", "@").replace("musaMemcpyDeviceToHost", "musaMemcpyHostToDevice")
    (port / "tiny_swap" / "add.mu").write_text(swapped.replace("@", "musaMemcpyDeviceToHost"))
    (port / "tiny_cuda_name" / "add.mu").write_text(good.replace("musaFree(db)", "cudaFree(db)"))
    settings = load_settings(str(original), archs=("mp_31",), time_limit=3.0, jobs=2)

    section = verify_record(record, port, settings)
    got = {p["name"]: p["archs"]["mp_31"] for p in section["programs"]}
    assert got["tiny"]["verdict"] == "pass", got["tiny"]

    assert got["tiny_index"]["verdict"] == "fail"
    first = got["tiny_index"]["first_difference"]
    assert first["where"] == "stdout line 2" and first["original"].startswith("sum ") and "sum" in first["diff"]

    # swapped copy directions: a GPU copies by the kind it is told, so the emulator refuses a kind
    # that contradicts the pointers and the port's output differs
    assert got["tiny_swap"]["verdict"] == "fail", got["tiny_swap"]

    line = next(n for n, t in enumerate(good.splitlines(), 1) if "musaFree(db)" in t)
    broken = got["tiny_cuda_name"]
    assert broken["verdict"] == "build-fail-port"
    assert any(e["line"] == line and e["path"].endswith("tiny_cuda_name/add.mu") and "cudaFree" in e["message"]
               for e in broken["errors"]), broken
    f = next(f for f in record.files if f.path.endswith("tiny_cuda_name/add.cu"))
    assert any(d.id == "MU5001" and d.line == line for d in f.diagnostics)

    assert got["misbehave/loop"]["verdict"] == "original-fails"
    assert "did not finish within 3 s" in got["misbehave/loop"]["reason"]
    assert got["misbehave/alloc"]["verdict"] == "original-fails"
    assert "memory limit" in got["misbehave/alloc"]["reason"]
    if namespaces_available():  # without them a write outside is not prevented (docs/sandbox.md)
        assert got["misbehave/escape"]["verdict"] == "original-fails"
        assert "Read-only file system" in got["misbehave/escape"]["reason"]
        assert not outside.exists()
    assert section["exit_code"] == 1  # three port failures; the originals that fail are not counted
    expected = {"build-fail-port": 1, "fail": 2, "original-fails": 3, "pass": 1} if namespaces_available() else \
        {"build-fail-port": 1, "fail": 2, "original-fails": 2, "pass": 2}
    assert section["totals"]["verdicts"] == expected
