"""Front ends by file kind: which scanner reads a file and which passes run over its scan.

Every front end returns the same `Scan` shape (comment and literal spans, candidate identifiers,
problems; its own syntax in `Scan.tree`), so the runner, the edits and the run record do not care
which language a file was in. Adding a language is one entry here.

The table is data (module and function names): a front end and its passes are imported when the
first file of that kind is migrated, so a run over C-family files never loads the CMake or
Python front ends, and a fully cached run loads none.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from importlib import import_module

from musify.passes import PASSES, PassFn, resolve


@dataclass(frozen=True)
class Language:
    name: str
    front_end: Callable  # (text, RuleSet) -> Scan
    passes: tuple[tuple[str, PassFn], ...]
    # per pass, its module's `needs(ruleset)` (the words one of which each of its findings stands
    # on, see `Scan.may_hold`) or None: the runner does not call a pass on a file without them
    needs: tuple[Callable | None, ...] = ()


def scanner_prefixes(ruleset) -> tuple[str, ...]:
    """The prefixes the C-family scanner stops at, derived from the rules (cached on the RuleSet)."""
    cached = getattr(ruleset, "_prefixes", None)
    if cached is None:
        from musify.frontend.scanner import candidate_prefixes

        # names MUSA keeps need no look-up: only those with an edit or a diagnostic are candidates
        names = {n for n, r in ruleset.names.items() if r.status != "unchanged" or r.diag}
        cached = candidate_prefixes(names | set(ruleset.qualified))
        ruleset._prefixes = cached  # type: ignore[attr-defined]
    return cached


def scan_c(text: str, ruleset):
    """The C-family front end: the lexical scanner, stopping at the rules' prefixes."""
    from musify.frontend.scanner import scan

    return scan(text, scanner_prefixes(ruleset))


_EXCLUSIONS = ("exclusions", "musify.passes.exclusions")
_MAKE = ("make", "musify.passes.make_pass")
_PINS = ("pins", "musify.passes.pins")
C_FAMILY = "c-family"
# kind -> (front end "module:function", passes as (name, module))
TABLE: dict[str, tuple[str, tuple[tuple[str, str], ...]]] = {
    C_FAMILY: ("musify.passes.languages:scan_c", (*PASSES, ("torch_cpp", "musify.passes.torch_cpp"))),
    "python": ("musify.frontend.python:scan_python", (_EXCLUSIONS, ("python_torch", "musify.passes.python_torch"))),
    "cmake": ("musify.frontend.cmake:scan_cmake", (_EXCLUSIONS, ("cmake", "musify.passes.cmake_pass"))),
    "make": ("musify.frontend.make:scan_make", (_EXCLUSIONS, _MAKE)),
    "shell": ("musify.frontend.make:scan_shell", (_EXCLUSIONS, _MAKE)),
    "requirements": ("musify.frontend.make:scan_shell", (_PINS,)),
    "pyproject": ("musify.frontend.make:scan_shell", (_PINS,)),
}


@cache
def _load(name: str) -> Language:
    front_end, passes = TABLE[name]
    module, function = front_end.split(":")
    return Language(name, getattr(import_module(module), function), resolve(passes),
                    tuple(getattr(import_module(m), "needs", None) for _, m in passes))


def language_for(kind: str) -> Language:
    """The front end and passes for a file kind; C-family for every kind not listed."""
    return _load(kind if kind in TABLE else C_FAMILY)
