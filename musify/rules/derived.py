"""The tables every run derives from the rules, made once when the rules are compiled.

Passes cache what they derive from the whole rule database on the RuleSet (an attribute named
`_...`). Three of those tables are needed by every run over C-family files and each took a walk
over all 34,000 names (0.02 s apiece, a quarter of a one-file run): they are computed when the
rules are compiled, by the passes' own functions, and stored in the compiled file
(`musify/rules/compact.py`), which sets them on the loaded RuleSet as the passes would have.

The identifier pass's tables (22,000 plain renames and 2,000 names to skip) are kept partial
(`musify.rules.lazy.PartialTable`): the pass says which names a file has (`fill`) and the tables
get those names' entries, until the run has asked about so many that they are read whole.

Because they are the output of code, not of the rule files alone, the compiled file's name
carries a `fingerprint` of the source of that code (and of the file format): an edit to one of
those modules makes the next run compile the rules afresh rather than read stale tables.
"""

from __future__ import annotations

from collections.abc import Iterable
from importlib import import_module

from musify import digests, resources

# RuleSet attribute -> the "module:function" that computes it (and caches it under that attribute)
TABLES: dict[str, str] = {
    "_prefixes": "musify.passes.languages:scanner_prefixes",  # the scanner's candidate prefixes
    "_fast_renames": "musify.passes.identifiers:fast_renames",  # plain renames, and names to skip
    "_shim_names": "musify.passes.hazards.shims:_shim_names",  # names whose MUSA form needs a shim
}
PARTIAL = frozenset({"_fast_renames"})  # filled a name at a time: its pass calls `fill` first
# the source the tables (and the file's layout) depend on, relative to the package
SOURCES = ("passes/languages.py", "passes/identifiers.py", "passes/hazards/shims.py", "frontend/scanner.py",
           "engine/edits.py", "rules/model.py", "rules/compact.py", "rules/packing.py", "rules/lazy.py",
           "rules/derived.py")
_fingerprint: list[str] = []


def fingerprint() -> str:
    """A digest of `SOURCES` (read once per process: nine small files)."""
    if not _fingerprint:
        h = digests.sha256()
        for rel in SOURCES:
            try:
                h.update(rel.encode() + b"\0" + (resources.PACKAGE / rel).read_bytes() + b"\0")
            except OSError:
                h.update(rel.encode() + b"\0missing\0")
        _fingerprint.append(h.hexdigest()[:12])
    return _fingerprint[0]


def compute(ruleset) -> dict[str, object]:
    """Each table of `TABLES` for `ruleset` (a compiled, complete RuleSet), made by its pass."""
    out = {}
    for attr, where in TABLES.items():
        module, function = where.split(":")
        getattr(import_module(module), function)(ruleset)
        out[attr] = getattr(ruleset, attr)
    return out


def fill(ruleset, attr: str, names: Iterable[str] | None) -> None:
    """Make the derived table `attr` of `ruleset` answer for `names` (every name: None) when it was
    loaded partial; nothing otherwise (a table computed in this process is whole)."""
    partial = getattr(ruleset, "_partial", None)
    if partial is not None:
        table = partial.get(attr)
        if table is not None and table.fill(names):
            del partial[attr]


def filled_for(ruleset, attr: str) -> set[str] | None:
    """The names the derived table `attr` of `ruleset` has been filled for while it is partial
    (None: it is whole). A caller may hold the set and skip `fill` for names it has: `fill` would
    change nothing (the identifier pass's call for each file, most of whose names the run has
    met). It is emptied when the table is read whole, and `fill` then returns at once."""
    partial = getattr(ruleset, "_partial", None)
    table = partial.get(attr) if partial is not None else None
    return None if table is None else table._asked
