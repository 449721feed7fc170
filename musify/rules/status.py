"""Status predicates shared by the passes, the statistics and the coverage tables.

Keeping them in one place means a name counted as "converted" in a run record is exactly a name
shown as "renamed" in the published tables.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from musify.rules.model import Rule


def is_edit(rule: Rule) -> bool:
    """The engine rewrites a use of this name."""
    return rule.replacement is not None


def is_known(rule: Rule | None) -> bool:
    return rule is not None


def is_unsupported(rule: Rule) -> bool:
    return rule.status == "unsupported"


def is_converted(rule: Rule) -> bool:
    """Counts as converted in statistics: renamed, shimmed, or already valid on MUSA."""
    return rule.status in ("renamed", "shim", "unchanged")


def is_reversible(rule: Rule) -> bool:
    return rule.reverse and rule.replacement is not None
