"""musify against the peer tool, side by side in one run (not a test: figures go to README.md).

The peer is `../shared/bench/musify_text_like.py`: the algorithm of Moore Threads' `musify-text`
(one Aho-Corasick automaton over its published mapping tables, a line-by-line replace at word
boundaries, no syntax awareness, no record). Both tools run as whole processes, as a user runs
them, alternately and on identical copies of each corpus:

- the peer: one process over every file musify migrates (load of the tables included);
- musify: `python -m musify migrate CORPUS -o OUT -j1 --json run.json -q` (start-up, discovery,
  the writes and the record included).

Corpora: (a) the replicated corpus of `bench_migrate.py` (--mb, default 10) and (b) each --tree
(a real-code tree, e.g. `--tree /usr/local/cuda/include`). The printed ratio is musify's wall
time over the peer's (below 1: musify is faster); each pair is timed back to back, so a noisy
shared machine moves both sides alike; the median and the range over --repeat pairs are shown.

    python benchmarks/bench_vs_peer.py

times the replicated corpus and, where the CUDA toolkit is installed, its headers (`--tree`
names other trees, `--no-tree` none), 5 rounds each (`--repeat`), in a work folder on tmpfs
(`/dev/shm`) where there is one (`--work`). tmpfs keeps the disk out of the ratio: both tools
still read and write every file, but on a disk file system each tree a round deletes slows the
file creations of the next minute (`default_work` says how), whatever the code.

`--baseline CHECKOUT` times another musify checkout (for instance a worktree of main, with
`python setup.py build_ext --inplace` run in it) in each round as well, so a change is measured
against the code before it under the same load.

The peer needs `pip install ahocorapy` and the tables under ../shared/reference/musify; without
either, only musify is timed and the peer is reported as skipped.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_migrate import build_corpus, with_bytecode  # the same replicated corpus as bench_migrate

REPO = Path(__file__).resolve().parents[1]
# ../shared beside the repository (a worktree one level deeper looks one level further up)
SHARED = next((d / "shared" for d in (REPO.parent, REPO.parent.parent) if (d / "shared").is_dir()),
              REPO.parent / "shared")
PEER = SHARED / "bench" / "musify_text_like.py"
TABLES = SHARED / "reference" / "musify"
_PEER_LAUNCH = (
    "import runpy, sys\n"
    "files = open(sys.argv[1], encoding='utf-8').read().split('\\n')\n"
    "sys.argv = [sys.argv[2], '--tables', sys.argv[3], *files]\n"
    "runpy.run_path(sys.argv[0], run_name='__main__')\n"
)


def peer_problem(peer: Path, tables: Path) -> str | None:
    """Why the peer cannot run here, or None."""
    if not peer.is_file():
        return f"peer script {peer} not found"
    if importlib.util.find_spec("ahocorapy") is None:
        return "ahocorapy is not installed (pip install ahocorapy)"
    if not (tables / "general.json").is_file():
        return f"peer tables not found under {tables}"
    return None


def timed(cmd: list[str], env: dict | None = None, cwd: Path | None = None) -> tuple[float, float, int, str]:
    """Wall seconds, CPU seconds (user + system, the process and its children), exit status and
    stderr's tail."""
    with tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, env=env, cwd=cwd)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        tail = err.read()[-2000:].decode(errors="replace")
    return wall, usage.ru_utime + usage.ru_stime, proc.returncode, tail


def settle() -> None:
    """Flush the file system before a timed run, so that no run pays for the write-back of the
    tree the one before it wrote or deleted (without it, whichever run came second in a round
    was slower by up to 2x on this machine's ext4, whatever its code)."""
    if hasattr(os, "sync"):
        os.sync()


def musify_run(corpus: Path, out: Path, jobs: int, checkout: Path = REPO) -> tuple[float, float]:
    if out.exists():
        shutil.rmtree(out)
    settle()
    # --no-cache: a timed run migrates every file (the warm-up run would otherwise fill the
    # incremental cache and the timed run replay it); the compiled rules stay cached
    cmd = [sys.executable, "-m", "musify", "migrate", str(corpus), "-o", str(out), "-j", str(jobs),
           "--json", str(out) + ".json", "-q", "--no-cache"]
    env = dict(os.environ, PYTHONPATH=str(checkout) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    # run from the checkout: `python -m` puts the working directory first on sys.path, so from
    # another checkout's folder (or beside an editable install) it would import that one's musify
    wall, cpu, rc, err = timed(cmd, with_bytecode(env, out.parent), cwd=checkout)
    if rc not in (0, 1):
        sys.exit(f"musify failed ({rc}): {err}")
    return wall, cpu


def migrated_files(record: Path, corpus: Path) -> list[str]:
    """The files musify read and migrated (from its record): what the peer is given too."""
    data = json.loads(record.read_text(encoding="utf-8"))
    root = str(corpus)
    out = []
    for f in data["files"]:
        if f["status"] in ("migrated", "unchanged"):
            rel = f.get("rel") or f["path"]
            out.append(os.path.join(root, *rel.split("/")))
    return out


def peer_run(files: list[str], corpus: Path, copy: Path, peer: Path, tables: Path) -> tuple[float, float]:
    """Time the peer on a fresh copy of the corpus (it rewrites files in place)."""
    if copy.exists():
        shutil.rmtree(copy)
    shutil.copytree(corpus, copy, symlinks=True)
    settle()
    listing = copy.with_suffix(".files")
    listing.write_text("\n".join(str(copy / os.path.relpath(f, corpus)) for f in files), encoding="utf-8")
    cmd = [sys.executable, "-c", _PEER_LAUNCH, str(listing), str(peer), str(tables)]
    wall, cpu, rc, err = timed(cmd, with_bytecode(os.environ, copy.parent))  # both tools with bytecode
    if rc != 0:
        sys.exit(f"peer failed ({rc}): {err}")
    return wall, cpu


def compare(name: str, corpus: Path, work: Path, repeat: int, peer_skip: str | None,
            peer: Path, tables: Path, baseline: Path | None = None) -> float | None:
    size = sum(p.stat().st_size for p in corpus.rglob("*") if p.is_file() and not p.is_symlink())
    print(f"== {name}: {corpus} ({size / 1e6:.1f} MB)", flush=True)
    out = work / f"{name}-musify"
    musify_run(corpus, out, 1)  # warm-up: the rules cache exists, as for any user after the first run
    files = migrated_files(Path(str(out) + ".json"), corpus)
    migrated_mb = sum(os.path.getsize(f) for f in files) / 1e6
    print(f"   {len(files)} files migrated, {migrated_mb:.1f} MB", flush=True)
    ratios, cpu_ratios, mus, peers = [], [], [], []
    for round_no in range(repeat):
        # another checkout, timed in the same round (before/after), first in every other round
        if baseline is not None and round_no % 2 == 0:
            b, bc = musify_run(corpus, work / f"{name}-baseline", 1, baseline)
        m, mc = musify_run(corpus, out, 1)
        if baseline is not None and round_no % 2 == 1:
            b, bc = musify_run(corpus, work / f"{name}-baseline", 1, baseline)
        mus.append(m)
        if peer_skip is None:
            p, pc = peer_run(files, corpus, work / f"{name}-peer", peer, tables)
            peers.append(p)
            ratios.append(m / p)
            cpu_ratios.append(mc / pc)
            print(f"   musify -j1 {m:6.2f} s ({mc:.2f} s CPU)   peer {p:6.2f} s ({pc:.2f} s CPU)   "
                  f"ratio {m / p:.2f} (CPU {mc / pc:.2f})", flush=True)
            if baseline is not None:
                print(f"   baseline -j1 {b:6.2f} s ({bc:.2f} s CPU)   ratio {b / p:.2f} (CPU {bc / pc:.2f})", flush=True)
        else:
            print(f"   musify -j1 {m:6.2f} s ({mc:.2f} s CPU, {migrated_mb / m:.1f} MB/s)", flush=True)
            if baseline is not None:
                print(f"   baseline -j1 {b:6.2f} s ({bc:.2f} s CPU)", flush=True)
    if peer_skip is not None:
        print(f"   peer skipped: {peer_skip}")
        return None
    ratio = statistics.median(ratios)
    print(f"   {name}: ratio musify/peer {ratio:.2f} (median of {repeat}; range {min(ratios):.2f}-"
          f"{max(ratios):.2f}; CPU-time ratio {statistics.median(cpu_ratios):.2f}); "
          f"musify {min(mus):.2f}-{max(mus):.2f} s, peer {min(peers):.2f}-{max(peers):.2f} s")
    return ratio


SHM_ROOM = 1 << 30  # the free space `default_work` asks of /dev/shm


def default_work(name: str) -> Path:
    """Where the corpora and outputs go by default: on tmpfs (`/dev/shm`) where there is one.

    On a disk file system the ratio said more about the file system than about either tool.
    This machine's root is ext4 without a journal, where creating a file first skips every inode
    deleted in the last minute (`recently_deleted`, looked up one by one in the inode table): each
    tree a round deleted (the last output, the peer's last copy, and the 4,928 files the peer
    itself replaces) made the next minute's file creations slower, so that musify's system time
    went 0.7 s, 1.4 s, 2.5 s over three runs in a row on the same corpus, and a bare run printed a
    ratio of 0.65 whose rounds ranged 0.34-0.76. On tmpfs both tools still read and write every
    file, through the page cache. Only where it has room for the corpora, their outputs and the
    peer's copies (a gigabyte free: a container's default /dev/shm holds 64 MB)."""
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK | os.X_OK):
        room = os.statvfs(shm)
        if room.f_bavail * room.f_frsize >= SHM_ROOM:
            return shm / f"musify-bench-{name}"
    return REPO / "benchmarks" / "out" / name


def default_trees() -> list[Path]:
    """The real-code tree timed when no --tree is given: the CUDA toolkit's headers where they
    are installed ($CUDA_HOME, $CUDA_PATH or /usr/local/cuda), so that the bare command times
    both kinds of corpus; none elsewhere."""
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if home and (Path(home) / "include").is_dir():
            return [Path(home) / "include"]
    return []


def corpus_arguments(description: str, work: str) -> argparse.ArgumentParser:
    """The options every side-by-side script takes: the corpora, the rounds, the work folder."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--mb", type=float, default=10.0, help="size of the replicated corpus in MB (0: none)")
    ap.add_argument("--tree", type=Path, action="append", default=[],
                    help="a real-code tree (repeatable; default: the CUDA toolkit's headers, where installed)")
    ap.add_argument("--no-tree", action="store_true", help="time no real-code tree (the replicated corpus only)")
    ap.add_argument("--repeat", type=int, default=5, help="timed rounds per corpus (default 5)")
    ap.add_argument("--work", type=Path, default=default_work(work),
                    help="work folder (default: under /dev/shm where it has a gigabyte free, else benchmarks/out)")
    return ap


def trees_of(args: argparse.Namespace) -> list[Path]:
    """The real-code trees to time: those given, else `default_trees()` (none with --no-tree)."""
    if args.no_tree:
        return []
    return [tree.resolve() for tree in args.tree or default_trees()]


def main() -> None:
    ap = corpus_arguments(__doc__.splitlines()[0], "vs_peer")
    ap.add_argument("--peer", type=Path, default=PEER)
    ap.add_argument("--tables", type=Path, default=TABLES)
    ap.add_argument("--baseline", type=Path, help="another musify checkout (its extensions built) to time "
                    "in each round too, e.g. a worktree of main: before/after side by side")
    args = ap.parse_args()
    args.work = args.work.resolve()  # the musify runs start in their checkout's folder
    args.tree = trees_of(args)
    args.work.mkdir(parents=True, exist_ok=True)
    skip = peer_problem(args.peer, args.tables)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; work folder {args.work}"
          + (f"; peer skipped: {skip}" if skip else ""), flush=True)
    results = {}
    if args.mb > 0:
        corpus = args.work / "replicated"
        build_corpus(REPO / "corpora", corpus, args.mb)
        results["replicated"] = compare("replicated", corpus, args.work, args.repeat, skip, args.peer, args.tables,
                                        args.baseline)
    for i, tree in enumerate(args.tree):
        if not tree.is_dir():
            sys.exit(f"--tree {tree}: not a directory")
        name = f"tree{i}-{tree.name}"
        results[name] = compare(name, tree.resolve(), args.work, args.repeat, skip, args.peer, args.tables,
                                args.baseline)
    print(f"load average {os.getloadavg()[0]:.1f} at the end")
    for name, ratio in results.items():
        if ratio is not None:
            print(f"{name}: {ratio:.2f} ({'meets' if ratio <= 0.33 else 'misses'} the 0.33 goal)")


if __name__ == "__main__":
    main()
