"""The shortcuts of a file's way through a run (read, plan, passes' context, diagnostics,
include resolution) give what the plain ways give."""

from __future__ import annotations

import dataclasses
import os
import pickle
import posixpath
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from musify import diagnostics, renames, runner
from musify.diagnostics import Diagnostic
from musify.discover import Found, join_rel, read_regular_stated
from musify.frontend.scanner import LineIndex, Scan
from musify.options import Options
from musify.passes import includes
from musify.passes._base import PassContext, ProjectInfo
from musify.passes.includes import build_project_info, resolve_project_include


@pytest.mark.parametrize("size", [0, 1, 4095, 65536, 65537, 300_000])
def test_a_read_gives_every_byte_and_the_stat_of_what_was_read(tmp_path, size):
    path = tmp_path / "a.cu"
    data = bytes(i % 251 for i in range(size))
    path.write_bytes(data)
    os.chmod(path, 0o640)
    got, st = read_regular_stated(str(path))
    assert got == data
    assert (st.st_size, st.st_mode & 0o777, st.st_ino) == (size, 0o640, os.stat(path).st_ino)


def test_a_file_whose_stat_says_zero_bytes_is_read_to_its_end():
    if not os.path.exists("/proc/self/status"):
        pytest.skip("no /proc")
    got, st = read_regular_stated("/proc/self/status")
    assert st.st_size == 0 and b"Name:" in got and got.endswith(b"\n")


def test_the_rename_sniff_never_waits_on_a_fifo(tmp_path):
    fifo = tmp_path / "k.cu"
    os.mkfifo(fifo)
    answer = []
    t = threading.Thread(target=lambda: answer.append(renames.keeps_name(Found(str(tmp_path), "k.cu", "cuda-source"))),
                         daemon=True)
    t.start()
    t.join(10)
    assert answer == [False]  # not binary: the runner reports what it is


def test_the_rename_sniff_tells_binaries_from_wide_text(tmp_path):
    (tmp_path / "bin.cu").write_bytes(b"ELF\0\0\1")
    (tmp_path / "wide.cu").write_bytes("\ufeffint x;".encode("utf-16-le"))
    (tmp_path / "text.cu").write_bytes(b"int x;\n")
    found = {name: Found(str(tmp_path), name, "cuda-source") for name in ("bin.cu", "wide.cu", "text.cu")}
    assert {n: renames.keeps_name(f) for n, f in found.items()} == {"bin.cu": True, "wide.cu": False, "text.cu": False}
    assert renames.keeps_name(found["bin.cu"], str(tmp_path / "text.cu")) is False  # the given path is read


def _sniff_cases(tmp_path):
    """Files of every kind the rename decision tells apart, each with a new name that is or is
    not taken (on disk, or only in the listing)."""
    contents = {
        "bin.cu": b"ELF\0\0\1", "text.cu": b"int x;\n", "empty.cu": b"",
        "wide16.cu": "\ufeffint x;".encode("utf-16-le"), "wide32.cu": "\ufeffint x;".encode("utf-32-le"),
        "odd16.cu": b"\xff\xfe\0", "be16.cuh": "\ufeffint;".encode("utf-16-be"), "be32.cuh": "\ufeffint;".encode("utf-32-be"),
        "late.cu": b"x" * 9000 + b"\0", "early.cu": b"x" * 8191 + b"\0", "taken.cu": b"\0",
        "listed.cu": b"int y;", "gone.cu": None, "fifo.cu": "fifo", "dir.cu": "dir",
    }
    for name, data in contents.items():
        path = tmp_path / name
        if data == "fifo":
            os.mkfifo(path)
        elif data == "dir":
            path.mkdir()
        elif data is not None:
            path.write_bytes(data)
    (tmp_path / "taken.mu").write_bytes(b"")
    os.symlink("nowhere", tmp_path / "text.mu.cu")  # a dangling link takes its name too
    items = [(Found(str(tmp_path), name, "cuda-source"), name.rsplit(".", 1)[0] + ".mu", str(tmp_path / name))
             for name in contents]
    items.append((Found(str(tmp_path), "text.mu.cu", "cuda-source"), "text.mu.mu", str(tmp_path / "text.cu")))
    items.append((Found(str(tmp_path), "zlink.cu", "cuda-source"), "text.mu.cu", str(tmp_path / "text.cu")))
    return items, {(str(tmp_path), "listed.mu")}


def test_the_batched_rename_probe_answers_as_each_file_asked_alone(tmp_path):
    items, existing = _sniff_cases(tmp_path)
    reference = [renames.target_taken(f, target, existing) or renames.keeps_name(f, path) for f, target, path in items]
    assert renames.keep_names(items, existing) == reference
    assert reference.count(True) == 6  # three binaries (an odd-length UTF-16 mark is none), two taken names, a link
    if renames._NATIVE is not None:  # the compiled probe is what answered above; a NUL in a path is answered by Python
        bad = (Found(str(tmp_path), "a\0b.cu", "cuda-source"), "a\0b.mu", str(tmp_path / "a\0b.cu"))
        assert renames._NATIVE.probe([("x", "a\0b")]) == b"\3"
        with pytest.raises(ValueError):
            renames.keep_names([bad], existing)  # as keeps_name itself: os.open refuses the path


@pytest.mark.parametrize("root", ["/", "/srv", "/srv/tree"])
@pytest.mark.parametrize("rel", ["a.cu", "x/y/z.cuh", ".hidden/a b.cu", "."])
def test_join_rel_is_os_path_join(root, rel):
    assert join_rel(root, rel) == os.path.join(root, *rel.split("/"))
    assert Found(root, rel, "cuda-source").abspath == os.path.join(root, *rel.split("/"))


@settings(max_examples=200, deadline=None)
@given(text=st.text(alphabet="ab\n\r", max_size=80), data=st.data())
def test_positions_in_bulk_are_positions_one_by_one(text, data):
    lines = LineIndex(text)
    offsets = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=20)))
    assert lines.positions(offsets) == [lines.position(o) for o in offsets]


def test_a_context_with_another_scan_keeps_every_other_field():
    ctx = PassContext("k.cu", "int x;\n", Scan(), None, Options(), ProjectInfo(), LineIndex("int x;\n"),
                      display_path="src/k.cu", abspath="/src/k.cu")
    ctx.warn("MU1001", 0, "int")
    empty = Scan()
    clone = ctx.with_scan(empty)
    assert clone == dataclasses.replace(ctx, scan=empty) and clone.scan is empty
    assert clone.found is ctx.found and ctx.scan is not empty
    with pytest.raises(dataclasses.FrozenInstanceError):
        clone.path = "other"  # type: ignore[misc]


def test_a_diagnostic_is_what_the_generated_dataclass_made():
    fields = [f.name for f in dataclasses.fields(Diagnostic)]
    reference = dataclasses.make_dataclass("Reference", [(f.name, f.type, f) for f in dataclasses.fields(Diagnostic)],
                                           frozen=True)
    values = ("MU2021", "warning", "a.cu", 3, 4, "message", "name", 3, 9, {"k": 1}, "pass:x", ((5, 6),), "confirmed")
    for args, kwargs in ((values, {}), (values[:6], {}), ((), dict(zip(fields, values)))):
        ours, theirs = Diagnostic(*args, **kwargs), reference(*args, **kwargs)
        assert [getattr(ours, n) for n in fields] == [getattr(theirs, n) for n in fields]
    a, b = Diagnostic(*values[:6]), Diagnostic(*values[:6])
    assert a.args == {} and a.args is not b.args and a == b and hash(a) == hash(b)
    assert pickle.loads(pickle.dumps(a)) == a
    assert diagnostics.with_changes(a, verify="cleared").verify == "cleared"
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.line = 9  # type: ignore[misc]


def test_a_made_diagnostic_keeps_plain_arguments_and_renders_others():
    class Name(str):
        pass

    d = diagnostics.make("MU1001", "a.cu", 1, 2, name=Name("cudaFoo"), width=64, ok=True, none=None, where=Name("p"),
                         obj=object)
    assert d.args["width"] == 64 and d.args["ok"] is True and d.args["none"] is None
    assert d.args["where"] == "p" and type(d.args["obj"]) is str


_PARTS = st.sampled_from(["a", "b.cuh", ".", "..", "", "c.d", "..e"])


@settings(max_examples=300, deadline=None)
@given(directory=st.sampled_from(["", "src", "src/sub", "lib/x"]), parts=st.lists(_PARTS, min_size=1, max_size=4),
       lead=st.sampled_from(["", "/"]))
def test_an_include_resolves_as_by_normalised_paths(directory, parts, lead):
    written = lead + "/".join(parts)
    files = ["src/b.cuh", "src/sub/a", "b.cuh", "lib/x/c.d", "a", "src/a"]
    project = build_project_info(files, {})
    includes._RESOLVED.clear()
    beside = posixpath.normpath(posixpath.join(directory, written))
    expected = beside if beside in project.files else (project.suffix_index.get(posixpath.normpath(written)) or (None,))[0]
    assert resolve_project_include(project, f"{directory}/k.cu" if directory else "k.cu", written) == expected
    memos = ({}, {})  # the pass's own look-up (its memos by path and by (directory, path)), asked twice
    assert includes._target(project, memos, directory, written) == expected
    assert includes._target(project, memos, directory, written) == expected
    assert includes._dirname(f"{directory}/k.cu" if directory else "k.cu") == directory


def test_the_record_counts_are_remembered_per_ruleset():
    first, second = object(), object()
    memo = runner._counted_fields(first)
    memo["marker"] = ()
    assert runner._counted_fields(first) is memo
    assert "marker" not in runner._counted_fields(second)


def test_a_listing_without_stamps_is_the_listing_with_them_less_the_stamps(tmp_path):
    from musify.discover import discover

    (tmp_path / "src" / "deep").mkdir(parents=True)
    (tmp_path / "src" / "a.cu").write_bytes(b"int a;")
    (tmp_path / "src" / "deep" / "b.cuh").write_bytes(b"")
    (tmp_path / "CMakeLists.txt").write_text("project(x)\n")
    (tmp_path / "bin.o").write_bytes(b"\0")
    os.mkfifo(tmp_path / "pipe.cu")  # a FIFO is still reported as what it is
    os.symlink("src/a.cu", tmp_path / "link.cu")
    os.symlink("src", tmp_path / "dirlink")
    (tmp_path / ".musify-1.tmp").write_bytes(b"")  # musify's own
    full = discover([str(tmp_path)])
    bare = discover([str(tmp_path)], stamps=False)
    assert all(f.stamp is not None for f in full.files if f.kind not in ("special", "missing") and f.symlink is None)
    assert [dataclasses.replace(f, stamp=None) for f in full.files] == bare.files
    assert full.owned == bare.owned
    assert {f.rel: f.kind for f in bare.files}["pipe.cu"] == "special"


_FIELD = st.tuples(st.sampled_from(["musaMalloc", "x", "é\"\\", ""]),
                   st.sampled_from(["cudaMalloc", "cudnnCreate", "include:cuda.h", "nvtxRangePushA", "noSuchRule"]),
                   st.sampled_from(["runtime", "", "cudnn"]), st.sampled_from(["function", "", "header"]),
                   st.sampled_from([False, True, 0, 1]), st.sampled_from(["reference", "include", "shim-include"]))


@settings(max_examples=200, deadline=None)
@given(st.lists(_FIELD, max_size=12, unique=True), st.lists(_FIELD, max_size=4))
def test_new_field_tuples_are_counted_as_one_by_one(fields, known):
    """`_count_new` (one loop, the tails by `tails`) leaves the memo as `_count_fields` called for
    each missing tuple does, whatever the memo held before; `tails` is `tail_json` of each."""
    from musify.packed_edits import tail_json, tails
    from musify.rules import load_ruleset

    rules = load_ruleset()
    batch = {key: runner._count_fields({}, key, rules) for key in known}
    one_by_one = dict(batch)
    runner._count_new(batch, fields, rules)
    for key in fields:
        one_by_one.get(key) or runner._count_fields(one_by_one, key, rules)
    assert batch == one_by_one
    assert tails(fields) == [tail_json(key) for key in fields]


@given(st.lists(st.sampled_from(["a", "b", "/", "", "x.cu", ".", ".."]), max_size=6).map("".join))
def test_the_include_pass_dirname_is_posixpath_dirname(path):
    assert includes._dirname(path) == posixpath.dirname(path)
