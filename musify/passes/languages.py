"""Front ends by file kind: which scanner reads a file and which passes run over its scan.

Every front end returns the same `Scan` shape (comment and literal spans, candidate identifiers,
problems; its own syntax in `Scan.tree`), so the runner, the edits and the run record do not care
which language a file was in. Adding a language is one entry here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from musify.frontend.cmake import scan_cmake
from musify.frontend.make import scan_make, scan_shell
from musify.frontend.python import scan_python
from musify.frontend.scanner import Scan, candidate_prefixes, scan
from musify.passes import PASSES, cmake_pass, exclusions, make_pass, pins, python_torch, torch_cpp
from musify.rules.model import RuleSet

PassFn = Callable[..., list]


@dataclass(frozen=True)
class Language:
    name: str
    front_end: Callable[[str, RuleSet], Scan]
    passes: tuple[tuple[str, PassFn], ...]


def scanner_prefixes(ruleset: RuleSet) -> tuple[str, ...]:
    """The prefixes the C-family scanner stops at, derived from the rules (cached on the RuleSet)."""
    cached = getattr(ruleset, "_prefixes", None)
    if cached is None:
        # names MUSA keeps need no look-up: only those with an edit or a diagnostic are candidates
        names = {n for n, r in ruleset.names.items() if r.status != "unchanged" or r.diag}
        cached = candidate_prefixes(names | set(ruleset.qualified))
        ruleset._prefixes = cached  # type: ignore[attr-defined]
    return cached


def _scan_c(text: str, ruleset: RuleSet) -> Scan:
    return scan(text, scanner_prefixes(ruleset))


C_FAMILY = Language("c-family", _scan_c, (*PASSES, ("torch_cpp", torch_cpp.run)))
_EXCLUSIONS = ("exclusions", exclusions.run)
LANGUAGES: dict[str, Language] = {
    "python": Language("python", scan_python, (_EXCLUSIONS, ("python_torch", python_torch.run))),
    "cmake": Language("cmake", scan_cmake, (_EXCLUSIONS, ("cmake", cmake_pass.run))),
    "make": Language("make", scan_make, (_EXCLUSIONS, ("make", make_pass.run))),
    "shell": Language("shell", scan_shell, (_EXCLUSIONS, ("make", make_pass.run))),
    "requirements": Language("requirements", scan_shell, (("pins", pins.run),)),
    "pyproject": Language("pyproject", scan_shell, (("pins", pins.run),)),
}


def language_for(kind: str) -> Language:
    """The front end and passes for a file kind; C-family for every kind not listed."""
    return LANGUAGES.get(kind, C_FAMILY)
