"""Runtime, driver, device, math and fp rules agree with Moore Threads' musify tables.

On the names both know, our MUSA spelling must equal musify's `general.json` (identifiers) or
`include.json` (headers) for at least 99% of them, and every difference must carry a `note:`
saying why.  The tables are read from `../shared/reference/musify/` and never copied.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from musify.rules import load_ruleset

MUSIFY = Path(__file__).resolve().parents[1].parent / "shared" / "reference" / "musify"
CORE_DIRS = ("runtime", "driver", "device", "math", "fp16", "bf16", "fp8", "headers")


def _core(origin: str) -> bool:
    parts = Path(origin.split(":")[0]).parts
    return len(parts) >= 2 and parts[0] == "rules" and parts[1] in CORE_DIRS


def test_core_rules_agree_with_musify_tables() -> None:
    if not (MUSIFY / "general.json").is_file() or not (MUSIFY / "include.json").is_file():
        pytest.skip(f"musify tables not found under {MUSIFY}")
    names = json.loads((MUSIFY / "general.json").read_text(encoding="utf-8"))
    headers = json.loads((MUSIFY / "include.json").read_text(encoding="utf-8"))
    shared = agree = 0
    unexplained = []
    for rule in load_ruleset().all_rules():
        table = headers if rule.kind == "header" else names
        if not _core(rule.origin) or rule.cuda not in table:
            continue
        shared += 1
        ours = None if rule.status == "unsupported" else (rule.musa or rule.cuda)
        if ours == table[rule.cuda]:
            agree += 1
        elif not rule.note:
            unexplained.append(f"{rule.origin}: {rule.cuda} -> {ours}, musify says {table[rule.cuda]}")
    assert shared > 3000, f"only {shared} names shared with musify's tables"
    print(f"core agreement with musify: {agree}/{shared} = {agree / shared:.2%}")
    assert agree / shared >= 0.99
    assert not unexplained, "differences without a note:\n" + "\n".join(unexplained[:40])
