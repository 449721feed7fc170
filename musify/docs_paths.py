"""Where the documentation lives, for `musify explain` (docs ship beside the package in a checkout)."""

from __future__ import annotations

from pathlib import Path

DOCS = Path(__file__).resolve().parents[1] / "docs"


def diagnostic_page(diag_id: str) -> str | None:
    path = DOCS / "diagnostics" / f"{diag_id}.md"
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return None
