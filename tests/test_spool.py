"""The spool (musify/spool.py): a run whose rendered edit lists waited on disk writes the record a
run holding them in memory writes, byte for byte; a spool that cannot be written costs nothing but
memory; a spool that cannot be read back fails the record's write, which leaves no partial file;
and the spool itself never appears in the folder it lives in."""

from __future__ import annotations

import errno
import json
import os
import pickle
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from musify import spool as spool_mod
from musify.api import migrate
from musify.diagnostics import make
from musify.file_tools import atomic_write
from musify.options import Options
from musify.packed_edits import PackedEdits
from musify.records import FileResult, RunRecord
from musify.spool import Spool, SpooledEdits

REPO = Path(__file__).resolve().parents[1]
# MU1001 (decided across the run), hazards, renames, a header included by a renamed name
CORPORA = ("curand_device_pi", "warp32_only", "multi_file", "library_tour")


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("spooltree")
    for name in CORPORA:
        shutil.copytree(REPO / "corpora" / name, root / name)
    taken = root / "multi_file" / "taken.cu"  # renamed to a name already taken: MU0011 after arrival
    taken.write_text("__global__ void k() {}\n")
    (root / "multi_file" / "taken.mu").write_text("int x;\n")
    # a CUDA-looking name no rule knows (MU1001), and one the project itself declares (not reported)
    (root / "unknown.cu").write_text("void f() { cudaMadeUpCall(1); cudaOwnHelper(2); }\n")
    (root / "own.cuh").write_text("int cudaOwnHelper(int);\n")
    return root


@pytest.fixture(autouse=True)
def spool_everything(monkeypatch):
    """Every list spooled, none left in memory under the spool's hold (`HOLD`: most test runs are
    smaller), so these tests read the spool; `test_the_hold_*` sets a hold of its own."""
    monkeypatch.setattr(spool_mod, "HOLD", 0)


def _record(tree: Path, tmp: Path, jobs: int, spool: bool, **kw) -> str:
    options = Options(cache=False, jobs=jobs, **kw)
    record, _ = migrate([str(tree)], options, "none", spool=str(tmp) if spool else None)
    return record.dumps(deterministic=True)


@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize("kw", [{}, {"suppress": ("MU2020-MU2029",)}, {"json_lite": True}])
def test_a_spooled_record_is_the_record_held_in_memory(tree, tmp_path, jobs, kw):
    plain = _record(tree, tmp_path, 1, spool=False, **kw)
    assert '"id":"MU1001"' in plain or kw  # the run-level finaliser changed some entries
    assert _record(tree, tmp_path, jobs, spool=True, **kw) == plain
    assert not [n for n in os.listdir(tmp_path) if "spool" in n]  # never a name in the folder


def test_spooled_results_read_and_pickle_as_before(tree, tmp_path):
    kept, _ = migrate([str(tree)], Options(cache=False), "none", spool=str(tmp_path))
    held, _ = migrate([str(tree)], Options(cache=False), "none")
    assert [f for f in kept.files if isinstance(f.edits, SpooledEdits)]
    assert kept.to_json(deterministic=True) == held.to_json(deterministic=True)
    for a, b in zip(kept.files, held.files):
        a.seconds = b.seconds
        assert a == b
        again = pickle.loads(pickle.dumps(a))  # the incremental cache and reports pickle results
        assert type(again.edits) is not SpooledEdits and again == b
        assert again.iter_json(True).__next__() is not None
        assert "".join(again.iter_json(True)) == "".join(b.iter_json(True))
        if len(a.edits or ()) > 2:
            assert a.edits[1] == b.edits[1] and a.edits[1:3] == b.edits[1:3] and list(a.edits) == list(b.edits)


def test_a_spool_that_cannot_be_written_keeps_the_rest_in_memory(tree, tmp_path, monkeypatch):
    plain = _record(tree, tmp_path, 1, spool=False)
    writes = []

    def full_disk(fd, data, offset):
        if writes:
            raise OSError(errno.ENOSPC, "No space left on device")
        writes.append(offset)
        return real(fd, data[:len(data) // 2], offset)  # a short write first, then a full disk

    real = os.pwrite
    monkeypatch.setattr(spool_mod, "FLUSH", 512)
    monkeypatch.setattr(spool_mod.os, "pwrite", full_disk)
    keepers = []
    real_open = spool_mod.open_spool

    def recording(directory):
        keeper = real_open(directory)
        keepers.append(keeper)
        return keeper

    monkeypatch.setattr("musify.api.open_spool", recording)
    assert _record(tree, tmp_path, 1, spool=True) == plain
    assert keepers[0].broken and writes


def test_a_spool_that_cannot_be_read_leaves_no_partial_record(tree, tmp_path, monkeypatch):
    record, _ = migrate([str(tree)], Options(cache=False), "none", spool=str(tmp_path))
    target = tmp_path / "out" / "run.json"
    target.parent.mkdir()

    def broken(self, at, size):
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(Spool, "read", broken)
    with pytest.raises(OSError):
        atomic_write(str(target), record.iter_bytes())
    assert os.listdir(target.parent) == []  # neither the record nor its temporary file


def test_an_entry_changed_after_its_edits_were_spooled_writes_what_it_holds_now(tmp_path):
    """The finalisers change entries after their lists were spooled (MU1001, --suppress, MU0011,
    a failed write): the record shows each entry as it is when written, spooled list and all."""
    a, b, c = (make("MU2030", "x.cu", line, 1, "cudnnCreate") for line in (3, 1, 2))
    new = make("MU1001", "x.cu", 2, 5, "curand_x")
    edits = PackedEdits.of_json(1, '[{"start":[1,1],"end":[1,5],"old":"cuda","new":"musa","rule":"r",'
                                   '"library":"l","kind":"k","category":"reference","inferred":false}]')
    result = FileResult("x.cu", "x.mu", "cuda-source", "migrated", edit_count=1, edits=edits, diagnostics=[a, b, c],
                        error='a "quoted" cause', renamed={"cudaMalloc": 2}, unconverted={"seconds": 1}, seconds=0.25)

    def plain(f: FileResult) -> str:
        return "".join(replace(f, edits=list(f.edits) if f.edits is not None else None).iter_json())

    expected = plain(result)
    spooled = Spool(str(tmp_path))
    try:
        spooled.keep(result)
        assert isinstance(result.edits, SpooledEdits)
        assert "".join(result.iter_json()) == expected
        for now in ([b, c, a], [a, new, c], [], [new]):
            changed = replace(result, diagnostics=now)
            assert "".join(changed.iter_json()) == plain(changed)
        for change in ({"status": "failed"}, {"error": None}, {"unconverted": {}}, {"seconds": 1e-7},
                       {"references": {"converted": 2, "unconverted": 9}}, {"output_path": "y.mu"},
                       {"edits": None}, {"edits": [{"start": [1, 1]}]}, {"renamed": {}}):
            changed = replace(result, **change)
            assert "".join(changed.iter_json()) == plain(changed), change
            assert "".join(changed.iter_json(True)) == plain(replace(changed, seconds=0.0))
        again = pickle.loads(pickle.dumps(result))  # the incremental cache pickles results
        assert type(again.edits) is PackedEdits and "".join(again.iter_json()) == expected
    finally:
        spooled.close()


def test_lists_read_back_out_of_order_and_across_the_window(tmp_path, monkeypatch):
    """The record reads the lists back in about the order they were kept, a window at a time:
    any order, a list longer than the window, one still in memory, all read what was put."""
    monkeypatch.setattr(spool_mod, "FLUSH", 64)
    monkeypatch.setattr(spool_mod, "WINDOW", 100)
    spooled = Spool(str(tmp_path))
    try:
        texts = [f"[{i}" + "x" * (i * 7 % 150) + "]" for i in range(60)]
        places = [(spooled.put(t), t) for t in texts]
        for at, t in places[::-1] + places[::3] + places:
            assert spooled.read(at, len(t)) == t
        assert spooled.put("é") is None  # not ASCII: the caller keeps it
    finally:
        spooled.close()


def test_the_cli_spools_beside_the_record_and_leaves_nothing(tree, tmp_path):
    from click.testing import CliRunner

    from musify.cli import main

    out = tmp_path / "rec"
    for jobs in ("1", "2"):
        result = CliRunner().invoke(main, ["migrate", str(tree), "-o", str(tmp_path / f"o{jobs}"), "-j", jobs,
                                           "--json", str(out / f"r{jobs}.json"), "-q", "--no-cache"])
        assert result.exit_code in (0, 1), result.output
    assert sorted(os.listdir(out)) == ["r1.json", "r2.json"]

    def entries(path: Path) -> list[dict]:
        return RunRecord.from_json(json.loads(path.read_text())).to_json(deterministic=True)["files"]

    assert entries(out / "r1.json") == entries(out / "r2.json")


@pytest.mark.parametrize("jobs", [1, 2])
def test_the_hold_leaves_the_first_lists_in_memory_and_the_record_as_it_was(tree, tmp_path, monkeypatch, jobs):
    """Lists left in memory up to the hold, the rest spooled: the record is the record of a run
    that spools every list and of one that spools none."""
    everything = _record(tree, tmp_path, jobs, spool=True)
    kept: list[Spool] = []
    real = spool_mod.Spool

    def recording(directory, hold=None):
        made = real(directory, hold)
        kept.append(made)
        return made

    monkeypatch.setattr(spool_mod, "Spool", recording)
    sizes = []
    for hold in (1 << 30, 3000, 0):
        monkeypatch.setattr(spool_mod, "HOLD", hold)
        record, _ = migrate([str(tree)], Options(cache=False, jobs=jobs), "none", spool=str(tmp_path))
        spooled = [f for f in record.files if isinstance(f.edits, SpooledEdits)]
        held = [f for f in record.files if type(f.edits) is PackedEdits and f.edits._n]
        assert record.dumps(deterministic=True) == everything
        assert sum(len(f.edits.text()) for f in held) <= hold
        sizes.append((len(held), len(spooled)))
    assert sizes[0][1] == 0 and sizes[2][0] == 0  # a hold bigger than the run: nothing spooled
    assert 0 < sizes[1][0] and 0 < sizes[1][1]  # a hold used up on the way: both
    assert _record(tree, tmp_path, jobs, spool=False) == everything
