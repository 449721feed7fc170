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
from functools import cache
from importlib import import_module

from musify.classes import named_tuple
from musify.passes import PASSES, PassFn, resolve


@named_tuple
class Language:
    """A kind of file's front end and passes, imported when its first file is migrated."""

    name: str
    front_end: Callable  # (text, RuleSet) -> Scan
    passes: tuple[tuple[str, PassFn], ...]
    # per pass, its module's `needs(ruleset)`, `active(ruleset, options)`, `triggers(ruleset)` and
    # `IDLE_FACTS`, or None (see `plan`)
    gates: tuple[tuple[Callable | None, Callable | None, Callable | None, dict | None], ...] = ()


@named_tuple
class Plan:
    """What the runner calls on each file of a language under one rule set and options."""

    # (name, run, words or None, the bits of its literal triggers in `literals.file_bits` or 0,
    # the facts it writes on a file where it finds nothing, or None)
    passes: tuple[tuple[str, PassFn, frozenset[str] | None, int, dict | None], ...]
    prefixes: tuple[str, ...]  # the scanner's prefixes the words were checked against (() : none)


def plan(language: Language, ruleset, options) -> Plan:
    """The passes worth calling, in order, each with the words one of which a file must hold as a
    candidate identifier for the pass to find anything (None: no such test). A pass whose module's
    `active(ruleset, options)` says it does nothing under them is left out (`--reverse` for the
    version comparisons, no `--semantic` for the precise pass); a pass's `needs(ruleset)` is kept
    only where the C-family scanner reports every one of the words (`Scan.may_hold` says why a
    file without them has no such finding); a pass's `triggers(ruleset)`, words one of which its
    file's text holds wherever it finds anything, become their bits in `literals.file_bits`
    (a file holding none is not given to it); a pass that writes facts on every file declares
    those it writes where it finds nothing (`IDLE_FACTS`), which the runner writes for it where it
    skips it, in its turn (the record's facts keep their order). Made once per run: kept on the rule set by language
    and options (and made again if rules were added since: `RuleSet.add` forgets it with every
    derived table; the sizes in the key catch a plain table changed directly)."""
    memo = ruleset.__dict__.setdefault("_plans", {})
    key = (language.name, id(options), _size(ruleset.names), len(ruleset.qualified), len(ruleset.by_hazard))
    made = memo.get(key)
    if made is not None and made[0] is options:
        return made[1]
    from musify.frontend.scanner import reported_words
    from musify.passes.literals import mask_of

    passes = []
    prefixes: tuple[str, ...] = ()
    for (name, run), (needs, active, triggers, idle) in zip(language.passes, language.gates):
        if active is not None and not active(ruleset, options):
            continue
        words = needs(ruleset) if needs is not None else None
        if words is not None:
            prefixes = scanner_prefixes(ruleset)
            if language.front_end is not scan_c or not reported_words(words, prefixes):
                words = None
        passes.append((name, run, words, mask_of(triggers(ruleset)) if triggers is not None else 0, idle))
    if len(memo) >= 8:
        memo.clear()
    made = memo[key] = (options, Plan(tuple(passes), prefixes))
    return made[1]


def _size(names) -> int:
    """The number of names of a plain table; -1 for the compiled file's lazy one (`LazyRules`),
    whose count would read every name of the file (10-15 ms a run, for nothing else on most
    runs), and which changes only through `RuleSet.add`."""
    return len(names) if type(names) is dict else -1


def scanner_prefixes(ruleset) -> tuple[str, ...]:
    """The prefixes the C-family scanner stops at, derived from the rules (cached on the RuleSet)."""
    cached = getattr(ruleset, "_prefixes", None)
    if cached is None:
        from musify.frontend.scanner import VENDOR_PREFIXES, candidate_prefixes

        # names MUSA keeps need no look-up: only those with an edit or a diagnostic are candidates;
        # `candidate_prefixes` of those and the qualified names, with the vendor prefixes (most
        # names) passed over before their records are read: a third of the time, once a process
        vendor = VENDOR_PREFIXES
        names = [n for n, r in ruleset.names.items()
                 if not n.startswith(vendor) and (r.status != "unchanged" or r.diag)]
        cached = candidate_prefixes([*names, *(n for n in ruleset.qualified if not n.startswith(vendor))])
        ruleset._prefixes = cached  # type: ignore[attr-defined]
    return cached


def scan_c(text: str, ruleset):
    """The C-family front end: the lexical scanner, stopping at the rules' prefixes (the scanner
    imported with the first file, then kept: a per-file import costs as much as a small scan)."""
    scan = _SCAN[0] if _SCAN else _scanner()
    return scan(text, getattr(ruleset, "_prefixes", None) or scanner_prefixes(ruleset))


def _scanner() -> Callable:
    from musify.frontend.scanner import scan

    _SCAN.append(scan)
    return scan


_SCAN: list[Callable] = []


_EXCLUSIONS = ("exclusions", "musify.passes.exclusions")
_MAKE = ("make", "musify.passes.make_pass")
_PINS = ("pins", "musify.passes.pins")
C_FAMILY = "c-family"
# kind -> (front end "module:function", passes as (name, module))
TABLE: dict[str, tuple[str, tuple[tuple[str, str], ...]]] = {
    C_FAMILY: ("musify.passes.languages:scan_c", (*PASSES, ("torch_cpp", "musify.passes.torch_cpp"))),
    "python": ("musify.frontend.python:scan_python", (_EXCLUSIONS, ("python_torch", "musify.passes.python_torch"))),
    "cython": ("musify.frontend.cython:scan_cython",
               (_EXCLUSIONS, ("cython_extern", "musify.passes.cython_extern"), ("includes", "musify.passes.includes"))),
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
    modules = [import_module(m) for _, m in passes]
    return Language(name, getattr(import_module(module), function), resolve(passes),
                    tuple((getattr(m, "needs", None), getattr(m, "active", None), getattr(m, "triggers", None),
                           getattr(m, "IDLE_FACTS", None)) for m in modules))


def language_for(kind: str) -> Language:
    """The front end and passes for a file kind; C-family for every kind not listed."""
    return _load(kind if kind in TABLE else C_FAMILY)
