"""The run-level step after every file is migrated: what one file cannot know alone.

A vendor-looking name that no rule knows is only "unrecognised" (MU1001) when no file of the run
declares it, and a name a rule says has no MUSA counterpart (MU1002, or the rule's own ID) is
reported only when no file of the run `#define`s it itself (a project's own `STD_CUDA_CHECK`), so
those decisions wait for all files; `--suppress` applies to every diagnostic,
including those. Both the migration (`musify.api`) and the musify-text drop-in call `finalise`,
so they agree; it returns new results and leaves the runner's untouched.
"""

from __future__ import annotations

from itertools import chain
from operator import attrgetter, itemgetter

from musify import diagnostics
from musify.records import FileResult

_NAME = itemgetter(0)  # of a pending (name, line, column)
_PLACE = attrgetter("line", "column", "id")  # a diagnostic's place: (line, column, id), read in C
_DECLARED = attrgetter("declared")
_ALIASES = attrgetter("warp_aliases")
_PASTING = attrgetter("pasting")


def finalise(files: list[FileResult], suppress: tuple[str, ...] = ()) -> list[FileResult]:
    """The results with MU1001 resolved across the run and suppressed IDs removed, sorted by place.
    Most files of a run take the shortcuts of the loop below, written out in it (a call per file
    was a third of this step, and the test and the copy of the second shortcut as calls a sixth
    of what was left: 8 M of 49 M instructions on the replicated corpus): nothing pending or
    declared, the file as it is; every name it left pending declared somewhere and nothing to
    reorder, a copy without the transient lists."""
    declared = set(chain.from_iterable(map(_DECLARED, files)))
    # the run's macros that call a warp shuffle: the loops that call one are settled (MU2023)
    aliases = set(chain.from_iterable(map(_ALIASES, files)))
    settles = _warp_macros().calls_alias if aliases else None
    # the (macro, position) pairs the run's macros paste: an unrecognised name passed there is none
    pasting = set(chain.from_iterable(map(_PASTING, files)))
    if pasting:
        files = [_without_pasted(f, pasting) if f.unknown_args and f.pending_unknown else f for f in files]
    ranges = suppression_ranges(suppress)
    if ranges:
        return [_finalise_full(f, declared, ranges, aliases) for f in files]
    out = []
    add = out.append
    new = object.__new__
    for f in files:
        if settles is not None and f.pending_warp and settles(f.pending_warp, aliases):
            add(_finalise_full(f, declared, ranges, aliases))
            continue
        pending = f.pending_unknown
        if declared and f.unconverted and not declared.isdisjoint(f.unconverted):
            add(_finalise_full(f, declared, ranges))  # a name it reports that some file defines
            continue
        if not pending and not f.declared:
            add(f)
            continue
        if not pending or declared.issuperset(map(_NAME, pending)):
            # whether `_finalise_full` would give the file's own diagnostics, unconverted names and
            # reference counts back as they are: nothing to add or drop, and nothing to reorder (a
            # list of fewer than two diagnostics, names already sorted, as the runner leaves them)
            unconverted = f.unconverted
            if len(f.diagnostics) < 2 and "unconverted" in f.references \
                    and (len(unconverted) < 2 or list(unconverted) == sorted(unconverted)):
                # then what it gives: `_changed(f, {"pending_unknown": [], "declared": []})`
                fields = f.__dict__.copy()
                fields["pending_unknown"] = []
                fields["declared"] = []
                copy = new(FileResult)
                copy.__dict__ = fields
                add(copy)
                continue
        add(_finalise_full(f, declared, ranges))
    return out


def suppression_ranges(suppress: tuple[str, ...]) -> list[tuple[str, str]]:
    """`("MU1004", "MU2010-MU2019")` -> inclusive (low, high) ID ranges."""
    ranges = []
    for item in suppress:
        lo, _, hi = item.partition("-")
        ranges.append((lo.strip().upper(), (hi or lo).strip().upper()))
    return ranges


def _without_pasted(f: FileResult, pasting: set[tuple[str, int]]) -> FileResult:
    """`f` without the pending unrecognised uses a macro of the run pastes (musify/passes/macro_pastes.py)."""
    from musify.passes.macro_pastes import pasted_uses

    at = pasted_uses(f.unknown_args, pasting)
    if not at:
        return f
    return _changed(f, {"pending_unknown": [p for p in f.pending_unknown if (p[1], p[2]) not in at],
                        "unknown_args": []})


def _warp_macros():
    """musify/passes/hazards/warp_macros.py, imported only by a run with a shuffle macro."""
    from musify.passes.hazards import warp_macros

    return warp_macros


def _finalise_full(f: FileResult, declared: set[str], ranges: list[tuple[str, str]],
                   aliases: set[str] | frozenset[str] = frozenset()) -> FileResult:
    """The reference: MU1001 for the names no file declares, the rules' reports of names some
    file defines dropped, MU2023 for loops that call a shuffle through one of the run's macros
    (`aliases`), suppressed IDs removed, diagnostics sorted by place, names sorted, the
    transient lists dropped."""
    diags = list(f.diagnostics)
    unconverted = dict(f.unconverted)
    unknown = 0
    defined = declared.intersection(unconverted)  # (only a rule's report counts them before this)
    if defined:
        diags = [d for d in diags if not (d.origin.startswith("rule:") and d.origin[5:] in defined)]
        unknown -= sum(unconverted.pop(name) for name in defined)
    for name, line, col in f.pending_unknown:
        if name not in declared:
            diags.append(diagnostics.make("MU1001", f.path, line, col, name, end=(line, col + len(name)),
                                          origin="pass:identifiers"))
            unconverted[name] = unconverted.get(name, 0) + 1
            unknown += 1
    if aliases and f.pending_warp:
        diags.extend(_warp_macros().settle(f.path, f.pending_warp, aliases))
    if ranges:
        diags = [d for d in diags if not any(lo <= d.id <= hi for lo, hi in ranges)]
    diags.sort(key=_PLACE)
    references = dict(f.references)
    references["unconverted"] = references.get("unconverted", 0) + unknown
    return _changed(f, {"diagnostics": diags, "unconverted": dict(sorted(unconverted.items())),
                        "references": references, "pending_unknown": [], "declared": [],
                        "warp_aliases": [], "pending_warp": [], "pasting": [], "unknown_args": []})


def _changed(f: FileResult, changes: dict) -> FileResult:
    """`dataclasses.replace(f, **changes)` without running `__init__` again (most files of a run
    come through here, in its serial part: a shallow copy of the fields is what replace makes).
    The copy is one `dict.copy` given to the new object whole: filling an empty `__dict__` by
    `update` cost several times more on a big run's results."""
    new = object.__new__(FileResult)
    fields = f.__dict__.copy()
    fields.update(changes)
    new.__dict__ = fields
    return new
