"""A name -> Rule table whose Rules are made at their first look-up.

The compiled rule database has about 35,000 records; a run over a few files looks up a few dozen
of them. Unpickling every record was most of such a run's fixed cost (0.08 s of 0.2), so the
compiled file keeps each record as its own little marshal string and this table makes a `Rule`
from one the first time its name is asked for (`musify/rules/compact.py` writes and reads the
file). Until then the table holds the record's number in place of the Rule.
"""

from __future__ import annotations

import marshal
from collections.abc import Iterator, MutableMapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from musify.rules.model import Rule

_ABSENT = object()


class LazyRules(MutableMapping):
    """Maps names to Rules like the dict it replaces; `records` is a buffer holding the marshal
    strings of the records back to back and `starts[i]`..`starts[i + 1]` is record i's."""

    __slots__ = ("_rules", "_records", "_starts", "_make")

    def __init__(self, keys: list[str], numbers: range, records, starts, make) -> None:
        self._rules: dict[str, Rule | int] = dict(zip(keys, numbers))
        self._records = records
        self._starts = starts
        self._make = make  # a record's fields -> its Rule

    def _made(self, name: str, number: int) -> Rule:
        rule = self._make(*marshal.loads(self._records[self._starts[number]:self._starts[number + 1]]))
        self._rules[name] = rule
        return rule

    def get(self, name, default=None):
        rule = self._rules.get(name, _ABSENT)
        if rule is _ABSENT:
            return default
        return self._made(name, rule) if rule.__class__ is int else rule

    def __getitem__(self, name: str) -> Rule:
        rule = self._rules[name]
        return self._made(name, rule) if rule.__class__ is int else rule

    def __contains__(self, name: object) -> bool:
        return name in self._rules

    def __setitem__(self, name: str, rule: Rule) -> None:
        self._rules[name] = rule

    def __delitem__(self, name: str) -> None:
        del self._rules[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._rules)

    def __len__(self) -> int:
        return len(self._rules)

    def keys(self):
        return self._rules.keys()

    def values(self):
        return self.made().values()

    def items(self):
        return self.made().items()

    def made(self) -> dict[str, Rule]:
        """Every Rule made: the table as the plain dict it stands for (for walks over all records)."""
        rules = self._rules
        for name, rule in rules.items():
            if rule.__class__ is int:
                self._made(name, rule)  # a value replaced during the walk: the keys do not change
        return rules  # type: ignore[return-value]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LazyRules):
            other = other.made()
        return self.made() == other if isinstance(other, dict) else NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"LazyRules({len(self._rules)} names)"

    def __reduce__(self):
        return dict, (dict(self.made()),)  # a pickled table is a plain dict
