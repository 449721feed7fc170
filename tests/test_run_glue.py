"""The run's fixed part, done earlier or beside other work, gives what the reference order gives.

Planning asks the file system about every renamed file (`renames.keep_names`) in a second thread
while the run loads its rules and the front ends its files need (`api.beside`, `api._warm`,
`runner.prepare`); the plan of passes is kept on a compiled rule set without counting its names.
Each is compared here with the path it stands for, so a test fails if a shortcut ever disagrees.
"""

from __future__ import annotations

import shutil
import threading

import pytest

from musify import api, discover, runner
from musify.options import Options
from musify.passes import languages
from musify.rules.model import Rule, RuleSet


def _tree(root, count: int) -> None:
    """`count` renamed sources over a few folders, with a binary one (keeps its name), a taken
    new name (keeps its name) and files that are not renamed."""
    for k in range(count):
        path = root / f"d{k % 7}" / f"f{k}.{'cu' if k % 3 else 'cuh'}"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"int x{k};\n")
    (root / "d0" / "bin.cu").write_bytes(b"\x7fELF\0\0binary")
    (root / "d1" / "taken.cu").write_text("int t;\n")
    (root / "d1" / "taken.mu").write_text("int t;\n")
    (root / "d2" / "plain.cpp").write_text("int p;\n")


def _plans(root, meanwhile):
    inputs = [str(root)]
    found = discover.discover(inputs, stamps=False)
    prefixes = api._out_prefixes(inputs)
    return (api._plan(found.files, inputs, Options(), prefixes, found.unlisted),
            api._plan(found.files, inputs, Options(), prefixes, found.unlisted, meanwhile))


@pytest.mark.parametrize("count", [api.OVERLAP_MIN - 10, api.OVERLAP_MIN + 40])
def test_plan_beside_the_warm_up_is_the_plan(tmp_path, count):
    _tree(tmp_path, count)
    seen: list = []
    plain, overlapped = _plans(tmp_path, lambda files: seen.append(len(files)))
    assert overlapped == plain
    outs = {f.rel: job.output_rel for f, job in plain if job is not None}
    assert outs["d0/bin.cu"] == "d0/bin.cu" and outs["d1/taken.cu"] == "d1/taken.cu"
    assert outs["d1/f1.cu"] == "d1/f1.mu"
    # run beside the probe only where enough files are renamed to be worth a thread
    assert seen == ([len(plain)] if count + 3 >= api.OVERLAP_MIN else [])


def test_beside_answers_and_raises_after_the_join():
    order: list[str] = []

    def work():
        order.append("work")
        return 42

    assert api.beside(work, lambda: order.append("meanwhile")) == 42
    assert sorted(order) == ["meanwhile", "work"]

    done = threading.Event()

    def slow_failure():
        done.wait(5)
        raise OSError("probe failed")

    with pytest.raises(OSError, match="probe failed"):
        api.beside(slow_failure, done.set)  # the work's error, raised once it has ended

    finished: list[bool] = []

    def slow_work():
        done.wait(5)
        finished.append(True)
        return 1

    done.clear()

    def failing():
        done.set()
        raise ValueError("bad rules")

    with pytest.raises(ValueError, match="bad rules"):
        api.beside(slow_work, failing)
    assert finished == [True]  # joined before the caller's error went up


def test_prepare_leaves_failures_to_the_file(monkeypatch):
    """A front end that cannot be loaded is not an error of the run's start: the file that needs
    it fails as it always has (an internal error on its result)."""
    ruleset, options = RuleSet(), Options()
    calls: list[str] = []

    def broken(kind):
        calls.append(kind)
        raise ImportError("no such front end")

    monkeypatch.setattr(runner, "_FRONT", [None, None, broken, languages.plan, None])
    runner.prepare({"cuda-source", "python"}, ruleset, options)
    assert calls == ["cuda-source", "python"]


def test_a_warmed_run_gives_the_record_of_a_cold_one(tmp_path, monkeypatch):
    """The same run with the warm-up beside the probe and without it (`_warm` left out)."""
    _tree(tmp_path / "in", api.OVERLAP_MIN + 5)
    records = []
    out = tmp_path / "out"
    for warm in (True, False):
        if not warm:
            monkeypatch.setattr(api, "OVERLAP_MIN", 1 << 30)
        shutil.rmtree(out, ignore_errors=True)
        record, _ = api.migrate([str(tmp_path / "in")], Options(cache=False), "out", str(out))
        records.append(record.dumps(deterministic=True))
        ports = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
        records.append(ports)
    assert records[0] == records[2] and records[1] == records[3]


def test_the_plan_of_passes_reads_no_name_of_a_compiled_rule_set():
    from musify.rules.reverse import load_for

    options = Options()
    ruleset = load_for(options)
    names = ruleset.names
    if type(names) is dict:
        pytest.skip("the rules were not loaded from the compiled file")
    language = languages.language_for("cuda-source")
    ruleset.__dict__.pop("_plans", None)
    languages.plan(language, ruleset, options)
    assert names._index is not None  # still lazy: no name was read to count them
    assert languages.plan(language, ruleset, options) is languages.plan(language, ruleset, options)


def test_a_plain_rule_table_changed_directly_gets_a_new_plan():
    options = Options()
    ruleset = RuleSet()
    language = languages.language_for("cuda-source")
    first = languages.plan(language, ruleset, options)
    assert languages.plan(language, ruleset, options) is first
    ruleset.names["cudaFoo"] = Rule(cuda="cudaFoo", musa="musaFoo", kind="function", library="runtime", status="renamed")
    assert languages.plan(language, ruleset, options) is not first
    second = languages.plan(language, ruleset, options)
    ruleset.add(Rule(cuda="cudaBar", musa="musaBar", kind="function", library="runtime", status="renamed"))
    assert languages.plan(language, ruleset, options) is not second  # `add` forgets every derived table


def test_wide_codec_answers_as_its_loop_on_every_short_input():
    """The first-byte shortcut of `wide_codec` against the loop over the marks alone: every
    string of up to six bytes built from the marks' bytes and one other."""
    import itertools

    from musify.textcodec import marked_codec, wide_codec

    for size in range(7):
        for parts in itertools.product((b"\xff", b"\xfe", b"\x00", b"a"), repeat=size):
            data = b"".join(parts)
            assert wide_codec(data) == marked_codec(data), data


@pytest.mark.parametrize("cls", ["FileJob", "Found"])
def test_hand_written_inits_are_the_generated_ones(cls):
    """`FileJob` and `Found` set every field, in field order, with the fields' defaults (what the
    dataclass would generate), and stay frozen, comparable, hashable and picklable."""
    import dataclasses
    import inspect
    import pickle

    klass = runner.FileJob if cls == "FileJob" else discover.Found
    fields = dataclasses.fields(klass)
    params = list(inspect.signature(klass.__init__).parameters.values())[1:]
    assert [p.name for p in params] == [f.name for f in fields]
    assert [p.default for p in params] == [inspect.Parameter.empty if f.default is dataclasses.MISSING
                                           else f.default for f in fields]
    values = [f"v{k}" for k in range(len(fields))]
    one, two = klass(*values), klass(*values)
    assert list(vars(one)) == [f.name for f in fields] and list(vars(one).values()) == values
    assert one == two and hash(one) == hash(two) and pickle.loads(pickle.dumps(one)) == one
    assert dataclasses.replace(one, rel="x").rel == "x"
    with pytest.raises(dataclasses.FrozenInstanceError):
        one.rel = "y"  # type: ignore[misc]


def test_the_result_init_is_the_generated_one():
    """`FileResult`'s hand-written `__init__` takes the fields in order with the fields' defaults
    (a fresh container for each default factory, never one shared between results) and stores
    exactly what the dataclass's generated `__init__` would, given or defaulted."""
    import dataclasses
    import inspect
    import pickle

    from musify.records import FileResult

    fields = dataclasses.fields(FileResult)
    params = list(inspect.signature(FileResult.__init__).parameters.values())[1:]
    assert [p.name for p in params] == [f.name for f in fields]
    for p, f in zip(params, fields):
        if f.default is not dataclasses.MISSING:
            assert p.default == f.default, f.name
        else:
            assert (p.default is inspect.Parameter.empty) == (f.default_factory is dataclasses.MISSING), f.name

    def generated(*args, **given):
        out = dict(zip([f.name for f in fields], args))
        for f in fields[len(args):]:
            out[f.name] = given[f.name] if f.name in given else \
                f.default if f.default is not dataclasses.MISSING else f.default_factory()
        return out

    one, two = FileResult("p", "o", "k", "s"), FileResult("p", "o", "k", "s")
    assert vars(one) == generated("p", "o", "k", "s") and list(vars(one)) == [f.name for f in fields]
    for f in fields:
        value = getattr(one, f.name)
        if isinstance(value, (list, dict)):
            assert value is not getattr(two, f.name), f.name  # not shared
    given = {"rel": "r", "edits": None, "references": {"converted": 3, "unconverted": 1}, "facts": {"kernels": 1},
             "diagnostics": ["d"], "seconds": 1.5, "error": "e", "pending_unknown": [("n", 1, 2)]}
    assert vars(FileResult("p", "o", "k", "s", **given)) == generated("p", "o", "k", "s", **given)
    assert one == two and pickle.loads(pickle.dumps(one)) == one
    assert dataclasses.replace(one, status="migrated") == FileResult("p", "o", "k", "migrated")


def test_the_runner_s_edits_are_edit_text_s():
    """`runner._edit` (None for a file without edits) answers what `edit_text` answers (an empty
    list then), on files with and without edits, protected spans and problems."""
    from musify.rules.reverse import load_for

    options = Options()
    ruleset = load_for(options)
    texts = ["int x;\n", "", "cudaMalloc(&p, n);\n", "// MUSIFY_EXCL_START\ncudaFree(p);\n// MUSIFY_EXCL_STOP\n",
             "/* open", "#include <cuda_runtime.h>\n__global__ void k() {}\nint main() { k<<<1, 1>>>(); }\n",
             "#define cudaFree(p) 0\ncudaFree(q);\n"]
    for text in texts:
        ctx, merged = runner._edit(text, "a.cu", ruleset, options, None, "", "", "")
        ref_ctx, ref = runner.edit_text(text, "a.cu", ruleset, options)
        assert (list(merged) if merged is not None else []) == list(ref), text
        assert merged is None or len(merged) > 0
        assert ctx.found.diagnostics == ref_ctx.found.diagnostics and ctx.found.facts == ref_ctx.found.facts


def test_beside_then_runs_in_this_thread_after_meanwhile():
    """`then` (a share of the work's own work) runs in the caller's thread once `meanwhile` is
    done, before the join; a `NameProbe` asked by both threads answers as `keep_names`."""
    order: list[tuple[str, bool]] = []
    main = threading.current_thread()
    api.beside(lambda: None, lambda: order.append(("meanwhile", threading.current_thread() is main)),
               then=lambda: order.append(("then", threading.current_thread() is main)))
    assert order == [("meanwhile", True), ("then", True)]


@pytest.mark.parametrize("native", [True, False])
def test_a_name_probe_shared_by_two_threads_is_keep_names(tmp_path, monkeypatch, native):
    from musify import renames

    if not native:
        monkeypatch.setattr(renames, "_NATIVE", None)
    elif renames._NATIVE is None:
        pytest.skip("the compiled probe is not built")
    _tree(tmp_path / "in", 40)  # with a binary file and a file whose new name is taken
    found = discover.discover([str(tmp_path / "in")])
    items = [(f, f.rel[:-3] + ".mu", f.abspath) for f in found.files if f.rel.endswith(".cu")]
    existing = {(f.root, f.rel) for f in found.files if f.rel.endswith(".mu")}
    reference = renames.keep_names(items, existing)
    probe = renames.NameProbe(items, existing, found.unlisted)
    api.beside(probe.run, lambda: None, then=probe.run)
    assert probe.keeps() == reference
    assert sum(reference) == 2 and len(reference) > 20  # the binary file, the one whose new name is taken


def test_the_project_read_off_the_ports_paths_is_the_project(tmp_path):
    """`_project` with every port's path prefix empty (one folder given) reads each renamed
    file's new relpath off its port's path; the same renames as cutting and joining the names."""
    _tree(tmp_path / "in", 30)
    for inputs in ([str(tmp_path / "in")], [str(tmp_path / "in"), str(tmp_path / "in" / "d2" / "plain.cpp")]):
        found = discover.discover(inputs)
        prefixes = api._out_prefixes(inputs)
        plan = api._plan(found.files, inputs, Options(), prefixes, found.unlisted)
        fast, reference = api._project(plan, Options(), prefixes), api._project(plan, Options())
        assert fast.header_renames == reference.header_renames and fast.files == reference.files
        assert dict(fast.suffix_index.whole()) == dict(reference.suffix_index.whole())
    assert len(reference.header_renames) > 20
