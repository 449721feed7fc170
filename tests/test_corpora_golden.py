"""`musify migrate corpora -o OUT` ports every corpus program to its committed golden, and a
second migration changes nothing (run on OUT, and each ported text re-migrated as CUDA)."""

from __future__ import annotations

from pathlib import Path

import pytest

from musify.api import migrate
from musify.options import Options
from musify.rules import load_ruleset
from musify.runner import migrate_text
from tools.update_goldens import CORPORA, expected_files

PROGRAMS = sorted(p.name for p in CORPORA.iterdir() if (p / "program.toml").exists())


@pytest.fixture(scope="module")
def port(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("port") / "out"
    record, _ = migrate([str(CORPORA)], Options(), "out", str(out))
    assert record.exit_code == 0, [d.console() for f in record.files for d in f.diagnostics if d.severity == "error"]
    return out


def golden(program: str) -> dict[str, bytes]:
    root = CORPORA / program / "expected"
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_there_are_enough_programs():
    assert len(PROGRAMS) >= 12


@pytest.mark.parametrize("program", PROGRAMS)
def test_port_matches_golden(port, program):
    expected = golden(program)
    assert expected, f"corpora/{program}/expected is missing: run python -m tools.update_goldens"
    assert expected_files(port, program) == expected


def test_rerun_on_the_port_changes_nothing(port, tmp_path):
    record, _ = migrate([str(port)], Options(), "out", str(tmp_path / "again"))
    assert record.totals["edits"] == 0
    for program in PROGRAMS:
        assert expected_files(tmp_path / "again", program) == expected_files(port, program)


@pytest.mark.parametrize("program", PROGRAMS)
def test_ported_text_is_a_fixed_point(program):
    rules = load_ruleset()
    for rel, data in golden(program).items():
        text = data.decode("utf-8", "surrogateescape")
        again, _, edits = migrate_text(text, rel.replace(".mu", ".cu"), rules, Options())
        assert edits == [] and again == text, f"{program}/{rel} changes when migrated again"
