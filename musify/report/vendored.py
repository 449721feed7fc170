"""Vendored copies of a library MUSA ships its own port of, found among a run's files.

xformers carries CUTLASS in `third_party/cutlass`, flash-attn in `csrc/cutlass`. Migrating such a
tree reports every inline-PTX site and every Hopper MMA of the copy (MU2040, MU2035: high effort,
4 h each), so the effort estimate read 25,224 h on xformers, nearly all of it CUTLASS's own code.
Those are not places to port: MUSA has its own CUTLASS (MUTLASS; `cutlass` -> `mutlass`, `cute/`
-> `mute/` in ../shared/MUSA_FACTS.md), the rules already point the project's includes at it, and
what ports the copy is one decision: replace it with MUSA's. So the reports (`--analyze`, HTML,
Markdown) count a copy's files apart, as that decision, and leave them out of the places to port
and the effort estimate. Nothing else changes: the copy is migrated as before, and its findings
stay in the record and in the report's list of diagnostics.

A copy is recognised by its library's main header at its usual place below one of the run's
input roots (`<copy>/include/cutlass/cutlass.h` with `<copy>` not empty: run on a CUTLASS checkout
itself, musify ports CUTLASS and counts all of it). Every file under `<copy>/` belongs to it (its
tools, examples and tests too); a copy inside another copy is part of the outer one.
"""

from __future__ import annotations

from dataclasses import dataclass

from musify.report.view import effort_hours

# (library, MUSA's own port of it, the library's main header relative to a copy's root)
LIBRARIES: tuple[tuple[str, str, str], ...] = (
    ("CUTLASS", "MUTLASS", "include/cutlass/cutlass.h"),
)


@dataclass(frozen=True)
class Copy:
    root: str  # the copy's folder, relative to its input root ("third_party/cutlass")
    library: str
    counterpart: str


def file_rel(f: dict) -> str:
    """A record entry's path relative to its input root (the path as shown where it has none)."""
    return str(f.get("rel") or f.get("path") or "")


def find_copies(files: list[dict]) -> list[Copy]:
    """The vendored copies among a record's `files` (entries as dicts), outermost only."""
    found: dict[str, Copy] = {}
    for f in files:
        rel = file_rel(f)
        for library, counterpart, header in LIBRARIES:
            if rel.endswith("/" + header):
                root = rel[:-len(header) - 1]
                found.setdefault(root, Copy(root, library, counterpart))
    roots = sorted(found)
    return [found[r] for r in roots if not any(r.startswith(outer + "/") for outer in roots if outer != r)]


def copy_of(f: dict, copies: list[Copy]) -> Copy | None:
    """The copy a record entry belongs to, or None."""
    rel = file_rel(f)
    for c in copies:
        if rel.startswith(c.root + "/"):
            return c
    return None


def split_effort(files: list[dict], diags: list[dict],
                 copies: list[Copy] | None = None) -> tuple[float, list[tuple[Copy, float, int]]]:
    """The effort estimate (`view.effort_hours`) of `diags`, a record's diagnostics, outside the
    vendored copies (`copies`, default: those of `files`), and each copy's hours and findings,
    counted apart."""
    copies = find_copies(files) if copies is None else copies
    if not copies:
        return effort_hours(diags), []
    where = {str(f.get("path", "")): copy_of(f, copies) for f in files}
    inside: dict[str, list[dict]] = {c.root: [] for c in copies}
    outside = []
    for d in diags:
        c = where.get(str(d.get("path", "")))
        (inside[c.root] if c is not None else outside).append(d)
    return effort_hours(outside), [(c, effort_hours(inside[c.root]), len(inside[c.root])) for c in copies]
