"""The diagnostics' documentation pages, for `musify explain` and the report's links.

They ship inside the package (an installed musify) or sit in the checkout's docs/; musify.resources
knows which, so this works offline from any directory.
"""

from __future__ import annotations

from musify import resources

DOCS = resources.data_dir("docs")


def diagnostic_page(diag_id: str) -> str | None:
    """The Markdown page of `diag_id`, or None where it has none."""
    path = DOCS / "diagnostics" / f"{diag_id}.md"
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return None
