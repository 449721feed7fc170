"""Which qualified rule a use of a name matches: `thrust::cuda` is a rule for `cuda` after
`thrust ::`, read back from the name (the identifier pass asks for each use of such a name).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from musify.rules.model import Rule, RuleSet


def qualified_rule(text: str, start: int, entries: list) -> Rule | None:
    """The rule whose qualifier (`thrust::` in `thrust::cuda`) precedes the name at `start`. The
    qualifier just before the name is the same first step for every entry: read once, and where
    there is none (most uses of `cuda`: `cuda::std::`) no entry with a qualifier can match.
    `qualified_rule_reference` is the entry-by-entry search (tests/test_identifiers_runlevel.py)."""
    before = qualifier_before(text, start)
    if before is None:  # only an entry without qualifiers can match (the first: they sort last, stably)
        return next((rule for quals, rule in entries if not quals), None)
    for quals, rule in entries if len(entries) == 1 else sorted(entries, key=_longest_first):
        if not quals or _preceded_by(text, before, quals):
            return rule
    return None


def _preceded_by(text: str, before: tuple[str, int], quals: tuple[str, ...]) -> bool:
    """Whether `quals` (`thrust`, `system`) are the qualifiers of a name whose nearest one is
    `before` (`qualifier_before`'s answer): the others read back from it, one by one."""
    if before[0] != quals[-1]:
        return False
    pos = before[1]
    for q in reversed(quals[:-1]):
        found = qualifier_before(text, pos)
        if found is None or found[0] != q:
            return False
        pos = found[1]
    return True


def qualified_renames(ruleset: RuleSet, vendor: re.Pattern[str] | None) -> dict[str, tuple]:
    """The qualified names whose every use the rename loop can decide without the Python pass (at
    first `cuda`, `CUDA`: a thousand uses on the replicated corpus each went through
    `qualified_rule` and, with no qualifier matching, `_unknown`): name -> (whether it looks like
    a vendor's name, ((qualifiers, the edit's fields after its span)...) the longest qualifiers
    first). A name is in it when no plain rule has it and each of its rules is a plain rename
    behind at least one qualifier (no diagnostic, tag or inference: what `_use_rule` makes is
    an edit and nothing else); a use that no entry matches is then nothing, or an unrecognised
    name when it looks like a vendor's. `qualified_use` reads a use by it."""
    table: dict[str, tuple] = {}
    for name, entries in ruleset.qualified.items():
        if ruleset.names.get(name) is not None:
            continue
        plain = []
        for quals, rule in sorted(entries, key=_longest_first):
            replacement = rule.replacement
            if not quals or replacement is None or rule.status == "unsupported" or rule.diag or rule.inferred \
                    or "template-only" in rule.hazard:
                break
            last = replacement.rsplit("::", 1)[-1] if "::" in rule.cuda else replacement
            plain.append((quals, (last, rule.cuda, rule.library, rule.kind, rule.inferred, "reference")))
        else:
            table[name] = (vendor is not None and vendor.match(name) is not None, tuple(plain))
    return table


def qualified_use(text: str, start: int, entry: tuple) -> tuple | bool | None:
    """What the use at `start` of a name of `qualified_renames` makes (`_cscan.renames` reads it
    the same way, in C): the edit's fields of the entry whose qualifiers precede it, else True
    (an unrecognised vendor-looking name) or None (nothing)."""
    unrecognised, entries = entry
    before = qualifier_before(text, start)
    if before is not None:
        for quals, fields in entries:
            if _preceded_by(text, before, quals):
                return fields
    return True if unrecognised else None


def _longest_first(entry: tuple) -> int:
    """The sort key of `qualified_rule`'s entries: the longest qualifier first."""
    return -len(entry[0])


def qualified_rule_reference(text: str, start: int, entries: list) -> Rule | None:
    """`qualified_rule` as each entry's qualifiers are read back from the name, one by one."""
    for quals, rule in entries if len(entries) == 1 else sorted(entries, key=lambda e: -len(e[0])):
        pos = start
        ok = True
        for q in reversed(quals):
            found = qualifier_before(text, pos)
            if found is None or found[0] != q:
                ok = False
                break
            pos = found[1]
        if ok:
            return rule
    return None


def qualifier_before(text: str, pos: int, window: int = 200) -> tuple[str, int] | None:
    r"""The name and its offset in `name ::` just before `pos` (what the regex
    `([A-Za-z_]\w*)\s*::\s*$` finds searching the `window` characters before `pos`), read backwards: the regex search tried every start
    in the window, a cost paid for each qualified name (`torch.cuda` in Python is one)."""
    low = max(0, pos - window)
    j = pos
    while j > low and text[j - 1].isspace():
        j -= 1
    if j - 2 < low or text[j - 2:j] != "::":
        return None
    j -= 2
    while j > low and text[j - 1].isspace():
        j -= 1
    k = j
    while k > low and (text[k - 1].isalnum() or text[k - 1] == "_"):
        k -= 1
    while k < j and not (text[k] == "_" or ("a" <= text[k] <= "z") or ("A" <= text[k] <= "Z")):
        k += 1  # the name starts at its first ASCII letter or underscore
    return (text[k:j], k) if k < j else None
