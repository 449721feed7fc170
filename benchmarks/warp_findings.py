"""Warp-size findings per cause per function in a run record (not a test: figures go to README.md).

    python -m musify migrate CORPUS -o OUT --json run.json -q
    python benchmarks/warp_findings.py run.json

Prints how many warp-size diagnostics the run raised (by ID and severity), how many further sites
they group, and the most diagnostics any one (file, function, cause) got; the target is 1.
"""

from __future__ import annotations

import json
import sys
from collections import Counter

WARP_IDS = {"MU2020", "MU2021", "MU2022", "MU2023", "MU2024", "MU2025", "MU2041"}


def summary(record: dict) -> tuple[Counter, int, int]:
    """(diagnostics by (id, severity), grouped extra sites, max diagnostics per file/function/cause)."""
    per: Counter = Counter()
    by_id: Counter = Counter()
    sites = 0
    for f in record["files"]:
        for d in f.get("diagnostics") or []:
            if d["id"] in WARP_IDS:
                per[f["path"], d["args"].get("func"), d["id"]] += 1
                by_id[d["id"], d["severity"]] += 1
                sites += len(d.get("sites") or [])
    return by_id, sites, max(per.values(), default=0)


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    with open(sys.argv[1], encoding="utf-8") as fh:
        record = json.load(fh)
    by_id, sites, worst = summary(record)
    print(f"{len(record['files'])} files, {sum(by_id.values())} warp-size diagnostics grouping {sites} more sites")
    for (diag, severity), n in sorted(by_id.items()):
        print(f"  {diag} {severity}: {n}")
    print(f"most diagnostics for one (file, function, cause): {worst}")


if __name__ == "__main__":
    main()
