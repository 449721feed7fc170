"""The shortcuts of a run's serial part outside the per-file loop give what their references give.

Discovery (`classify`'s extension look-up), planning (`_split_ext`, the shown paths),
the project's suffix index, `finalise`'s fast path, the totals summed in C (`_crecord.sums`) and
the collector's start-up hold: each is compared here with the code it stands for, on generated
names, paths and results, so a test fails if a shortcut ever disagrees.
"""

from __future__ import annotations

import gc
import json
import os
import pickle
import random
from collections import Counter

import pytest

from musify import api, collector, discover, finalise, records
from musify.diagnostics import make
from musify.options import Options
from musify.passes.includes import build_project_info
from musify.passes.suffix_index import SuffixIndex
from musify.records import FileResult, compute_totals

NAME_CHARS = "ab./\\_-" + "cuhCUHpxinlmk"
EXTS = [".cu", ".cuh", ".mu", ".muh", ".c", ".cc", ".cpp", ".CPP", ".h", ".H", ".hpp", ".inl", ".cuinl", ".py",
        ".txt", ".in", ".cmake", ".sh", ".toml", "", "."]
NAMES = ["CMakeLists.txt", "Makefile", "makefile", "GNUmakefile", "pyproject.toml", "requirements.txt",
         "dev-requirements.in", "constraints.txt", ".cu", "..cu", "a..cu", ".a.cu", "x.cu\\y", "a.b\\.cu", "a/.cu",
         "d.cu/x", "d/..cuh", "d/a..h", "d/.h"]


def _names(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    out = list(NAMES)
    for _ in range(count):
        stem = "".join(rng.choice(NAME_CHARS) for _ in range(rng.randrange(0, 6)))
        out.append(stem + rng.choice(EXTS))
    return out


def _reference_classify(path: str) -> str:
    """`classify` as it was, whole: the name's extension by `os.path.splitext` every time."""
    return discover._classify(path)


@pytest.mark.parametrize("seed", range(3))
def test_classify_agrees_with_its_reference(seed):
    for name in _names(3000, seed):
        assert discover.classify(name) == _reference_classify(name), name


@pytest.mark.parametrize("seed", range(3))
def test_split_ext_agrees_with_splitext(seed):
    rng = random.Random(seed)
    names = _names(2000, seed)
    for name in names:
        rel = "/".join(rng.choice(names).replace("/", "") or "d" for _ in range(rng.randrange(0, 3)))
        rel = f"{rel}/{name}" if rel else name
        assert api._split_ext(rel) == os.path.splitext(rel), rel


def test_walk_lists_what_the_tree_holds(tmp_path):
    """Every kind of entry, in the order and with the kinds a stat-based look gives."""
    (tmp_path / "sub" / "deeper").mkdir(parents=True)
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "x.cu").write_text("int x;")
    for rel in ("a.cu", "a-b.cuh", "sub/k.cpp", "sub/deeper/z.h", "sub/CMakeLists.txt", "..cu", "b.CU"):
        (tmp_path / rel).write_text("int x;")
    (tmp_path / ".musify-123.tmp").write_text("")
    (tmp_path / "link.cu").symlink_to("a.cu")
    (tmp_path / ".gitignore").write_text("ignored.cu\n")
    (tmp_path / "ignored.cu").write_text("int x;")
    for stamps in (False, True):
        found = discover.discover([str(tmp_path)], ("*.CU",), True, stamps=stamps)
        rels = [f.rel for f in found.files]
        assert rels == sorted(rels)
        assert rels == ["..cu", ".gitignore", "a-b.cuh", "a.cu", "link.cu", "sub/CMakeLists.txt",
                        "sub/deeper/z.h", "sub/k.cpp"]
        kinds = {f.rel: f.kind for f in found.files}
        assert kinds == {r: discover._classify(r) for r in rels}
        assert [os.path.basename(p) for p in found.owned] == [".musify-123.tmp"]
        assert found.files[rels.index("link.cu")].symlink == "a.cu"
        assert all((f.stamp is not None) == (stamps and f.symlink is None) for f in found.files)


def _reference_project(relpaths: list[str], renames: dict[str, str]) -> dict:
    index: dict[str, list[str]] = {}
    for rel in sorted(relpaths):
        parts = rel.split("/")
        for i in range(len(parts)):
            index.setdefault("/".join(parts[i:]), []).append(rel)
    return {k: tuple(v) for k, v in index.items()}


@pytest.mark.parametrize("seed", range(3))
def test_suffix_index_agrees_with_its_reference(seed):
    rng = random.Random(seed)
    parts = ["a", "b", "include", "x.cuh", "y.h", "lib", ""]  # "" makes empty components too
    relpaths = list({"/".join(rng.choice(parts) for _ in range(rng.randrange(1, 5))) for _ in range(500)})
    info = build_project_info(relpaths, {})
    assert info.suffix_index == _reference_project(relpaths, {})
    assert list(info.suffix_index) == list(_reference_project(relpaths, {}))


@pytest.mark.parametrize("seed", range(3))
def test_suffix_index_answers_each_suffix_as_the_whole_table_has_it(seed):
    """Asked before the table is made whole, one suffix at a time (files listed twice, paths with
    empty components, suffixes no file has): what the reference's table holds."""
    rng = random.Random(seed)
    parts = ["a", "b", "include", "x.cuh", "y.h", "lib", ""]
    relpaths = list({"/".join(rng.choice(parts) for _ in range(rng.randrange(1, 5))) for _ in range(500)})
    relpaths += relpaths[:7]
    want = _reference_project(relpaths, {})
    index = SuffixIndex(relpaths)
    asked = [*want, *("/".join(rng.choice(parts) for _ in range(rng.randrange(0, 5))) for _ in range(300)), 3, None]
    for suffix in rng.sample(asked, len(asked)) * 2:  # (twice: the remembered answers)
        assert index.get(suffix) == want.get(suffix), suffix
        assert (suffix in index) == (suffix in want)
    assert index._whole is None  # nothing so far made the whole table
    assert pickle.loads(pickle.dumps(index)) == want == index and len(index) == len(want)


def _result(rng: random.Random, i: int, partial: bool = True) -> FileResult:
    diags = [make(rng.choice(["MU1004", "MU2010", "MU0011"]), f"f{i}.cu", rng.randrange(1, 4), rng.randrange(1, 4),
                  target="t.mu") for _ in range(rng.choice([0, 0, 1, 1, 2, 3]))]
    names = ["cuFoo", "cuBar", "cudaX", "cuZ"]
    unconverted = {n: rng.randrange(1, 3) for n in rng.sample(names, rng.randrange(0, 3))}
    if rng.random() < 0.7:
        unconverted = dict(sorted(unconverted.items()))
    refs = {"converted": rng.randrange(5), "unconverted": rng.randrange(3)}
    if partial and rng.random() < 0.1:  # finalise adds it
        del refs["unconverted"]
    r = FileResult(f"f{i}.cu", f"f{i}.mu", "cuda-source", rng.choice(["migrated", "unchanged", "failed"]),
                   f"f{i}.cu", edit_count=rng.randrange(9), references=refs, include_rewrites=rng.randrange(3),
                   edits_by_library={"cuda": rng.randrange(1, 4)} if rng.random() < 0.5 else {},
                   edits_by_kind={k: 1 for k in rng.sample(["rename", "include"], rng.randrange(3))},
                   renamed={n: 1 for n in rng.sample(names, rng.randrange(3))}, unconverted=unconverted,
                   diagnostics=diags, lines_total=rng.randrange(100), bytes_total=rng.randrange(1000),
                   facts={"kernels": rng.randrange(2)} if rng.random() < 0.3 else {})
    r.declared = sorted(rng.sample(names, rng.randrange(0, 3)))
    r.pending_unknown = [(rng.choice(names), rng.randrange(1, 5), rng.randrange(1, 5))
                         for _ in range(rng.choice([0, 0, 1, 3]))]
    return r


def _everything(r: FileResult) -> tuple:
    return json.dumps(r.to_json()), r.declared, r.pending_unknown, list(r.unconverted), list(r.references)


@pytest.mark.parametrize("suppress", [(), ("MU2010",)])
@pytest.mark.parametrize("seed", range(4))
def test_finalise_agrees_with_its_reference(seed, suppress):
    rng = random.Random(seed)
    files = [_result(rng, i) for i in range(400)]
    before = [_everything(f) for f in files]
    declared = set()
    for f in files:
        declared.update(f.declared)
    ranges = finalise.suppression_ranges(suppress)
    got = finalise.finalise(files, suppress)
    for f, new in zip(files, got):
        # (a file with nothing pending, declared, suppressed or reported that some file defines
        # always came back as it was)
        untouched = not (f.pending_unknown or f.declared or ranges) and declared.isdisjoint(f.unconverted)
        ref = f if untouched else finalise._finalise_full(f, declared, ranges)
        assert _everything(new) == _everything(ref)
    assert [_everything(f) for f in files] == before  # the runner's results left as they were


def _reference_totals(files: list[FileResult]) -> dict:
    native, records._NATIVE = records._NATIVE, None
    try:
        return compute_totals(files)
    finally:
        records._NATIVE = native


@pytest.mark.parametrize("seed", range(4))
def test_totals_agree_with_their_reference(seed):
    rng = random.Random(seed)
    files = [_result(rng, i, partial=False) for i in range(300)]
    if seed == 1:  # a count that is not an exact dict: the Python path answers
        files[7].renamed = Counter(files[7].renamed)
    if seed == 2:
        files[3].edit_count = True  # what `sum` makes of a bool, and of a float
        files[4].lines_total = 2.5
    got, ref = compute_totals(files), _reference_totals(files)
    assert json.dumps(got) == json.dumps(ref)
    assert compute_totals([]) == _reference_totals([])


@pytest.mark.parametrize("odd", [True, 2**62, 2**63, -(2**64), 1.5])
def test_totals_of_odd_counts_agree_with_their_reference(odd):
    """The sums kept in C as 64-bit integers: a bool, a count near or past their range, a float
    (the Python path) give the reference's totals."""
    rng = random.Random(5)
    files = [_result(rng, i, partial=False) for i in range(40)]
    files[2].renamed = {"cudaMalloc": odd, **files[2].renamed}
    files[9].renamed = {"cudaMalloc": odd}
    files[5].facts = {"kernels": odd}
    files[6].bytes_total = odd
    got, ref = compute_totals(files), _reference_totals(files)
    assert json.dumps(got) == json.dumps(ref)


def test_totals_of_labels_met_again_as_other_objects_agree_with_their_reference():
    """The C sums remember a label's place by its address: a label met again as another object
    with the same text, labels of many files (more than the places remembered), and freed objects
    whose addresses come back, all sum as the reference sums them."""
    rng = random.Random(7)
    files = [_result(rng, i, partial=False) for i in range(300)]
    for i, f in enumerate(files):
        label, same = "cuda" + str(i % 97), ("cuda" + str(i))[:4] + "Malloc"  # (other objects each time)
        f.renamed = {label: 1, same: 2} if i % 2 else {"cudaMalloc": 2, label: 1} if i % 3 else dict(f.renamed)
        f.facts = {("ker" + str(i))[:3] + "nels": i % 5, "launches": 1}
    got, ref = compute_totals(files), _reference_totals(files)
    assert json.dumps(got) == json.dumps(ref)


class _Doubled(FileResult):
    """A result whose `edit_count` is a property (a data descriptor: read before its __dict__)."""

    @property
    def edit_count(self):
        return 2 * self.__dict__.get("edit_count", 0)

    @edit_count.setter
    def edit_count(self, value):
        self.__dict__["edit_count"] = value


def test_totals_read_attributes_as_getattr_does():
    """The totals read a result's attributes from its __dict__ only where getattr would: a
    subclass's property, a field left to its class default, mixed classes in one list."""
    rng = random.Random(7)
    files = [_result(rng, i, partial=False) for i in range(30)]
    for k in (3, 4, 20):
        doubled = _Doubled(files[k].path, files[k].output_path, files[k].kind, files[k].status)
        doubled.edit_count = 5
        files[k] = doubled
    del files[8].__dict__["lines_changed"]  # (the class's default, 0)
    got, ref = compute_totals(files), _reference_totals(files)
    assert json.dumps(got) == json.dumps(ref)
    assert got["edits"] == sum(f.edit_count for f in files)


def test_totals_raise_what_the_reference_raises():
    f = _result(random.Random(0), 0)
    f.references = {"converted": 1}  # no "unconverted": a KeyError either way
    with pytest.raises(KeyError):
        compute_totals([f])
    with pytest.raises(KeyError):
        _reference_totals([f])


def test_start_up_hold_leaves_a_test_process_alone():
    assert gc.isenabled()
    collector.hold_start_up()  # not the program: nothing held
    assert gc.isenabled()
    collector.release_start_up()
    assert gc.isenabled()


def test_start_up_hold_and_release(monkeypatch):
    monkeypatch.setattr(collector, "is_program", lambda: True)
    try:
        collector.hold_start_up()
        assert not gc.isenabled()
        collector.release_start_up()
        assert gc.isenabled()
    finally:
        gc.enable()


def test_plan_shows_paths_as_given(tmp_path, monkeypatch):
    (tmp_path / "t" / "s").mkdir(parents=True)
    for rel in ("t/a.cu", "t/s/b.cuh", "t/s/b.muh", "t/c\nd.cu", "x.cu"):
        (tmp_path / rel).write_text("int x;")
    monkeypatch.chdir(tmp_path)
    for inputs in (["t"], ["t/"], ["./t", "x.cu"], [str(tmp_path / "t")], ["."]):
        found = discover.discover(inputs, stamps=False)
        plan = api._plan(found.files, inputs, Options(), api._out_prefixes(inputs))
        roots = api._display_roots(inputs)
        for f, job in plan:
            assert job.display == api._display(inputs, f, roots)
            assert job.abspath == f.abspath
        outs = {f.rel: job.output_rel for f, job in plan}
        if inputs == ["t"]:
            assert outs["a.cu"] == "a.mu" and outs["s/b.cuh"] == "s/b.cuh"  # b.muh is taken (MU0011)


@pytest.mark.parametrize("native", [True, False])
def test_keep_names_by_the_listing_agrees_with_the_file_system(tmp_path, monkeypatch, native):
    """New names answered from the discovery's listing (`Discovery.unlisted`) are taken exactly
    where an lstat finds them: listed files, folders, excluded, ignored and musify's own names."""
    from musify import renames

    if not native:
        monkeypatch.setattr(renames, "_NATIVE", None)
    t = tmp_path / "t"
    (t / "s").mkdir(parents=True)
    for rel in ("a.cu", "b.cu", "b.mu", "c.cu", "c.mu", "d.cu", "e.cu", "e.mu", "s/f.cuh", "s/f.muh", "g.cu",
                "s/h.cuh", "i.cu", ".git/i.mu", "k.cu"):
        (t / rel).parent.mkdir(parents=True, exist_ok=True)
        (t / rel).write_text("int x;")
    (t / "d.mu").mkdir()
    (t / "g.mu").symlink_to("a.cu")
    (t / ".gitignore").write_text("e.mu\n")
    (t / "s" / "h.cuh").write_bytes(b"\0binary")
    (t / "k.mu").symlink_to("nowhere")  # a dangling link: lexists says taken
    inputs = [str(t), str(t / "s" / "f.cuh")]
    found = discover.discover(inputs, ("c.mu",), True, stamps=False)
    existing = {(f.root, f.rel) for f in found.files}
    items = [(f, f.rel[:f.rel.rfind(".")] + (".mu" if f.rel.endswith(".cu") else ".muh"), f.abspath)
             for f in found.files if f.rel.endswith((".cu", ".cuh"))]
    reference = [renames.target_taken(f, target, existing) or renames.keeps_name(f, path) for f, target, path in items]
    assert renames.keep_names(items, existing, found.unlisted) == reference
    assert renames.keep_names(items, existing) == reference
    kept = {f.rel for (f, _, _), keep in zip(items, reference) if keep}
    assert kept == {"b.cu", "c.cu", "d.cu", "e.cu", "s/f.cuh", "f.cuh", "g.cu", "s/h.cuh", "k.cu"}
