"""The compiled rules file (musify/rules/compact.py): what it loads is the RuleSet that was
compiled, name by name and whole; the tables read a name at a time (LazyRules, PartialTable)
answer as the whole tables do; a damaged, foreign or stale file is compiled again."""

from __future__ import annotations

import mmap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from musify.passes.identifiers import fast_renames, fast_renames_reference
from musify.passes.languages import scanner_prefixes
from musify.rules import compact, derived, lazy, loader, packing
from musify.rules.model import Rule, RuleSet, rule_record

HEAD = "schema: musify-rules/1\nlibrary: cudart\nkind: function\nstatus: renamed\n"
RECORDS = """\
  - {cuda: cudaMalloc, musa: musaMalloc}
  - {cuda: cudaFree, musa: musaFree, note: "frees"}
  - {cuda: cudaKept, status: unchanged}
  - {cuda: cudaGone, status: unsupported, diag: MU1002}
  - {cuda: cudaGuess, musa: musaGuess, inferred: true}
  - {cuda: __shfl_sync, musa: __shfl_sync, status: unchanged, hazard: [shuffle, lane-mask-arg]}
  - {cuda: cudaHalf, musa: musaHalf, status: shim, header: compat/musify_compat/half.h}
  - {cuda: surface, musa: msurface, kind: type, hazard: template-only}
  - {cuda: "thrust::cuda", musa: "thrust::musa", kind: namespace, library: thrust}
  - {cuda: cuda_runtime.h, musa: musa_runtime.h, kind: header}
  - {cuda: cutlass/, musa: mutlass/, kind: header, library: cutlass}
  - {cuda: "caf\\u00e9Name", musa: musaCafe}
"""


@pytest.fixture()
def rules_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path / "rules"
    (directory / "runtime").mkdir(parents=True)
    (directory / "runtime" / "a.yaml").write_text(HEAD + "vendor_prefixes: ['cuda', 'CU_']\nrules:\n" + RECORDS)
    (directory / "runtime" / "b.yaml").write_text(
        HEAD + "rules:\n  - {cuda: cudaFree, musa: musaFreeV2, overrides: the SDK spells it so}\n")
    monkeypatch.setenv("MUSIFY_CACHE_DIR", str(tmp_path / "cache"))
    return directory


def _compiled(rules_dir: Path) -> Path:
    return rules_dir.parent / "cache" / "rules" / _compiled_name(rules_dir)


def _same(lazy_set: RuleSet, eager: RuleSet) -> None:
    for name, rule in eager.names.items():
        assert lazy_set.names.get(name) == rule and name in lazy_set.names and lazy_set.lookup(name) == rule
    for name, rule in eager.headers.items():
        assert lazy_set.headers[name] == rule
    assert lazy_set.names.get("noSuchName") is None and "noSuchName" not in lazy_set.names
    with pytest.raises(KeyError):
        lazy_set.headers["no_such.h"]
    assert list(lazy_set.names) == list(eager.names) and list(lazy_set.headers) == list(eager.headers)
    assert lazy_set.names == eager.names and lazy_set.headers == eager.headers
    assert (lazy_set.qualified, lazy_set.by_hazard, lazy_set.overridden) == (eager.qualified, eager.by_hazard,
                                                                          eager.overridden)
    assert (lazy_set.digest, lazy_set.vendor_pattern) == (eager.digest, eager.vendor_pattern)
    assert sorted(map(rule_record, lazy_set.all_rules())) == sorted(map(rule_record, eager.all_rules()))


def test_a_compiled_file_loads_the_ruleset_that_was_compiled(rules_dir: Path) -> None:
    loader.load_ruleset(rules_dir)  # compiles, writes the file
    cached = loader.load_ruleset(rules_dir)
    assert isinstance(cached.names, lazy.LazyRules)
    eager = loader.load_ruleset(rules_dir, use_cache=False)
    _same(cached, eager)
    assert loader.load_ruleset(rules_dir).names.get("caf\u00e9Name").musa == "musaCafe"


def test_derived_tables_read_from_the_file_equal_the_computed_ones(rules_dir: Path) -> None:
    loader.load_ruleset(rules_dir)
    cached = loader.load_ruleset(rules_dir)
    eager = loader.load_ruleset(rules_dir, use_cache=False)
    assert cached._prefixes == scanner_prefixes(eager)
    fast, skip = fast_renames(cached, ["cudaMalloc", "cudaKept", "main"])  # partial: these names
    whole_fast, whole_skip = fast_renames_reference(eager)
    assert fast == {"cudaMalloc": whole_fast["cudaMalloc"]} and skip == {"cudaKept"}
    skip.add("main")  # the run adds the names it finds nothing for
    assert fast_renames(cached) == (whole_fast, whole_skip | {"main"})  # whole, the addition kept
    assert fast_renames(cached)[0] is fast


def test_the_real_rule_database_round_trips() -> None:
    loader.load_ruleset()  # compiled once a session (the suite's cache root)
    cached = loader.load_ruleset()
    assert isinstance(cached.names, lazy.LazyRules)
    eager = loader.load_ruleset(use_cache=False)
    assert fast_renames(cached) == fast_renames_reference(eager)
    _same(cached, eager)


def test_a_user_table_on_a_loaded_ruleset_drops_the_stored_tables(rules_dir: Path, tmp_path: Path) -> None:
    loader.load_ruleset(rules_dir)
    table = tmp_path / "mine.json"
    table.write_text('{"cudaKept": "myKept", "cudaNew": "myNew"}')
    ruleset = loader.load_ruleset(rules_dir, extra=[table])
    eager = loader.load_ruleset(rules_dir, extra=[table], use_cache=False)
    assert not hasattr(ruleset, "_partial") and not hasattr(ruleset, "_fast_renames")
    assert fast_renames(ruleset) == fast_renames_reference(eager)
    assert ruleset.names.get("cudaNew").musa == "myNew"
    _same(ruleset, eager)


def _other_head() -> bytes:
    """The right magic, lengths and CRC around a head of another shape."""
    import marshal
    from zlib import crc32

    head = marshal.dumps({"byte order": "little"})
    return compact.MAGIC + compact._LENGTHS.pack(len(head), 0, crc32(head)) + head


@pytest.mark.parametrize("damage", ["truncate", "garbage", "empty", "magic", "grown", "head"])
def test_a_damaged_file_is_compiled_again(rules_dir: Path, monkeypatch: pytest.MonkeyPatch, damage: str) -> None:
    loader.load_ruleset(rules_dir)
    path = _compiled(rules_dir)
    data = path.read_bytes()
    path.write_bytes({"truncate": data[:len(data) // 2], "garbage": b"\x00garbage" * 100, "empty": b"",
                      "magic": b"musify-rules 0\n" + data[len(compact.MAGIC):], "grown": data + b"\0",
                      "head": _other_head()}[damage])
    compiled = []
    monkeypatch.setattr(loader, "compile_rules", lambda *a, _c=loader.compile_rules: compiled.append(1) or _c(*a))
    ruleset = loader.load_ruleset(rules_dir)
    assert compiled and ruleset.lookup("cudaMalloc").musa == "musaMalloc"
    assert path.read_bytes() == data  # rewritten whole
    assert not list(path.parent.glob(".*.tmp"))


def test_a_file_from_other_code_is_not_read(rules_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The derived tables are the output of code: another fingerprint names another file."""
    first = loader.load_ruleset(rules_dir)
    monkeypatch.setattr(derived, "_fingerprint", ["0" * 12])
    compiled = []
    monkeypatch.setattr(loader, "compile_rules", lambda *a, _c=loader.compile_rules: compiled.append(1) or _c(*a))
    assert loader.load_ruleset(rules_dir).digest == first.digest and compiled
    assert len(list((rules_dir.parent / "cache" / "rules").glob("ruleset-*.rules"))) == 2


def test_the_cache_keeps_the_newest_compiled_files(rules_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    folder = rules_dir.parent / "cache" / "rules"
    folder.mkdir(parents=True)
    for n in range(6):
        old = folder / f"ruleset-{n:020d}-{n:012d}.rules"
        old.write_bytes(b"old")
        os.utime(old, ns=(n * 10**9, n * 10**9))
    (folder / "ruleset-0-0.pickle").write_bytes(b"an older musify's")
    loader.load_ruleset(rules_dir)
    kept = {p.name for p in folder.iterdir()}
    newest = {f"ruleset-{n:020d}-{n:012d}.rules" for n in range(6 - (loader.KEEP - 1), 6)}
    assert kept == {"ruleset-0-0.pickle", _compiled_name(rules_dir), *newest}  # another format: left alone


def _compiled_name(rules_dir: Path) -> str:
    from musify.rules.files import builtin_digest

    return loader.compiled_name(builtin_digest(rules_dir))


def test_a_loaded_ruleset_pickles_as_a_plain_one(rules_dir: Path) -> None:
    import pickle

    loader.load_ruleset(rules_dir)
    ruleset = loader.load_ruleset(rules_dir)
    fast_renames(ruleset, ["cudaMalloc"])
    again = pickle.loads(pickle.dumps(ruleset))
    assert type(again.names) is dict and not hasattr(again, "_fast_renames")
    _same(again, loader.load_ruleset(rules_dir, use_cache=False))
    assert fast_renames(again) == fast_renames_reference(again)


def test_mapped_and_read_bytes_load_alike(rules_dir: Path) -> None:
    loader.load_ruleset(rules_dir)
    path = _compiled(rules_dir)
    with open(path, "rb") as fh:
        mapped = compact.load(mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ))
    _same(mapped, compact.load(path.read_bytes()))


def test_lookups_before_and_after_the_table_is_read_whole(rules_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    loader.load_ruleset(rules_dir)
    eager = loader.load_ruleset(rules_dir, use_cache=False)
    monkeypatch.setattr(lazy, "WHOLE_AFTER", 3)
    ruleset = loader.load_ruleset(rules_dir)
    names = ruleset.names
    names["cudaAdded"] = Rule("cudaAdded", "musaAdded", "function", "user", "renamed")
    asked = ["cudaMalloc", "nope1", "nope2", "cudaFree", "nope3", "cudaKept", "nope4"]
    assert [names.get(n) for n in asked] == [eager.names.get(n) for n in asked]
    assert names._index is None  # whole now
    assert names.get("cudaAdded").musa == "musaAdded" and names.get("nope1") is None
    assert list(names) == [*eager.names, "cudaAdded"]


# --- the pieces, on generated inputs -----------------------------------------------------------

NAME = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=12) | st.sampled_from(
    ["a\0b", "\ud800x", "cudaMalloc", "thrust::cuda", ""])


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(NAME, st.integers(0, 10**6), max_size=60), st.lists(NAME, max_size=20))
def test_buckets_answer_as_the_dict(table: dict, asked: list) -> None:
    blob, starts = packing.write_buckets(list(table.items()))
    index = packing.Buckets(memoryview(blob), memoryview(starts).cast("I"))
    for name in [*table, *asked]:
        assert index.get(name) == table.get(name)


VALUE = st.one_of(st.none(), st.booleans(), st.integers(-3, 300), NAME)


@settings(max_examples=200, deadline=None)
@given(st.one_of(
    st.sets(NAME, max_size=20), st.frozensets(NAME, max_size=20), st.lists(NAME, max_size=20),
    st.tuples(NAME, NAME), st.integers(1, 4).flatmap(
        lambda width: st.dictionaries(NAME, st.tuples(*[VALUE] * width), max_size=30)),
    st.tuples(st.dictionaries(NAME, st.tuples(NAME, st.booleans()), max_size=10), st.sets(NAME, max_size=10)),
    st.dictionaries(NAME, st.integers(), max_size=5), st.just({"a": ()}),
))
def test_pack_gives_back_an_equal_value_of_the_same_types(value) -> None:
    numbers = {name: i for i, name in enumerate(sorted({"cudaMalloc", "x", "a"}))}
    for names in (None, numbers):
        back = packing.unpack(packing.pack(value, names), sorted(numbers) if names else None)
        assert back == value and type(back) is type(value)
        if isinstance(value, tuple):
            assert [type(v) for v in back] == [type(v) for v in value]
        if isinstance(value, dict) and all(type(row) is tuple for row in value.values()):
            assert [type(x) for row in back.values() for x in row] == [type(x) for row in value.values() for x in row]


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(NAME, st.tuples(NAME, st.booleans()), max_size=40), st.sets(NAME, max_size=40),
       st.lists(st.lists(NAME, max_size=15), max_size=6), st.integers(1, 30))
def test_a_partial_table_answers_as_the_whole_one(fast: dict, skip: set, batches: list, limit: int) -> None:
    blob, starts = packing.write_buckets(compact._entries((fast, skip)))
    table = lazy.PartialTable(({}, set()), packing.Buckets(memoryview(blob), memoryview(starts).cast("I")),
                              lambda: (dict(fast), set(skip)))
    old = lazy.WHOLE_AFTER
    lazy.WHOLE_AFTER = limit
    try:
        added = set()
        for batch in batches:
            whole = table.fill(batch)
            part_fast, part_skip = table.parts
            for name in batch:
                assert part_fast.get(name) == fast.get(name) and (name in part_skip) == (name in skip | added)
            part_skip.add(f"run-{len(added)}")  # what the pass adds as it goes
            added.add(f"run-{len(added)}")
            if whole:
                assert table.parts == (fast, skip | added)
                break
        assert table.fill(None) and table.parts == (fast, skip | added)
    finally:
        lazy.WHOLE_AFTER = old
