"""How low musify's ratio to the peer could go if passes cost nothing (not a test: figures go to README.md).

`bench_vs_peer.py` says how far musify is from the 0.33 goal; this script says where the rest of
the gap lies, by timing, in each round and on the same corpus, the peer and three musify runs:

- `all`: the normal `musify migrate -j1` run (every pass);
- `only`: only the passes named by --keep (default: `identifiers,includes`, the two that make the
  renames a text replacer also makes), every other pass left out of the run's plan;
- `none`: no pass at all: start-up, discovery, planning, reading, the scan, the per-file
  bookkeeping, the writes and the record (its edits, diagnostics and totals are then empty).

The `only` and `none` runs do less than musify does (their ports are not correct migrations): they
are floors, not products. A floor above the goal says that no work on the left-out passes can meet
it; what the floor itself is made of is then the thing to change. The passes are left out by a
launcher that wraps `musify.passes.languages.plan`, so musify itself has no switch for it.

    python benchmarks/bench_floor.py --mb 10 --tree /usr/local/cuda/include --repeat 3 --work /dev/shm/bfl
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_migrate import build_corpus, with_bytecode
from bench_vs_peer import (
    PEER,
    REPO,
    TABLES,
    corpus_arguments,
    migrated_files,
    peer_problem,
    peer_run,
    settle,
    timed,
    trees_of,
)

# runs `musify migrate` with only the passes named in $MUSIFY_FLOOR_KEEP (comma-separated) planned
_LAUNCH = (
    "import os, sys\n"
    "import musify.passes.languages as languages\n"
    "keep = set(filter(None, os.environ['MUSIFY_FLOOR_KEEP'].split(',')))\n"
    "plan = languages.plan\n"
    "def only(language, ruleset, options):\n"
    "    made = plan(language, ruleset, options)\n"
    "    return made._replace(passes=tuple(p for p in made.passes if p[0] in keep))\n"
    "languages.plan = only\n"
    "sys.argv = ['musify', *sys.argv[1:]]\n"
    "from musify.cli import main\n"
    "main()\n"
)


def musify_floor(corpus: Path, out: Path, keep: str | None) -> tuple[float, float]:
    """Wall and CPU seconds of one `migrate -j1` run: every pass (`keep` None) or only `keep`."""
    if out.exists():
        shutil.rmtree(out)
    settle()
    args = ["migrate", str(corpus), "-o", str(out), "-j", "1", "--json", str(out) + ".json", "-q", "--no-cache"]
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    if keep is None:
        cmd = [sys.executable, "-m", "musify", *args]
    else:
        cmd = [sys.executable, "-c", _LAUNCH, *args]
        env["MUSIFY_FLOOR_KEEP"] = keep
    wall, cpu, rc, err = timed(cmd, with_bytecode(env, out.parent), cwd=REPO)
    if rc not in (0, 1):
        sys.exit(f"musify failed ({rc}): {err}")
    return wall, cpu


def floors(name: str, corpus: Path, work: Path, repeat: int, keep: str) -> dict[str, float]:
    """The median ratio to the peer of each variant, over `repeat` rounds."""
    out = work / f"{name}-floor"
    musify_floor(corpus, out, None)  # warm-up: the rules cache and the bytecode exist
    files = migrated_files(Path(str(out) + ".json"), corpus)
    print(f"== {name}: {corpus} ({len(files)} files migrated)", flush=True)
    variants = {"all": None, f"only {keep}": keep, "none": ""}
    ratios: dict[str, list[float]] = {v: [] for v in variants}
    for _ in range(repeat):
        times = {v: musify_floor(corpus, out, k)[0] for v, k in variants.items()}
        peer, _cpu = peer_run(files, corpus, work / f"{name}-peer", PEER, TABLES)
        print("   " + "   ".join(f"{v} {t:.2f} s" for v, t in times.items()) + f"   peer {peer:.2f} s", flush=True)
        for v, t in times.items():
            ratios[v].append(t / peer)
    result = {v: statistics.median(r) for v, r in ratios.items()}
    print("   ratio to the peer (median): " + ", ".join(f"{v} {r:.2f}" for v, r in result.items()), flush=True)
    return result


def main() -> None:
    ap = corpus_arguments(__doc__.splitlines()[0], "floor")
    ap.add_argument("--keep", default="identifiers,includes", help="the passes the `only` run keeps")
    args = ap.parse_args()
    skip = peer_problem(PEER, TABLES)
    if skip:
        sys.exit(f"the peer cannot run here: {skip}")
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
    if args.mb > 0:
        corpus = work / "replicated"
        build_corpus(REPO / "corpora", corpus, args.mb)
        floors("replicated", corpus, work, args.repeat, args.keep)
    for i, tree in enumerate(trees_of(args)):
        if not tree.is_dir():
            sys.exit(f"--tree {tree}: not a directory")
        floors(f"tree{i}-{tree.name}", tree.resolve(), work, args.repeat, args.keep)


if __name__ == "__main__":
    main()
