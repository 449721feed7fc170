"""The passes, in the order they run. Each is `run(ctx) -> list[Edit]`; see `_base.py`.

Order only matters for the order diagnostics are reported in: edits from all passes are merged
once, and two passes editing the same text is a bug that fails loudly.
"""

from musify.passes import exclusions, identifiers, includes, structure
from musify.passes.hazards import PASSES as HAZARD_PASSES
from musify.rules import reverse
from musify.semantic import precise_pass

PASSES = [
    ("exclusions", exclusions.run),
    ("identifiers", identifiers.run),
    ("includes", includes.run),
    ("structure", structure.run),
    ("reverse", reverse.warn_ambiguous),
    *HAZARD_PASSES,
    ("semantic", precise_pass.run),
]
