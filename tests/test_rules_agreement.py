"""Our rules against Moore Threads' musify tables: >= 99% agreement, every difference explained.

The tables are read from `../shared/reference/` (never copied into the repo); a checkout
without them skips. Until every library's rules are written this test shows how far we are.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from musify.rules.loader import load_ruleset
from musify.rules.model import Rule, RuleSet
from tools.musify_differences import UNSUPPORTED, compare, load_oracle, our_spelling, render

REFERENCE = Path(__file__).resolve().parents[1].parent / "shared" / "reference"


@pytest.fixture(scope="module")
def oracle() -> tuple[dict[str, str], dict[str, str]]:
    try:
        return load_oracle(REFERENCE)
    except OSError:
        pytest.skip(f"musify reference tables not found under {REFERENCE}")


@pytest.fixture(scope="module")
def comparison(oracle):
    return compare(load_ruleset(), *oracle)


def _rule(cuda: str, musa: str | None, status: str = "renamed", note: str | None = None,
          kind: str = "function") -> Rule:
    return Rule(cuda=cuda, musa=musa, kind=kind, library="test", status=status, note=note,
                origin="test.yaml:1")


def test_compare_counts_only_shared_keys_and_keeps_notes() -> None:
    rs = RuleSet()
    rs.add(_rule("cuA", "muA"))
    rs.add(_rule("cuB", "muBee", note="irregular on purpose"))
    rs.add(_rule("cuC", None, status="unsupported"))
    rs.add(_rule("only_ours", "x"))
    rs.add(_rule("a.h", "b.h", kind="header"))
    result = compare(rs, {"cuA": "muA", "cuB": "muB", "cuC": "muC", "only_musify": "y"},
                     {"a.h": "c.h"})
    assert (result.shared, result.agreed) == (4, 1)
    assert [(d.cuda, d.ours) for d in result.differences] == [
        ("a.h", "b.h"), ("cuB", "muBee"), ("cuC", UNSUPPORTED)]
    assert [d.cuda for d in result.missing_notes] == ["a.h", "cuC"]
    page = render(result)
    assert "`cuB` | `muB` | `muBee` | irregular on purpose" in page
    assert "**no note** (test.yaml:1)" in page


def test_our_spelling_of_unchanged_is_the_cuda_name() -> None:
    assert our_spelling(_rule("cub", "cub", status="unchanged")) == "cub"


def test_agreement_with_musify_is_at_least_99_percent(comparison) -> None:
    print(f"\nagreement with musify: {comparison.agreed}/{comparison.shared} "
          f"= {100 * comparison.agreement:.2f}%")
    for diff in comparison.differences[:20]:
        print(f"  {diff.library}: {diff.cuda}: musify {diff.musify}, ours {diff.ours}")
    assert comparison.shared > 0, "no rule shares a name with musify's tables"
    assert comparison.agreement >= 0.99


def test_every_difference_has_a_note(comparison) -> None:
    missing = comparison.missing_notes
    shown = "\n".join(f"  {d.origin}: {d.cuda} (musify {d.musify}, ours {d.ours})" for d in missing[:40])
    assert not missing, f"{len(missing)} records differ from musify without a note:\n{shown}"


def test_differences_page_is_current(comparison) -> None:
    page = Path(__file__).resolve().parents[1] / "docs" / "coverage" / "musify-differences.md"
    assert page.read_text(encoding="utf-8") == render(comparison), \
        "docs/coverage/musify-differences.md is stale: run python -m tools.musify_differences"
