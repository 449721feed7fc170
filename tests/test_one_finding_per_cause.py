"""One finding per cause: no (file, line, column) carries two diagnostics with the same ID, in any
corpus program or golden case. A grouped finding lists its other sites; those count too, so a
site may not appear both as a diagnostic of its own and inside another of the same ID."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from musify.options import Options
from musify.rules import load_ruleset
from musify.runner import migrate_text
from tests.hazards.test_golden import options_from, parse_case

REPO = Path(__file__).resolve().parents[1]
SOURCES = (".cu", ".cuh", ".cpp", ".h", ".hpp")
CORPUS = sorted(p for p in (REPO / "corpora").glob("*/*") if p.suffix in SOURCES)
GOLDEN = sorted(p for p in (REPO / "tests" / "golden" / "cases").iterdir() if p.suffix in SOURCES)
HAZARD = sorted((REPO / "tests" / "hazards" / "cases").glob("*.cu"))


@pytest.fixture(scope="module")
def rules():
    return load_ruleset()


def repeated(diagnostics) -> list[str]:
    places = Counter()
    for d in diagnostics:
        for line, col in [(d.line, d.column), *d.sites]:
            places[d.path, line, col, d.id] += 1
    return [f"{p}:{line}:{col}: {diag} x{n}" for (p, line, col, diag), n in places.items() if n > 1]


def test_there_is_something_to_check():
    assert len(CORPUS) >= 12 and GOLDEN and HAZARD


@pytest.mark.parametrize("path", CORPUS + GOLDEN, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_corpus_and_golden_files(path: Path, rules) -> None:
    text = path.read_text(encoding="utf-8")
    options = Options(rewrite_comments=True, rewrite_strings=True) if "// flags:" in text[:40] else Options()
    _, ctx, _ = migrate_text(text, path.name, rules, options)
    assert not repeated(ctx.diagnostics)


@pytest.mark.parametrize("path", HAZARD, ids=lambda p: p.stem)
def test_hazard_cases(path: Path, rules) -> None:
    lines, _, _, flags = parse_case(path.read_text(encoding="utf-8"))
    for arch in ("mp_22", "mp_31"):
        options = options_from(flags).with_(arch=arch) if "--arch" not in flags else options_from(flags)
        _, ctx, _ = migrate_text("\n".join(lines) + "\n", path.name, rules, options)
        assert not repeated(ctx.diagnostics), arch


def test_the_two_known_doubles_are_single(rules) -> None:
    """`texture<float,1> tex;` once raised MU2031 twice at 2:1, and a programmatic-launch call raised
    MU1002 and MU2033 at one column: one cause, one finding."""
    src = ("#include <cuda_runtime.h>\ntexture<float, 1> tex;\n"
           "__global__ void k() { cudaGridDependencySynchronize(); }\n")
    _, ctx, _ = migrate_text(src, "t.cu", rules, Options())
    at = Counter((d.line, d.column) for d in ctx.diagnostics)
    assert [d.id for d in ctx.diagnostics if d.line == 2] == ["MU2031"]
    assert [d.id for d in ctx.diagnostics if d.line == 3] == ["MU2033"]
    assert max(at.values()) == 1
