"""Golden tests in HIPIFY's style: in tests/golden/cases/*, a `// CHECK: <text>` comment line says
what the next line must become. The whole file is migrated with the built-in rules (the CHECK
lines are comments, so they pass through untouched) and every checked line is compared.
A `// flags:` first line passes options (`--rewrite-comments`, `--rewrite-strings`).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from musify.options import Options
from musify.rules import load_ruleset
from musify.runner import migrate_text

CASES = sorted(p for p in (Path(__file__).parent / "cases").iterdir() if p.suffix in (".cu", ".cuh", ".cpp"))
_CHECK = re.compile(r"^\s*// CHECK: ?(.*)$")
_FLAGS = {"--rewrite-comments": "rewrite_comments", "--rewrite-strings": "rewrite_strings"}


@pytest.fixture(scope="module")
def rules():
    return load_ruleset()


def expectations(lines: list[str]) -> list[tuple[int, str]]:
    """(0-based index of the checked line, expected text)."""
    out = []
    for i, line in enumerate(lines):
        m = _CHECK.match(line)
        if m and i + 1 < len(lines) and not _CHECK.match(lines[i + 1]):
            out.append((i + 1, m.group(1)))
    return out


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_case(case: Path, rules) -> None:
    text = case.read_text(encoding="utf-8")
    lines = text.split("\n")
    options = Options()
    if lines[0].startswith("// flags:"):
        for flag in lines[0].split(":", 1)[1].split():
            options = options.with_(**{_FLAGS[flag]: True})
    new, _ctx, _ = migrate_text(text, case.name, rules, options)
    out = new.split("\n")
    assert len(out) == len(lines)
    checks = expectations(lines)
    assert checks, f"{case.name} has no CHECK lines"
    failures = [f"line {i + 1}: expected {want!r}\n          got      {out[i]!r}"
                for i, want in checks if out[i].rstrip() != want.rstrip()]
    assert not failures, "\n".join(failures)
    # the CHECK lines themselves are comments: never rewritten
    for i, line in enumerate(lines):
        if _CHECK.match(line):
            assert out[i] == line
