"""SIGKILL an --in-place run (the parent, or one of its -j2 workers) at random moments, again and
again, on a generated tree of about 2,000 .cu/.cuh files that include each other. After every
kill: each file is its original or its complete port, no file exists under both names, no
include names a missing file. A final run completes the job, equals the -o port byte for byte and
leaves no lock, journal, temporary file or staging directory. The tree commits by a staged swap
(musify/swap.py); a smaller tree holding a `.git` directory commits file by file, where a file
may exist under both names only as a pair the journal lists (the next run finishes it).

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
from collections import Counter
from pathlib import Path

import pytest

from musify.api import migrate
from musify.discover import JOURNAL_NAME, is_owned_name
from musify.options import Options
from musify.rules.reverse import load_for
from tests.hardening.treegen import make_tree, missing_includes, read_tree

KILLS = int(os.environ.get("MUSIFY_KILLS", "20"))
RENAME = {".cu": ".mu", ".cuh": ".muh"}


# How long a run whose worker was killed may take to fail on its own; one still running then has
# hung (killed, and the test fails). A worker killed while it sent a big result used to leave part
# of it in the pool's result pipe, which CPython's ProcessPoolExecutor then waited to read forever;
# workers now hand results over through files (musify/worker_results.py).
WORKER_GRACE = 30.0


def _wait_run(pid: int, grace: float | None) -> tuple[int, bool]:
    """The run's wait status, and whether it had to be killed after `grace` seconds (None: wait)."""
    if grace is None:
        return os.waitpid(pid, 0)[1], False
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status, False
        time.sleep(0.01)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    return os.waitpid(pid, 0)[1], True


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


def _check(tree: Path, original: dict[str, bytes], port: dict[str, bytes], literal: bool) -> None:
    now = read_tree(tree)
    pairs = set()
    if not literal and (tree / JOURNAL_NAME).exists():
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
            assert not literal, f"{old} and {new} both exist"
            assert (old, new) in pairs, f"{old} and {new} both exist and the journal does not say why"
    strays = [n for n in now if n not in original and n not in port and not is_owned_name(os.path.basename(n))
              and not n.startswith(".git/")]
    assert not strays, strays
    assert missing_includes(tree, {k: v for k, v in now.items() if not is_owned_name(os.path.basename(k))}) == []


@pytest.mark.parametrize(("files", "kills", "vcs"), [(2000, KILLS, False), (300, max(4, KILLS // 4), True)],
                         ids=["swap", "file-by-file"])
def test_sigkill_in_place_many_times(tmp_path, files, kills, vcs):
    ruleset = load_for(Options())
    src = tmp_path / "src"
    make_tree(src, files)
    if vcs:  # a .git directory: the swap is unsafe, renames are committed file by file
        (src / ".git").mkdir()
        (src / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    original = {k: v for k, v in read_tree(src).items() if not k.startswith(".git/")}
    assert len(original) >= files * 0.99
    t0 = time.monotonic()
    migrate([str(src)], Options(jobs=2), "out", str(tmp_path / "out"), ruleset=ruleset)
    span = max(0.3, (time.monotonic() - t0) * 1.3)
    port = {k: v for k, v in read_tree(tmp_path / "out").items() if not k.startswith(".git/")}
    tree = tmp_path / "tree"
    shutil.copytree(src, tree)
    rnd = random.Random(7)
    kills_wanted, kills = kills, 0
    completions = 0
    sides: Counter[str] = Counter()
    history: list[str] = []  # the last kills, for a failure's message
    commit = span / 3  # how long the write phase lasts, learnt from kills that came too late
    while kills < kills_wanted:
        jobs = rnd.choice((1, 2))
        pid = _run_in_child(tree, ruleset, jobs)
        in_commit = False
        draw = rnd.random()
        if draw < 0.45:  # a random moment of the whole run (migration, pool, writes)
            time.sleep(rnd.uniform(0, span))
        elif draw < 0.6 and not vcs:  # just after the exchange: the swap's marker shows in the tree
            deadline = time.monotonic() + span * 2
            while not any(n.startswith(".musify-swap_") for n in os.listdir(tree)) and time.monotonic() < deadline:
                time.sleep(0.001)
            time.sleep(rnd.uniform(0, 0.02))
        else:  # a random moment of the write phase, which starts with the journal
            deadline = time.monotonic() + span * 2
            while not (tree / JOURNAL_NAME).exists() and time.monotonic() < deadline:
                time.sleep(0.002)
            time.sleep(rnd.uniform(0, commit))
            in_commit = True
        victim = pid
        workers = _children(pid)
        if workers and rnd.random() < 0.4:
            victim = rnd.choice(workers)
        try:
            os.kill(victim, signal.SIGKILL)
            kills += 1
        except ProcessLookupError:
            pass
        status, hung = _wait_run(pid, WORKER_GRACE if victim != pid else None)
        assert not hung, f"the run hung after its worker {victim} was killed; last kills: {history}"
        if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0 and victim == pid:
            kills -= 1  # it had finished: not a kill
            commit *= 0.7 if in_commit else 1
        time.sleep(0.05)
        left = [w for w in workers if os.path.exists(f"/proc/{w}") and _state(w) != "Z"]
        assert not left, f"workers {left} outlived their run"
        side = _side(tree)
        sides[side] += 1
        when = "any moment" if draw < 0.45 else "after the exchange" if draw < 0.6 and not vcs else "write phase"
        who = "parent" if victim == pid else "worker"
        history = [*history[-9:], (f"-j{jobs}, {when}, {who} killed, exit {os.waitstatus_to_exitcode(status)}, "
                                   f"left: {side}, {_stages(tmp_path)}")]
        _check(tree, original, port, literal=not vcs)
        if not (tree / JOURNAL_NAME).exists() and _ported(tree) == port:
            completions += 1  # done: start over from the original, for more kills mid-run
            shutil.rmtree(tree)
            shutil.copytree(src, tree)
    journal_before = (tree / JOURNAL_NAME).read_text() if (tree / JOURNAL_NAME).exists() else None
    record, _ = migrate([str(tree)], Options(jobs=2), "in-place", ruleset=ruleset)
    why = _first_failure(record)
    assert why is None, f"the final run failed a file: {why}; journal before it: {(journal_before or '')[:2000]}"
    fell_back = [d for f in record.files for d in f.diagnostics if d.id == "MU0020"]
    if vcs:  # the mode each case is about was the one used
        assert not {"swap, exchanged", "swap, not exchanged"} & set(sides)
    else:
        assert not fell_back and "file by file" not in sides
    final = read_tree(tree)
    print(f"{kills} kills, {completions} runs completed between them; where the kills left the tree: {dict(sides)}")
    assert [n for n in final if is_owned_name(os.path.basename(n))] == []
    # no staging directory; if one is left, what it holds and what the last kills left say which step failed
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".musify")] == [], \
        f"{_stages(tmp_path)}; journal before the final run: {(journal_before or '')[:500]}; last kills: {history}"
    assert _ported(tree) == port


def _stages(parent: Path) -> str:
    """The `.musify*` entries beside the tree, each with whether it holds a marker and its first
    names (a failure's message: a stage left behind says which step of the swap it came from)."""
    found = []
    for p in sorted(parent.iterdir()):
        if not p.name.startswith(".musify"):
            continue
        try:
            names = sorted(os.listdir(p)) if p.is_dir() else None
        except OSError as exc:
            names = [f"({exc.strerror})"]
        if names is None:
            found.append(p.name)
        else:
            marker = any(n.startswith(".musify-swap_") for n in names)
            found.append(f"{p.name} ({len(names)} entries, marker {'in' if marker else 'gone'}: {names[:8]})")
    return "stages: " + ("; ".join(found) if found else "none")


def _first_failure(record) -> str | None:
    """The first file the run failed on its own account (not held back, MU0016, for another
    file's sake), with its diagnostics: what a failing final run must name to be understood."""
    failed = [f for f in record.files if f.status == "failed"]
    first = next((f for f in failed if all(d.id != "MU0016" for d in f.diagnostics)), failed[0] if failed else None)
    if first is None:
        return None
    return (f"{first.path}: {first.error} {[(d.id, d.message) for d in first.diagnostics]} "
            f"({len(failed)} files failed in all)")


def _side(tree: Path) -> str:
    """Where a kill left the run: no journal, a file-by-file journal, or a swap before/after its exchange."""
    try:
        doc = json.loads((tree / JOURNAL_NAME).read_text())
    except FileNotFoundError:
        return "no journal"
    if "swap" not in doc:
        return "file by file"
    return "swap, exchanged" if (tree / doc["swap"]["marker"]).exists() else "swap, not exchanged"


def _ported(tree: Path) -> dict[str, bytes]:
    return {k: v for k, v in read_tree(tree).items() if not k.startswith(".git/")}


def _state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "Z"
