"""The passes, in the order they run. Each is `run(ctx) -> list[Edit]`; see `_base.py`.

Order only matters for the order diagnostics are reported in: edits from all passes are merged
once, and two passes editing the same text is a bug that fails loudly. The runner
(`musify/runner.py`) sits above this package; passes import only the front end, the rules, the
engine's `Edit` and `_base`.

The registry is data, (pass name, module) pairs: a pass's module is imported the first time a
file needs it (`resolve`), so a run that migrates nothing (a cached `musify check`) imports none.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from importlib import import_module

from musify.passes.hazards import ENTRIES as HAZARD_PASSES

PassFn = Callable[..., list]

PASSES: tuple[tuple[str, str], ...] = (  # the C-family passes, in order
    ("exclusions", "musify.passes.exclusions"),
    ("identifiers", "musify.passes.identifiers"),
    ("macro_pastes", "musify.passes.macro_pastes"),
    ("includes", "musify.passes.includes"),
    ("structure", "musify.passes.structure"),
    ("reverse", "musify.passes.reverse_ambiguity"),
    *HAZARD_PASSES,
    ("semantic", "musify.passes.precise"),
)


def resolve(entries: Iterable[tuple[str, str]]) -> tuple[tuple[str, PassFn], ...]:
    """(name, module) pairs -> (name, run) pairs, importing each module now."""
    return tuple((name, import_module(module).run) for name, module in entries)
