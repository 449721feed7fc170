"""Every catalogued diagnostic has its documentation page with the four sections users rely on."""

from pathlib import Path

import pytest

from musify.diagnostics import CATALOGUE

DOCS = Path(__file__).resolve().parents[1] / "docs" / "diagnostics"


@pytest.mark.parametrize("diag_id", sorted(CATALOGUE))
def test_page_exists_with_sections(diag_id):
    page = DOCS / f"{diag_id}.md"
    assert page.exists(), f"missing docs/diagnostics/{diag_id}.md"
    text = page.read_text(encoding="utf-8")
    for section in ("## What", "## Why", "## How to fix", "## Example"):
        assert section in text, f"{page.name} lacks a '{section}' section"


def test_explain_prints_the_page():
    from click.testing import CliRunner

    from musify.cli import main

    result = CliRunner().invoke(main, ["explain", "mu1001"])
    assert result.exit_code == 0
    assert "looks like a CUDA vendor name" in result.output
    bad = CliRunner().invoke(main, ["explain", "MU9999"])
    assert bad.exit_code == 2
