"""Start-up: what a run loads only when it needs it, and the stat-memoised digests (issue 12).

The figures are in benchmarks/README.md (`benchmarks/bench_startup.py`); these tests pin the
behaviour behind them: a fully cached `musify check` imports no pass, no front end and none of
the heavy optional libraries, and a memoised digest never outlives a change to its files.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from musify import digests
from musify.rules import files as rule_files
from tests.conftest import install_rules
from tests.test_cache import RULES

REPO = Path(__file__).resolve().parents[1]
# what a cached check must not load: every pass, every front end, and the optional libraries
HEAVY = ("musify.passes.identifiers", "musify.passes.structure", "musify.passes.hazards.warp_size",
         "musify.frontend.scanner", "musify.frontend.cmake", "musify.frontend.python", "musify.rules.model",
         "tree_sitter", "yaml", "rich", "jinja2")
PROBE = """
import json, runpy, sys
sys.argv = ["musify", *sys.argv[1:]]
try:
    runpy.run_module("musify", run_name="__main__")
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)), file=sys.__stdout__)
"""


def _modules_of_check(work: Path, cache: Path, *args: str) -> tuple[set[str], str]:
    env = dict(os.environ, MUSIFY_CACHE_DIR=str(cache), PYTHONPATH=str(REPO))  # MUSIFY_RULES_DIR kept
    proc = subprocess.run([sys.executable, "-c", PROBE, "check", "small.cu", "-q", *args], cwd=work, env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    return set(json.loads(proc.stdout.splitlines()[-1])), proc.stderr


def test_a_cached_check_loads_no_pass_front_end_or_optional_library(tmp_path: Path, monkeypatch) -> None:
    install_rules(tmp_path, monkeypatch, RULES)  # a small database: nothing slow to compile
    (tmp_path / "small.cu").write_text("#include <cuda_runtime.h>\n"
                                       "int main() { float *d; cudaMalloc(&d, 4); return 0; }\n")
    cache = tmp_path / "cache"
    first, err = _modules_of_check(tmp_path, cache)  # migrates: loads what it needs, fills the cache
    assert "would be migrated" in err
    assert "musify.passes.identifiers" in first and "musify.frontend.scanner" in first
    assert "musify.frontend.cmake" not in first  # a C-family file needs no CMake front end
    second, err = _modules_of_check(tmp_path, cache)
    assert "would be migrated" in err  # the same verdict, from the cache
    assert sorted(second & set(HEAVY)) == []


# what a plain `migrate -o` of a C-family file does not need: in-place machinery, the run memo and
# the incremental cache's pickles (--no-cache), the rule parsers (compiled rules, kept vocabularies),
# and what only a -j worker uses (signal, for `lifeline`)
NOT_FOR_A_PLAIN_RUN = ("musify.inplace", "musify.swap", "musify.journal", "musify.memo", "concurrent.futures",
                       "logging", "pickle", "tomllib", "yaml", "musify.rules.flowfile", "signal",
                       "difflib")  # (click's close-match search for an option it cannot match)


def test_a_plain_run_imports_only_what_it_uses(tmp_path: Path, monkeypatch) -> None:
    install_rules(tmp_path, monkeypatch, RULES)
    (tmp_path / "small.cu").write_text("#include <cuda_runtime.h>\n"
                                       "int main() { float *d; cudaMalloc(&d, 4); return 0; }\n")
    env = dict(os.environ, MUSIFY_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=str(REPO))
    args = [sys.executable, "-c", PROBE, "migrate", "small.cu", "-o", "out", "-q", "--no-cache"]
    for _ in range(2):  # the first compiles the rules and keeps the vocabularies parsed
        proc = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert (tmp_path / "out" / "small.mu").read_text().count("musaMalloc") == 1, proc.stderr
    loaded = set(json.loads(proc.stdout.splitlines()[-1]))
    assert "musify.passes.identifiers" in loaded
    assert sorted(loaded & set(NOT_FOR_A_PLAIN_RUN)) == []


def test_a_digest_memo_never_outlives_a_change(tmp_path: Path, monkeypatch) -> None:
    rules = install_rules(tmp_path, monkeypatch, RULES)
    table = rules / "rt" / "r.yaml"
    monkeypatch.setattr(digests, "RACY_NS", 0)  # as if the file had settled: the memo is written
    old = time.time() - 3600
    os.utime(table, (old, old))
    first = rule_files.ruleset_digest()
    assert list((tmp_path / "cache" / "digests").iterdir())
    assert rule_files.ruleset_digest() == first
    # same size, same mtime (a tool that restores timestamps): the ctime still moves
    table.write_text(RULES.replace("musaFree", "musaFred"))
    os.utime(table, (old, old))
    second = rule_files.ruleset_digest()
    blobs = [(table, table.read_bytes())]
    assert second != first and second == rule_files.rules_digest(blobs, rules)


def test_a_file_changed_just_now_is_hashed_not_memoised(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("MUSIFY_CACHE_DIR", str(tmp_path / "cache"))
    f = tmp_path / "a.txt"
    f.write_text("x")
    calls = []

    def compute() -> str:
        calls.append(1)
        return "d1"

    assert digests.memoised("t", tmp_path, [f], compute) == "d1"
    assert digests.memoised("t", tmp_path, [f], compute) == "d1"
    assert len(calls) == 2  # racy: no memo for a file this fresh
    assert not (tmp_path / "cache" / "digests").exists()


def test_the_rule_files_are_what_rglob_finds(tmp_path: Path) -> None:
    """`rule_files` walks with `os.scandir` (every run lists the database): the files `rglob`
    finds, links to files included, a linked folder not followed, a folder named `*.yaml` entered."""
    (tmp_path / "a" / "b").mkdir(parents=True)
    for rel in ("a/x.yaml", "a/b/y.yaml", ".hidden.yaml", "n.txt", "dir.yaml/z.yaml"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    os.symlink(tmp_path / "a" / "x.yaml", tmp_path / "link.yaml")
    os.symlink(tmp_path / "a", tmp_path / "linked")
    os.symlink(tmp_path / "nowhere", tmp_path / "broken.yaml")
    expected = sorted(p for p in tmp_path.rglob("*.yaml") if p.is_file())
    assert rule_files.rule_files(tmp_path) == expected and len(expected) == 5


def test_short_options_parse_as_click_parses_them(monkeypatch) -> None:
    """The commands' parser takes "-o", "-q", "-j1" straight to short-option matching, with the
    same outcome as click's own order (and its errors for words it cannot match)."""
    import click

    from musify import cli

    argv = ["src", "-o", "out", "-qj1", "--json=r.json", "-j", "2", "--no-cache", "-v"]
    ours = cli.migrate_cmd.make_context("migrate", list(argv)).params
    with monkeypatch.context() as m:
        m.setattr(cli._Command, "make_parser", click.Command.make_parser)
        theirs = cli.migrate_cmd.make_context("migrate", list(argv)).params
    assert ours == theirs and ours["out_dir"] == "out" and ours["quiet"] and ours["jobs"] == 2
    for bad, said in (["src", "-x"], "No such option '-x'"), (["src", "--bogus"], "No such option '--bogus'"):
        try:
            cli.migrate_cmd.make_context("migrate", bad)
        except click.UsageError as exc:
            assert said in exc.format_message()
        else:
            raise AssertionError(bad)
