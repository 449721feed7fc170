"""The compiled rules and the kept vocabularies against what a user's machine does to a cache:
a byte damaged anywhere (a run reads the compiled file a name at a time, so damage would be met
mid-run, as a wrong rename or an exception), processes starting together on an empty cache, a
file replaced or pruned while a run has it mapped, a disk that fills while a file is written.
And the compiled file's bytes do not depend on the string hash seed (a wheel ships one)."""

from __future__ import annotations

import marshal
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from musify import digests
from musify.passes.identifiers import fast_renames, fast_renames_reference
from musify.rules import compact, derived, loader, vocab
from musify.rules.model import rule_record
from tests.test_rules_compact import HEAD, RECORDS, _same

REPO = Path(__file__).resolve().parents[1]
# enough names in each derived table for a set's order to follow the hash seed
MORE = "".join(f"  - {{cuda: cudaKept{i}, status: unchanged}}\n  - {{cuda: cudaRen{i}, musa: musaRen{i}}}\n"
               for i in range(40))


@pytest.fixture()
def rules_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path / "rules"
    (directory / "runtime").mkdir(parents=True)
    (directory / "runtime" / "a.yaml").write_text(HEAD + "vendor_prefixes: ['cuda']\nrules:\n" + RECORDS + MORE)
    (directory / "runtime" / "b.yaml").write_text(
        HEAD + "rules:\n  - {cuda: cudaFree, musa: musaFreeV2, overrides: the SDK spells it so}\n")
    monkeypatch.setenv("MUSIFY_CACHE_DIR", str(tmp_path / "cache"))
    return directory


def _compiled(rules_dir: Path) -> Path:
    from musify.rules.files import builtin_digest

    return rules_dir.parent / "cache" / "rules" / loader.compiled_name(builtin_digest(rules_dir))


def _sections(data: bytes) -> dict[str, tuple[int, int]]:
    """Where the head and each section of the body lie in a compiled file: name -> (start, length)."""
    at = len(compact.MAGIC) + compact._LENGTHS.size
    head_size = compact._LENGTHS.unpack_from(data, len(compact.MAGIC))[0]
    body_at = at + head_size + (-(at + head_size) % 8)
    sections = marshal.loads(data[at:at + head_size])["sections"]
    return {"head": (at, head_size)} | {name: (body_at + start, length) for name, (start, length) in sections.items()}


def _all_right(ruleset, eager) -> None:
    _same(ruleset, eager)
    assert fast_renames(ruleset) == fast_renames_reference(eager)


def test_a_byte_damaged_anywhere_is_found_before_use_and_compiled_again(rules_dir: Path) -> None:
    eager = loader.load_ruleset(rules_dir, use_cache=False)
    loader.load_ruleset(rules_dir)
    path = _compiled(rules_dir)
    data = path.read_bytes()
    sections = _sections(data)
    assert {"head", "records", "names index", "names index starts", "_fast_renames whole"} <= set(sections)
    for name, (start, length) in sections.items():
        for at in sorted({start, start + length // 2, start + length - 1}):
            damaged = bytearray(data)
            damaged[at] ^= 0x20  # a letter's case, in a string
            path.write_bytes(damaged)
            _all_right(loader.load_ruleset(rules_dir), eager)  # read only after the whole file was checked
            assert compact.intact(path.read_bytes()), name  # replaced by a whole one
    start, length = sections["names index starts"]
    path.write_bytes(data[:start + length - 4] + b"\xff\xff\xff\xff" + data[start + length:])  # out of range
    _all_right(loader.load_ruleset(rules_dir), eager)


def test_an_intact_file_is_checked_once_and_a_replaced_one_again(rules_dir: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(digests, "RACY_NS", -10**18)  # the file was written just now: remember anyway
    eager = loader.load_ruleset(rules_dir, use_cache=False)
    loader.load_ruleset(rules_dir)
    checks = []
    monkeypatch.setattr(compact, "intact", lambda data, _i=compact.intact: checks.append(1) or _i(data))
    held = [loader.load_ruleset(rules_dir) for _ in range(3)]  # mapped: the file's inode stays in use
    assert len(checks) == 1
    path = _compiled(rules_dir)
    damaged = bytearray(path.read_bytes())
    damaged[_sections(bytes(damaged))["records"][0] + 1] ^= 0x20
    tmp = path.with_suffix(".new")
    tmp.write_bytes(damaged)
    os.replace(tmp, path)  # another inode: checked again, found damaged, compiled again
    _all_right(loader.load_ruleset(rules_dir), eager)
    assert len(checks) == 2 and compact.intact(path.read_bytes())
    _all_right(held[0], eager)


def test_a_run_keeps_its_mapped_file_while_others_replace_and_prune_it(rules_dir: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A compiled file is replaced by a rename and pruned by an unlink, never truncated or written
    in place: a run that has it mapped reads its records to the end (a truncated mapping would end
    the run with SIGBUS)."""
    eager = loader.load_ruleset(rules_dir, use_cache=False)
    loader.load_ruleset(rules_dir)
    path = _compiled(rules_dir)
    first = loader.load_ruleset(rules_dir)  # a run started before the replacement
    loader.save_compiled(eager, path)  # another run compiles the same rules again
    second = loader.load_ruleset(rules_dir)  # a run started after it
    os.utime(path, ns=(0, 0))  # the oldest: pruned by the next compilations
    for n in range(loader.KEEP):  # newer code compiles the rules, again and again
        monkeypatch.setattr(derived, "_fingerprint", [f"{n:012d}"])
        loader.load_ruleset(rules_dir)
    assert not path.exists() and not digests._checked_memo(path).exists()
    for running in (first, second):
        _all_right(running, eager)


def test_processes_starting_together_on_an_empty_cache_agree(rules_dir: Path, tmp_path: Path) -> None:
    eager = loader.load_ruleset(rules_dir, use_cache=False)
    expected = repr((sorted(map(rule_record, eager.all_rules())), sorted(fast_renames_reference(eager)[0].items()),
                     sorted(fast_renames_reference(eager)[1])))
    probe = ("import sys, time\nfrom pathlib import Path\nfrom musify.rules import loader\n"
             "from musify.rules.model import rule_record\nfrom musify.passes.identifiers import fast_renames\n"
             "time.sleep(max(0.0, float(sys.argv[2]) - time.time()))  # all at once\n"
             "rs = loader.load_ruleset(Path(sys.argv[1]))\nfast, skip = fast_renames(rs)\n"
             "print(repr((sorted(map(rule_record, rs.all_rules())), sorted(fast.items()), sorted(skip))))\n")
    start = str(time.time() + 2.0)
    runs = [subprocess.Popen([sys.executable, "-c", probe, str(rules_dir), start], cwd=REPO, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True) for _ in range(8)]
    for run in runs:
        out, err = run.communicate(timeout=120)
        assert run.returncode == 0 and not err, err
        assert out.strip() == expected
    cache = tmp_path / "cache"
    assert [p.name for p in (cache / "rules").iterdir()] == [_compiled(rules_dir).name]
    assert not [p for p in cache.rglob(".*")]  # no temporary left
    _all_right(loader.load_ruleset(rules_dir), eager)


def test_the_compiled_bytes_do_not_depend_on_the_hash_seed(rules_dir: Path) -> None:
    probe = ("import sys\nfrom pathlib import Path\nfrom musify.rules import compact, derived, loader\n"
             "rs = loader.load_ruleset(Path(sys.argv[1]), use_cache=False)\n"
             "sys.stdout.buffer.write(compact.dump(rs, derived.compute(rs), derived.PARTIAL))\n")
    dumps = [subprocess.run([sys.executable, "-c", probe, str(rules_dir)], cwd=REPO, capture_output=True, check=True,
                            env={**os.environ, "PYTHONHASHSEED": seed}).stdout for seed in ("1", "2", "3")]
    assert dumps[0] == dumps[1] == dumps[2]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_FSIZE as a full disk")
def test_a_disk_that_fills_while_writing_the_cache_leaves_no_part_behind(rules_dir: Path, tmp_path: Path) -> None:
    """Writes past the limit fail (EFBIG, as ENOSPC would): the run goes on without the cache."""
    probe = ("import resource, sys\nfrom pathlib import Path\nresource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000))\n"
             "from musify.rules import loader, vocab\n"
             "assert vocab.python_vocab() and vocab.load_vocab('build/cmake.toml')\n"
             "rs = loader.load_ruleset(Path(sys.argv[1]))\nprint(rs.lookup('cudaMalloc').musa)\n")
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", probe, str(rules_dir)], check=False, cwd=REPO, capture_output=True,
                              text=True)
        assert done.returncode == 0 and done.stdout == "musaMalloc\n", done.stderr
    cache = tmp_path / "cache"
    assert not [p for p in cache.rglob("*") if p.name.startswith(".")]  # no part of a file left
    assert not list((cache / "rules").glob("*.rules"))  # too big to write: compiled by every run


def test_a_damaged_kept_vocabulary_is_parsed_again(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import tomllib

    monkeypatch.setenv("MUSIFY_CACHE_DIR", str(tmp_path / "cache"))
    table = "pytorch/python.toml"
    parsed = tomllib.loads((vocab.default_rules_dir() / table).read_text(encoding="utf-8"))
    vocab._load.cache_clear()
    assert vocab.load_vocab(table) == parsed
    (kept,) = (tmp_path / "cache" / "vocab").glob("*.marshal")
    for damage in (lambda b: b[:len(b) // 2], lambda b: b[:-8] + bytes([b[-8] ^ 0x20]) + b[-7:], lambda b: b""):
        kept.write_bytes(damage(kept.read_bytes()))
        vocab._load.cache_clear()
        assert vocab.load_vocab(table) == parsed
    vocab._load.cache_clear()
