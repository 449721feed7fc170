"""Every CUDA API name in HIPIFY's catalogue is known to the RuleSet.

Known means a record says what happens to it: renamed, unchanged, shimmed, or unsupported
(with a diagnostic, so a user is told). The catalogue is read from `../shared/reference/`
and never copied; a checkout without it skips.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from musify.diagnostics import CATALOGUE
from musify.rules.loader import load_ruleset

REFERENCE = Path(__file__).resolve().parents[1].parent / "shared" / "reference"
CATALOGUE_FILE = REFERENCE / "cuda_api_names.txt"
DEFAULT_UNSUPPORTED_DIAG = "MU1002"


@pytest.fixture(scope="module")
def names() -> list[str]:
    if not CATALOGUE_FILE.is_file():
        pytest.skip(f"{CATALOGUE_FILE} not found")
    return [line.strip() for line in CATALOGUE_FILE.read_text(encoding="utf-8").splitlines()
            if line.strip()]


@pytest.fixture(scope="module")
def ruleset():
    return load_ruleset()


def _family(name: str) -> str:
    """A rough prefix (`cublas`, `CUDA_`, `__nv`) to group the missing names in the printout."""
    m = re.match(r"_*[a-z]+|_*[A-Z]+_?|_*[A-Z][a-z]+", name)
    return m.group(0) if m else name[:4]


def test_every_catalogue_name_is_known(names, ruleset) -> None:
    missing = [n for n in names if n not in ruleset.names]
    known = len(names) - len(missing)
    print(f"\ncatalogue coverage: {known}/{len(names)} = {100 * known / len(names):.2f}%")
    if missing:
        print("missing by prefix:", Counter(_family(n) for n in missing).most_common(15))
        print("first missing:", " ".join(missing[:40]))
    assert not missing, f"{len(missing)} catalogue names are in no rule, e.g. {missing[:10]}"


def test_unsupported_catalogue_names_carry_a_diagnostic(names, ruleset) -> None:
    bad = []
    for name in names:
        rule = ruleset.names.get(name)
        if rule is not None and rule.status == "unsupported":
            diag = rule.diag or DEFAULT_UNSUPPORTED_DIAG
            if diag not in CATALOGUE:
                bad.append(f"{rule.origin}: {name}: unknown diagnostic {diag}")
    assert not bad, "\n".join(bad[:40])
