"""Names only in rules/: no pass spells a CUDA or MUSA identifier outside comments and docstrings.

Every string constant in musify/passes (regular expressions included) is split into words. A word
fails the test, with its file and line, when it is a CUDA or MUSA name: a name that looks like a
vendor name by the rules' own `vendor_prefixes` (`cudaFoo`, not the bare prefix `CUDA` of prose),
a spelling of a record that renames, shims or reports its name, of a record with a `hazard` tag or
a `diag`, or of a kept device name (`__syncthreads`, `__global__`). Standard C names the device
headers also declare (`uint32_t`) are not CUDA's. What is special about a name is a `diag`, a
`hazard` tag or a kind in its record, and the passes ask for those.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from musify.passes.identifiers import vendor_name
from musify.rules import load_ruleset

PASSES = Path(__file__).resolve().parents[1] / "musify" / "passes"
_WORD = re.compile(r"(?<![\\\w])[A-Za-z_]\w*")


def string_constants(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every string constant that is not a docstring."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docstrings.add(id(first.value))
    return [(n.lineno, n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docstrings]


def vendor_words(path: Path, known: set[str], vendor) -> list[str]:
    out = []
    for line, text in string_constants(path):
        for word in _WORD.findall(text):
            m = vendor.match(word) if vendor is not None else None
            if word in known or (m is not None and m.end() < len(word)):
                out.append(f"{path.relative_to(PASSES.parents[1])}:{line}: {word!r}")
    return out


def test_no_pass_spells_a_cuda_or_musa_name() -> None:
    ruleset = load_ruleset()
    known = set()
    for r in ruleset.all_rules():
        if r.status != "unchanged" or r.hazard or r.diag or r.cuda.startswith("__"):
            known.update(x for x in (r.cuda, r.musa) if x and re.fullmatch(r"[A-Za-z_]\w*", x))
    vendor = vendor_name(ruleset.vendor_pattern)
    found = [hit for path in sorted(PASSES.rglob("*.py")) for hit in vendor_words(path, known, vendor)]
    assert not found, "names belong in rules/:\n" + "\n".join(found)


def test_the_check_sees_a_name(tmp_path: Path) -> None:
    sample = PASSES / "_sample_for_test.py"
    sample.write_text('"""Mentions cudaMalloc in a docstring: fine."""\nX = "cudaMalloc"\nY = r"__shfl_sync|\\w"\n'
                      'Z = "CUDA major version"  # prose\n')
    try:
        ruleset = load_ruleset()
        hits = vendor_words(sample, {"__shfl_sync"}, vendor_name(ruleset.vendor_pattern))
    finally:
        sample.unlink()
    assert [h.split(": ", 1)[1] for h in hits] == ["'cudaMalloc'", "'__shfl_sync'"]
