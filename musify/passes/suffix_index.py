"""The project's files by path suffix (`<lib/x.cuh>` finds `include/lib/x.cuh`), answered as asked.

`ProjectInfo.suffix_index` maps each suffix of a file's path that starts after a "/" (the whole
path too) to the files that have it, in sorted order. Made whole, that is a key for every
component of every path, made in the run's serial part before any file is migrated: 57 M
instructions on the replicated corpus's 4,928 files (1.5 % of the run), for the few hundred
include paths a run asks about. `SuffixIndex` answers a suffix from the files that share its
last component (`r` has suffix `s` exactly when `r == s` or `r` ends with "/" + `s`), grouped at
the first question and each answer remembered; iterating or sizing it makes the whole table,
the same dictionary in the same key order (`whole_suffix_index` is the reference,
tests/test_fixed_part.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

_UNSEEN = object()  # not asked for yet


class SuffixIndex(Mapping):
    """path suffix -> the files (sorted) whose path is it or ends with "/" and it. Complete by
    construction: every file's every suffix is a key (what `includes._fixed` relies on)."""

    __slots__ = ("_by_name", "_found", "_rels", "_whole")

    def __init__(self, relpaths: Iterable[str]) -> None:
        self._rels = sorted(relpaths)
        self._by_name: dict[str, list[str]] | None = None  # last component -> the files that have it
        self._found: dict[str, tuple[str, ...] | None] = {}  # answers so far (None: no file)
        self._whole: dict[str, tuple[str, ...]] | None = None

    def get(self, suffix, default=None):
        found = self._found.get(suffix, _UNSEEN) if type(suffix) is str else None
        if found is _UNSEEN:
            found = self._found[suffix] = self._look_up(suffix)
        return default if found is None else found

    def _look_up(self, suffix: str) -> tuple[str, ...] | None:
        by_name = self._by_name
        if by_name is None:
            by_name = self._by_name = {}
            for rel in self._rels:
                name = rel.rpartition("/")[2]
                got = by_name.get(name)
                if got is None:
                    by_name[name] = [rel]
                else:
                    got.append(rel)
        group = by_name.get(suffix.rpartition("/")[2])
        if group is None:
            return None
        tail = "/" + suffix
        return tuple(rel for rel in group if rel == suffix or rel.endswith(tail)) or None

    def __getitem__(self, suffix: str) -> tuple[str, ...]:
        found = self.get(suffix)
        if found is None:
            raise KeyError(suffix)
        return found

    def __contains__(self, suffix: object) -> bool:
        return self.get(suffix) is not None

    def whole(self) -> dict[str, tuple[str, ...]]:
        """Every suffix's files, as one dictionary (made once)."""
        if self._whole is None:
            self._whole = whole_suffix_index(self._rels)
        return self._whole

    def __iter__(self) -> Iterator[str]:
        return iter(self.whole())

    def __len__(self) -> int:
        return len(self.whole())

    def __repr__(self) -> str:
        return f"SuffixIndex({len(self._rels)} files)"

    def __reduce__(self):
        return SuffixIndex, (self._rels,)  # (a worker groups the files again at its first question)


def whole_suffix_index(relpaths: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """Every suffix after a "/" (the whole path too) of each file's path -> the files that have
    it, in sorted order, the keys in the order the sorted files' suffixes are met."""
    index: dict[str, list[str]] = {}
    for rel in sorted(relpaths):
        suffix = rel
        while True:
            got = index.get(suffix)
            if got is None:
                index[suffix] = [rel]
            else:
                got.append(rel)
            _, sep, suffix = suffix.partition("/")
            if not sep:
                break
    return dict(zip(index, map(tuple, index.values())))
