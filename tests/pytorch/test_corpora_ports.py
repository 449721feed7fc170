"""The PyTorch-extension, CMake and Makefile corpora: what their ports must satisfy beyond
matching the goldens (tests/test_corpora_golden.py) and running on the emulator
(tests/emu/test_corpora_emu.py)."""

from __future__ import annotations

import ast
import difflib
import io
import re
import tokenize
from pathlib import Path

import pytest

from musify.discover import BUILD_KINDS, classify
from musify.frontend.cmake import scan_cmake
from musify.frontend.make import scan_make, scan_shell
from musify.options import Options
from musify.passes.includes import build_project_info
from musify.rules import load_ruleset
from musify.rules.vocab import cmake_vocab, python_vocab, records, toolchain_vocab
from musify.runner import migrate_text

CORPORA = Path(__file__).resolve().parents[2] / "corpora"
PROGRAMS = sorted(p.parent.name for p in CORPORA.glob("*/program.toml")
                  if any(classify(f.name) in BUILD_KINDS for f in p.parent.rglob("*") if "expected" not in f.parts))
BEST_GUESS_OR_REPORTED = re.compile(r"MU60\d\d")


def test_there_are_the_promised_corpora():
    torch_ext = [p for p in PROGRAMS if p.startswith("torch_ext")]
    assert len(torch_ext) >= 3
    assert len([p for p in PROGRAMS if (CORPORA / p / "CMakeLists.txt").exists()]) >= 3
    assert len([p for p in PROGRAMS if (CORPORA / p / "Makefile").exists()]) >= 2
    assert (CORPORA / "torch_ext_setup" / "setup.py").exists()


def _migrated(program: str) -> dict[str, tuple[str, str, list, list]]:
    """rel -> (original text, ported text, edits, diagnostics) for every Python and build file."""
    root = CORPORA / program
    files = [p for p in sorted(root.rglob("*")) if p.is_file() and "expected" not in p.relative_to(root).parts]
    rels = [p.relative_to(root).as_posix() for p in files]
    renames = {r: r[:-3] + ".mu" if r.endswith(".cu") else r[:-4] + ".muh" for r in rels if r.endswith((".cu", ".cuh"))}
    project = build_project_info([r for r in rels if classify(r) != "other"], renames)
    rules = _rules()
    out = {}
    for path, rel in zip(files, rels):
        if classify(rel) not in BUILD_KINDS:
            continue
        text = path.read_text(encoding="utf-8")
        new, ctx, edits = migrate_text(text, rel, rules, Options(), project)
        out[rel] = (text, new, edits, ctx.diagnostics)
    return out


_CACHE: dict = {}


def _rules():
    if "rules" not in _CACHE:
        _CACHE["rules"] = load_ruleset()
    return _CACHE["rules"]


@pytest.fixture(scope="module")
def ports() -> dict[str, dict]:
    return {p: _migrated(p) for p in PROGRAMS}


def _python_code_tokens(text: str):
    return list(tokenize.generate_tokens(io.StringIO(text).readline))


def _docstrings(text: str) -> list[str]:
    tree = ast.parse(text)
    nodes = [tree] + [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    return [ast.get_docstring(n, clean=False) or "" for n in nodes]


@pytest.mark.parametrize("program", PROGRAMS)
def test_ported_python_parses_and_keeps_comments_and_docstrings(ports, program):
    for rel, (old, new, _, _) in ports[program].items():
        if classify(rel) != "python":
            continue
        ast.parse(new, rel)
        comments = [t.string for t in _python_code_tokens(old) if t.type == tokenize.COMMENT]
        assert comments == [t.string for t in _python_code_tokens(new) if t.type == tokenize.COMMENT], rel
        assert _docstrings(old) == _docstrings(new), rel


def _line_map(old: str, new: str) -> dict[int, int]:
    """Port line -> original line (1-based), for lines that were edited in place or kept."""
    out = {}
    matcher = difflib.SequenceMatcher(None, old.splitlines(), new.splitlines(), autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal" or (tag == "replace" and i2 - i1 == j2 - j1):
            out.update({j + 1: i + 1 for i, j in zip(range(i1, i2), range(j1, j2))})
    return out


@pytest.mark.parametrize("program", PROGRAMS)
def test_no_cuda_left_in_python_code_without_a_diagnostic(ports, program):
    device = re.compile(r"^[rRuUfF]*(['\"])cuda(:|\1)")
    for rel, (old, new, _, diags) in ports[program].items():
        if classify(rel) != "python":
            continue
        to_old = _line_map(old, new)
        reported = {d.line for d in diags}
        toks = _python_code_tokens(new)
        for i, t in enumerate(toks):
            chain = t.type == tokenize.NAME and t.string == "torch" and i + 2 < len(toks) \
                and toks[i + 1].string == "." and toks[i + 2].string == "cuda"
            if chain or (t.type == tokenize.STRING and device.match(t.string)):
                assert to_old.get(t.start[0]) in reported, f"{program}/{rel}:{t.start[0]}: {t.line.strip()} has no diagnostic"


@pytest.mark.parametrize("program", PROGRAMS)
def test_build_file_comments_are_byte_identical(ports, program):
    scanners = {"cmake": scan_cmake, "make": scan_make, "shell": scan_shell}
    for rel, (old, new, _, _) in ports[program].items():
        scan = scanners.get(classify(rel))
        if scan is None:
            continue
        before = [old[s:e] for s, e, _ in scan(old).spans if old[s] == "#"]
        after = [new[s:e] for s, e, _ in scan(new).spans if new[s] == "#"]
        assert before and before == after, rel


def _documented_pairs() -> list[tuple[str, str]]:
    """(CUDA, MUSA) spellings a public source documents: the vocabulary's records without `guess`."""
    pairs = []
    tc, cm, py = toolchain_vocab(), cmake_vocab(), python_vocab()
    pairs.append((tc["compiler"]["cuda"], tc["compiler"]["musa"]))
    pairs.append((tc["libdir"]["cuda"], tc["libdir"]["musa"]))
    for table, key in ((tc, "library"), (tc, "path"), (tc, "variable"), (tc, "flag"), (cm, "command"), (cm, "target"),
                       (cm, "variable"), (cm, "package"), (py, "module"), (py, "name"), (py, "member")):
        for r in records(table, key):
            if "musa" in r and not r.get("guess"):
                pairs.append((r["cuda"], r["musa"]))
    pairs += [(py["device"]["cuda"], py["device"]["musa"]), (py["backend"]["cuda"], py["backend"]["musa"]),
              (py["compile_args"]["cuda"], py["compile_args"]["musa"]), (".cuh", ".muh"), (".cu", ".mu")]
    for r in records(tc, "library"):
        if not r.get("guess"):
            pairs.append(("-l" + r["cuda"], "-l" + r["musa"]))
    return sorted(pairs, key=lambda p: -len(p[0]))


def _explained(old: str, new: str, pairs: list[tuple[str, str]]) -> bool:
    for cuda, musa in pairs:
        before = "" if cuda.startswith(".") else r"(?<![A-Za-z0-9_])"  # file extensions follow a name
        old = re.sub(before + re.escape(cuda) + r"(?![A-Za-z0-9_])", musa, old)
    return old == new


@pytest.mark.parametrize("program", PROGRAMS)
def test_every_build_rewrite_is_documented_or_reported(ports, program):
    """setup.py, CMakeLists.txt, Makefiles: each edit is a documented rename, or its line carries an
    MU60xx diagnostic (a best guess, a dropped flag, a translated arch, a language switch)."""
    pairs = _documented_pairs()
    for rel, (old, _, edits, diags) in ports[program].items():
        name = rel.rsplit("/", 1)[-1]
        if not (name == "setup.py" or classify(rel) in ("cmake", "make", "shell")):
            continue
        lines = {d.line for d in diags if BEST_GUESS_OR_REPORTED.fullmatch(d.id)}
        starts = [0] + [i + 1 for i, c in enumerate(old) if c == "\n"]
        for e in edits:
            line = next(n for n in range(len(starts), 0, -1) if starts[n - 1] <= e.start)
            if line in lines:
                continue
            assert _explained(old[e.start:e.end], e.replacement, pairs), \
                f"{program}/{rel}:{line}: {old[e.start:e.end]!r} -> {e.replacement!r} is neither documented nor reported"
