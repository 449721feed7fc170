"""corpora/warp32_only marks every line that breaks at 128 lanes with `// WARP32`: the warp-size
pass must flag exactly those lines, and corpora/warp_agnostic must raise no warp diagnostic."""

from __future__ import annotations

from pathlib import Path

import pytest

from musify.options import Options
from musify.runner import migrate_text

CORPORA = Path(__file__).resolve().parents[2] / "corpora"
WARP_IDS = ("MU2020", "MU2021", "MU2022", "MU2023", "MU2024", "MU2025", "MU2041")


def _warp_lines(path: Path, ruleset) -> set[int]:
    """Every line a warp-size finding names: its first site and the grouped other sites."""
    _, ctx, _ = migrate_text(path.read_text(encoding="utf-8"), path.name, ruleset, Options())
    return {line for d in ctx.diagnostics if d.id in WARP_IDS for line in (d.line, *(s[0] for s in d.sites))}


def test_warp32_marked_lines_exactly(ruleset) -> None:
    path = CORPORA / "warp32_only" / "warp32_only.cu"
    if not path.exists():
        pytest.skip("corpora/warp32_only not present")
    marked = {i for i, line in enumerate(path.read_text().splitlines(), 1) if "// WARP32" in line}
    assert marked, "the corpus program lost its markers"
    assert _warp_lines(path, ruleset) == marked


def test_warp_agnostic_raises_nothing(ruleset) -> None:
    files = sorted((CORPORA / "warp_agnostic").glob("*.cu*"))
    if not files:
        pytest.skip("corpora/warp_agnostic not present")
    for path in files:
        assert _warp_lines(path, ruleset) == set(), path.name
