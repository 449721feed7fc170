"""The passes, in the order they run. Each is `run(ctx) -> list[Edit]`; see `_base.py`.

Order only matters for the order diagnostics are reported in: edits from all passes are merged
once, and two passes editing the same text is a bug that fails loudly.
"""

from musify.passes import identifiers, includes, structure

PASSES = [
    ("identifiers", identifiers.run),
    ("includes", includes.run),
    ("structure", structure.run),
]
