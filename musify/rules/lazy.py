"""Tables of the compiled rules that are read from the file a name at a time.

The compiled rule database has about 35,000 records; a run over a few files looks up a few dozen
of them. Unpickling every record was most of such a run's fixed cost (0.08 s of 0.2), so the
compiled file (`musify/rules/compact.py`) keeps each record as its own little marshal string and
an on-disk hash index of the names (`musify.rules.packing.Buckets`):

  * `LazyRules` is the name -> Rule mapping of `RuleSet.names` and `RuleSet.headers`. It answers a
    look-up from the index and makes the Rule from its record, remembering both; once a run has
    asked for more than `WHOLE_AFTER` names it is not asked about, it reads the whole name list
    (one split, one dict), and from then on a look-up is one dict probe;
  * `PartialTable` is a table a pass derives from the rules (`musify/rules/derived.py`), kept as
    the pass keeps it (dicts and sets) and filled for the names the pass says it will ask about,
    until it is read whole on the same terms.
"""

from __future__ import annotations

import marshal
from collections.abc import Callable, Iterable, Iterator, MutableMapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from musify.rules.model import Rule
    from musify.rules.packing import Buckets

WHOLE_AFTER = 2000  # names asked for one by one before a table is read whole
_UNSEEN = object()


class Records:
    """The records of the compiled file: record i is `Rule(*marshal.loads(blob[starts[i]:starts[i + 1]]))`."""

    __slots__ = ("_blob", "_make", "_starts")

    def __init__(self, blob: memoryview, starts: memoryview, make: Callable[..., Rule]) -> None:
        self._blob = blob
        self._starts = starts
        self._make = make

    def rule(self, number: int) -> Rule:
        return self._make(*marshal.loads(self._blob[self._starts[number]:self._starts[number + 1]]))


class LazyRules(MutableMapping):
    """Maps names to Rules like the dict it stands for. Until it is whole, `_rules` holds the
    names asked for so far (a Rule, or None: no such name) and `_index` answers the others; once
    whole, `_rules` holds every name (its Rule, or its record number until first asked for) and
    `_index` is None."""

    __slots__ = ("_asked", "_index", "_names", "_records", "_rules")

    def __init__(self, index: Buckets, names: Callable[[], list[str]], numbers: range, records: Records) -> None:
        self._rules: dict[str, Rule | int | None] = {}
        self._index: Buckets | None = index
        self._names = (names, numbers)  # (the names in record order, read when needed; their numbers)
        self._records = records
        self._asked = 0

    def get(self, name, default=None):
        rule = self._rules.get(name, _UNSEEN)
        if rule is _UNSEEN:
            rule = self._look_up(name)
        elif rule.__class__ is int:
            rule = self._made(name, rule)
        return default if rule is None else rule

    def __getitem__(self, name: str) -> Rule:
        rule = self.get(name)
        if rule is None:
            raise KeyError(name)
        return rule

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def _made(self, name: str, number: int) -> Rule:
        rule = self._records.rule(number)
        self._rules[name] = rule
        return rule

    def _look_up(self, name: str) -> Rule | None:
        """A name not asked for before (or, once whole, not in the table)."""
        index = self._index
        if index is None:  # whole (perhaps since the caller read `_rules`): absent, or not yet made
            rule = self._rules.get(name)
            return self._made(name, rule) if rule.__class__ is int else rule  # type: ignore[return-value]
        number = index.get(name)
        rule = None if number is None else self._records.rule(number)
        self._rules[name] = rule
        self._asked += 1
        if self._asked > WHOLE_AFTER:
            self.whole()
        return rule

    def whole(self) -> dict[str, Rule | int]:
        """Read every name (once): from now on each look-up is one dict probe."""
        if self._index is not None:
            names, numbers = self._names
            table: dict[str, Rule | int | None] = dict(zip(names(), numbers))
            for name, rule in self._rules.items():  # what was asked for, added or replaced so far
                if rule is not None:
                    table[name] = rule
            self._rules = table
            self._index = None
        return self._rules  # type: ignore[return-value]

    def made(self) -> dict[str, Rule]:
        """Every Rule made: the table as the plain dict it stands for (for walks over all records)."""
        rules = self.whole()
        for name, rule in rules.items():
            if rule.__class__ is int:
                self._made(name, rule)  # a value replaced during the walk: the keys do not change
        return rules  # type: ignore[return-value]

    def __setitem__(self, name: str, rule: Rule) -> None:
        self._rules[name] = rule

    def __delitem__(self, name: str) -> None:
        del self.whole()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.whole())

    def __len__(self) -> int:
        return len(self._rules if self._index is None else self.whole())  # (whole: no call; asked once a file)

    def keys(self):
        return self.whole().keys()

    def values(self):
        return self.made().values()

    def items(self):
        return self.made().items()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LazyRules):
            other = other.made()
        return self.made() == other if isinstance(other, dict) else NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"LazyRules({'whole' if self._index is None else 'partial'}, {len(self._rules)} names read)"

    def __reduce__(self):
        return dict, (dict(self.made()),)  # a pickled table is a plain dict


class PartialTable:
    """A derived table as the pass holds it (`parts`: dicts and sets keyed by rule names, empty
    at first) and, in `index`, each name's entry for each part (a dict's value or None, a set's
    True or False). `fill(names)` adds what the given names have; `whole()` reads the table whole
    (into the same dicts and sets, so whoever holds them sees it) and returns True."""

    __slots__ = ("_asked", "_index", "_read_whole", "parts")

    def __init__(self, parts: tuple, index: Buckets, read_whole: Callable[[], tuple]) -> None:
        self.parts = parts
        self._index = index
        self._read_whole = read_whole
        self._asked: set[str] = set()

    def fill(self, names: Iterable[str] | None) -> bool:
        """Make the parts answer for `names` (every name: None); True once the table is whole."""
        if names is None:
            return self.whole()
        asked, index, parts = self._asked, self._index, self.parts
        if type(names) is list and asked.issuperset(names):
            return False  # each asked before (a tree's files share their names): nothing to add, as before
        for name in names:
            if name in asked:
                continue
            asked.add(name)
            entry = index.get(name)
            if entry is not None:
                for part, value in zip(parts, entry):
                    if value is None or value is False:
                        continue
                    if value is True:
                        part.add(name)
                    else:
                        part[name] = value
        return self.whole() if len(asked) > WHOLE_AFTER else False

    def whole(self) -> bool:
        for part, complete in zip(self.parts, self._read_whole()):
            part.update(complete)  # a set keeps the names the run added to it
        self._asked.clear()
        return True
