"""The passes, in the order they run. Each is `run(ctx) -> list[Edit]`; see `_base.py`.

Order only matters for the order diagnostics are reported in: edits from all passes are merged
once, and two passes editing the same text is a bug that fails loudly. The runner
(`musify/runner.py`) sits above this package; passes import only the front end, the rules, the
engine's `Edit` and `_base`.
"""

from musify.passes import exclusions, identifiers, includes, precise, reverse_ambiguity, structure
from musify.passes.hazards import PASSES as HAZARD_PASSES

PASSES = [
    ("exclusions", exclusions.run),
    ("identifiers", identifiers.run),
    ("includes", includes.run),
    ("structure", structure.run),
    ("reverse", reverse_ambiguity.run),
    *HAZARD_PASSES,
    ("semantic", precise.run),
]
