"""The committed coverage tables in docs/coverage/ are exactly what `musify rules docs` generates
from the rules (regenerate with `musify rules docs`), and the generator itself behaves."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from musify.cli import main
from musify.rules.docs_tables import STAMP, all_stats, render_all, stale_tables, write_tables
from musify.rules.loader import load_ruleset
from musify.rules.model import Rule
from tests.conftest import small_ruleset

REPO = Path(__file__).resolve().parents[1]


def test_committed_tables_are_current(tmp_path):
    ruleset = load_ruleset(REPO / "rules")
    committed = REPO / "docs" / "coverage"
    problems = stale_tables(committed, ruleset)
    assert not problems, "coverage tables are stale; run `musify rules docs`:\n" + "\n".join(problems[:20])
    write_tables(tmp_path, ruleset)  # regenerating into a fresh directory gives the same bytes
    for page in tmp_path.iterdir():
        assert (committed / page.name).read_bytes() == page.read_bytes(), page.name


def test_pages_and_counts():
    rs = small_ruleset()
    pages = render_all(rs, with_csv=True)
    assert {"README.md", "cudart.md", "cudart.csv", "cudnn.md", "thrust.md"} <= set(pages)
    cudart = pages["cudart.md"]
    assert cudart.startswith(STAMP + "\n")
    assert "| `cudaMalloc` | `musaMalloc` | renamed |  |" in cudart
    assert "| `cudaGraphInstantiateWithParams` | — | unsupported | no MUSA counterpart |" in cudart
    assert "| unsupported | 1 |" in cudart
    stats = {s.library: s for s in all_stats(rs)}
    assert stats["cudart"].names == sum(1 for r in rs.all_rules() if r.library == "cudart")
    assert stats["cudnn"].percent == 0.0
    assert "| [cudart](cudart.md) |" in pages["README.md"]
    assert "cudaMalloc,musaMalloc,function,renamed" in pages["cudart.csv"]


def test_inferred_and_pipes_are_rendered():
    rs = small_ruleset()
    rs.add(Rule("cudaX", "musaX", "function", "cudart", "renamed", inferred=True, note="a | b"))
    page = render_all(rs)["cudart.md"]
    assert "| `cudaX` | `musaX` | renamed (inferred) | a \\| b |" in page


def test_write_removes_only_stamped_orphans_and_check_sees_staleness(tmp_path):
    rs = small_ruleset()
    (tmp_path / "musify-differences.md").write_text("# hand-written, not ours\n")
    (tmp_path / "gone.md").write_text(STAMP + "\n# a library that no longer exists\n")
    changed = write_tables(tmp_path, rs)
    assert "gone.md" in changed and not (tmp_path / "gone.md").exists()
    assert (tmp_path / "musify-differences.md").exists()
    assert stale_tables(tmp_path, rs) == []
    assert write_tables(tmp_path, rs) == []  # idempotent
    rs.add(Rule("cudaNew", "musaNew", "function", "cudart", "renamed"))
    assert stale_tables(tmp_path, rs) == ["cudart.md: out of date", "README.md: out of date"]


def test_docs_command_writes_and_checks(tmp_path, monkeypatch):
    rules = tmp_path / "rules" / "rt"
    rules.mkdir(parents=True)
    (rules / "r.yaml").write_text("schema: musify-rules/1\nlibrary: cudart\nkind: function\nstatus: renamed\n"
                                  "rules:\n  - {cuda: cudaMalloc, musa: musaMalloc}\n")
    monkeypatch.setenv("MUSIFY_RULES_DIR", str(tmp_path / "rules"))
    monkeypatch.setenv("MUSIFY_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "cov"
    runner = CliRunner()
    assert runner.invoke(main, ["rules", "docs", "--check", "--out", str(out)]).exit_code == 1
    result = runner.invoke(main, ["rules", "docs", "--out", str(out), "--csv"])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == ["README.md", "cudart.csv", "cudart.md"]
    assert runner.invoke(main, ["rules", "docs", "--check", "--out", str(out)]).exit_code == 0
