"""The mapping database: rule records, their loader and the status predicates."""

from musify.rules.loader import RuleFileError, load_ruleset
from musify.rules.model import Rule, RuleSet

__all__ = ["Rule", "RuleFileError", "RuleSet", "load_ruleset"]
