"""Golden tests in HIPIFY CHECK style over tests/hazards/cases/*.cu.

In a case file, `// CHECK: <line>` gives the expected output of the next code line and
`// DIAG: MU2xxx[:severity][, ...]` the diagnostics expected on it; a first-line `// flags: ...`
sets options (`--arch mp_31`, `--arch-map 80=210`, `--no-shims`). The annotation lines are
removed before migrating, and every MU2xxx diagnostic raised must be expected: a line without
`// DIAG:` must raise none (the negatives). Positions are compared, not sets: each site of a
grouped finding counts on its own line, and an ID listed once must be raised once there, so two
diagnostics of one cause at one place fail the test.
"""

from __future__ import annotations

import difflib
import re
import shlex
from collections import Counter
from pathlib import Path

import pytest

from musify.arch import parse_arch_map
from musify.options import Options
from musify.runner import migrate_text

CASES = sorted((Path(__file__).parent / "cases").glob("*.cu"))
_NOTE = re.compile(r"^\s*//\s*(CHECK|DIAG|flags):\s?(.*)$")


def parse_case(text: str) -> tuple[list[str], dict[int, str], dict[int, list[str]], list[str]]:
    """(input lines, line -> expected output, line -> expected diagnostics, flags); lines 1-based."""
    lines, checks, diags, flags = [], {}, {}, []
    pending_check, pending_diag = None, []
    for raw in text.splitlines():
        m = _NOTE.match(raw)
        if m:
            kind, value = m.groups()
            if kind == "CHECK":
                pending_check = value
            elif kind == "DIAG":
                pending_diag += [d.strip() for d in value.split(",") if d.strip()]
            else:
                flags = shlex.split(value)
            continue
        lines.append(raw)
        if pending_check is not None:
            checks[len(lines)] = pending_check
        if pending_diag:
            diags[len(lines)] = pending_diag
        pending_check, pending_diag = None, []
    return lines, checks, diags, flags


def options_from(flags: list[str]) -> Options:
    opts = Options()
    it = iter(flags)
    for flag in it:
        if flag == "--arch":
            opts = opts.with_(arch=next(it))
        elif flag == "--arch-map":
            opts = opts.with_(arch_map=parse_arch_map(next(it)))
        elif flag == "--no-shims":
            opts = opts.with_(shims=False)
        else:
            raise ValueError(f"unknown flag {flag}")
    return opts


def line_map(before: list[str], after: list[str]) -> dict[int, int]:
    """Input line -> output line (1-based), allowing inserted lines (a shim include)."""
    out = {}
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes():
        if tag in ("equal", "replace") and i2 - i1 == j2 - j1:
            for k in range(i2 - i1):
                out[i1 + k + 1] = j1 + k + 1
    return out


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_golden(case: Path, ruleset) -> None:
    lines, checks, diags, flags = parse_case(case.read_text(encoding="utf-8"))
    source = "\n".join(lines) + "\n"
    new, ctx, _ = migrate_text(source, case.name, ruleset, options_from(flags))
    out_lines = new.splitlines()
    where = line_map(lines, out_lines)
    for line, expected in checks.items():
        got = out_lines[where[line] - 1] if line in where else "<line not found in output>"
        assert got.strip() == expected.strip(), f"{case.name}:{line}: expected {expected!r}, got {got!r}"
    raised: Counter = Counter()
    for d in ctx.diagnostics:
        if d.id[:3] in ("MU2", "MU3"):
            for line in [d.line, *(site[0] for site in d.sites)]:
                wanted = diags.get(line, [])
                raised[line, f"{d.id}:{d.severity}" if f"{d.id}:{d.severity}" in wanted else d.id] += 1
    expected = Counter((line, d) for line, ids in diags.items() for d in ids)
    messages = "\n".join(d.console() for d in ctx.diagnostics)
    assert raised == expected, f"{case.name}: diagnostics differ\n{messages}"
    _, _, edits2 = migrate_text(new, case.name, ruleset, options_from(flags))
    assert not edits2, f"{case.name}: migrating the output again changed it: {edits2}"
