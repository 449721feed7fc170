"""The mapping database: rule records, their loader and the status predicates."""

from musify.rules.model import Rule, RuleSet
from musify.rules.loader import load_ruleset, RuleFileError

__all__ = ["Rule", "RuleSet", "load_ruleset", "RuleFileError"]
