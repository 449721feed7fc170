"""The mapping musify-text runs with: built-in rules (unless --clear-mapping), then each -m table.

musify-text's own defaults are its bundled flat JSON tables; here the defaults are musify's rule
database, which is a superset for code and also knows which names must not be renamed.
"""

from __future__ import annotations

from pathlib import Path

from musify.rules.loader import load_ruleset, parse_user_table
from musify.rules.model import RuleSet
from musify.rules.reverse import reverse_ruleset


def build_ruleset(mappings: list[str], clear: bool, direction: str) -> RuleSet:
    """Defaults (or nothing with `clear`), then the -m tables in order (later ones win),
    reversed for `direction == "m2c"`. Raises RuleFileError naming file:line on a bad table."""
    if clear:
        ruleset = RuleSet(digest="musify-text:cleared")
        for path in mappings:
            for rule in parse_user_table(Path(path)):
                ruleset.add(rule)
    else:
        ruleset = load_ruleset(extra=[Path(p) for p in mappings])
    return reverse_ruleset(ruleset) if direction == "m2c" else ruleset


def flat_table(ruleset: RuleSet) -> dict[str, str]:
    """Every spelling the rules replace, as musify-text's flat `{"from": "to"}` table."""
    return {rule.cuda: rule.replacement for rule in ruleset.all_rules() if rule.replacement is not None}
