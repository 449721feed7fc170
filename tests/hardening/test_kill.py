"""SIGKILL an --in-place run (the parent, or one of its -j2 workers) at random moments, again and
again, on a generated tree of about 2,000 .cu/.cuh files that include each other. After every
kill: each file is its original or its complete port, a file exists under both names only as a
pair the journal lists (the next run finishes it), no include names a missing file. A final run
completes the job, equals the -o port byte for byte and leaves no lock, journal or temporary file.

Runs are forked from this process (api.migrate with the rules already loaded), so a kill costs
milliseconds rather than an interpreter start; the writes, the pool and the journal are the ones
the CLI uses."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import time
from pathlib import Path

from musify.api import migrate
from musify.discover import JOURNAL_NAME, is_owned_name
from musify.options import Options
from musify.rules.reverse import load_for
from tests.hardening.treegen import make_tree, missing_includes, read_tree

KILLS = int(os.environ.get("MUSIFY_KILLS", "20"))
RENAME = {".cu": ".mu", ".cuh": ".muh"}


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as fh:
            return [int(x) for x in fh.read().split()]
    except OSError:
        return []


def _run_in_child(tree: Path, ruleset, jobs: int) -> int:
    pid = os.fork()
    if pid == 0:  # the run under test
        code = 1
        try:
            import sys

            sys.stderr = open(os.devnull, "w")  # noqa: SIM115
            migrate([str(tree)], Options(jobs=jobs, lock_wait=30), "in-place", ruleset=ruleset)
            code = 0
        finally:
            os._exit(code)
    return pid


def _check(tree: Path, original: dict[str, bytes], port: dict[str, bytes]) -> None:
    now = read_tree(tree)
    pairs = set()
    if (tree / JOURNAL_NAME).exists():
        pairs = {tuple(p) for p in json.loads((tree / JOURNAL_NAME).read_text())["renames"]}
    for old, data in original.items():
        stem, ext = os.path.splitext(old)
        new = stem + RENAME[ext]
        allowed = {data, port[new]}
        present = [n for n in (old, new) if n in now]
        assert present, f"{old} is gone under both names"
        for n in present:
            assert now[n] in allowed, f"{n} is neither the original nor the port of {old}"
        if len(present) == 2:
            assert (old, new) in pairs, f"{old} and {new} both exist and the journal does not say why"
    strays = [n for n in now if n not in original and n not in port and not is_owned_name(os.path.basename(n))]
    assert not strays, strays
    assert missing_includes(tree, {k: v for k, v in now.items() if not is_owned_name(os.path.basename(k))}) == []


def test_sigkill_in_place_many_times(tmp_path):
    ruleset = load_for(Options())
    src = tmp_path / "src"
    make_tree(src, 2000)
    original = read_tree(src)
    assert len(original) >= 1980
    t0 = time.monotonic()
    migrate([str(src)], Options(jobs=2), "out", str(tmp_path / "out"), ruleset=ruleset)
    span = max(0.3, (time.monotonic() - t0) * 1.3)
    port = read_tree(tmp_path / "out")
    tree = tmp_path / "tree"
    shutil.copytree(src, tree)
    rnd = random.Random(7)
    kills = completions = 0
    while kills < KILLS:
        jobs = rnd.choice((1, 2))
        pid = _run_in_child(tree, ruleset, jobs)
        if rnd.random() < 0.5:  # a random moment of the whole run (migration, pool, writes)
            time.sleep(rnd.uniform(0, span))
        else:  # a random moment of the write phase, which starts with the journal
            deadline = time.monotonic() + span * 2
            while not (tree / JOURNAL_NAME).exists() and time.monotonic() < deadline:
                time.sleep(0.002)
            time.sleep(rnd.uniform(0, span / 3))
        victim = pid
        workers = _children(pid)
        if workers and rnd.random() < 0.4:
            victim = rnd.choice(workers)
        try:
            os.kill(victim, signal.SIGKILL)
            kills += 1
        except ProcessLookupError:
            pass
        _, status = os.waitpid(pid, 0)
        if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0 and victim == pid:
            kills -= 1  # it had finished: not a kill
        time.sleep(0.05)
        left = [w for w in workers if os.path.exists(f"/proc/{w}") and _state(w) != "Z"]
        assert not left, f"workers {left} outlived their run"
        _check(tree, original, port)
        if not (tree / JOURNAL_NAME).exists() and read_tree(tree) == port:
            completions += 1  # done: start over from the original, for more kills mid-run
            shutil.rmtree(tree)
            shutil.copytree(src, tree)
    migrate([str(tree)], Options(jobs=2), "in-place", ruleset=ruleset)
    final = read_tree(tree)
    print(f"{kills} kills, {completions} runs completed between them")
    assert [n for n in final if is_owned_name(os.path.basename(n))] == []
    assert final == port


def _state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "Z"
