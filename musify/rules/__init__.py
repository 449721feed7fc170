"""The mapping database: rule records, their loader and the status predicates.

The names below are loaded on first use (PEP 562): a run that only needs the rules' digest (a
fully cached one) never imports the record model or the loader's validation tables.
"""

from __future__ import annotations

from importlib import import_module

__all__ = ["Rule", "RuleFileError", "RuleSet", "load_ruleset"]
_HOME = {"Rule": "musify.rules.model", "RuleSet": "musify.rules.model",
         "RuleFileError": "musify.rules.files", "load_ruleset": "musify.rules.loader"}


def __getattr__(name: str):
    if name in _HOME:
        return getattr(import_module(_HOME[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
