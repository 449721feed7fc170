"""The MUSA -> CUDA direction: a reversed RuleSet, file renames backwards, and MU1003.

Every record with a replacement and `reverse: true` (the default) gives one MUSA -> CUDA record.
Several CUDA names can share one MUSA name (`cublas.h` and `cublas_v2.h` both become `mublas.h`);
on the way back only one can win. The policy, documented in docs/reverse.md:

1. records marked `reverse: false` never take part: rule authors mark the losers this way;
2. among the rest, a record whose MUSA name comes from a public source beats an `inferred` one;
3. then the CUDA spelling that sorts first (plain string order) wins.

Each use of such a MUSA name raises MU1003 (once per file and name), naming the choices and the
winner. CUDA spellings are added as known, unchanged names, so a half-ported file going back
raises no "unrecognised name" noise for the CUDA names it still has.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from musify.discover import BUILD_KINDS, RENAMES, SOURCE_KINDS
from musify.rules.files import ruleset_digest
from musify.rules.status import is_reversible

if TYPE_CHECKING:  # the record model and the loader load with the rules, not with this module
    from musify.options import Options
    from musify.rules.model import Rule, RuleSet

REVERSE_RENAMES = {musa: cuda for cuda, musa in RENAMES.items()}
REVERSE_SUFFIX = "+reverse"  # on the digest of a reversed RuleSet
_REVERSE_KINDS = frozenset({"musa", "cpp"})


def file_direction(reverse: bool) -> tuple[dict[str, str], frozenset[str], frozenset[str]]:
    """(extension renames, file kinds renamed, file kinds migrated) for one direction.

    Forward, `.cu`/`.cuh` become `.mu`/`.muh` and `.mu`/`.muh` files are already MUSA: left alone.
    Python and build files are migrated forward only (they have no reverse rules).
    Backwards it is the mirror image: `.mu`/`.muh` are ported and renamed, `.cu`/`.cuh` are left."""
    if reverse:
        return REVERSE_RENAMES, frozenset({"musa"}), _REVERSE_KINDS
    return RENAMES, frozenset({"cuda-source", "cuda-header"}), SOURCE_KINDS | BUILD_KINDS


def _winner_order(rule: Rule) -> tuple[bool, str]:
    return (rule.inferred, rule.cuda)


def reverse_ruleset(forward: RuleSet) -> RuleSet:
    """A RuleSet mapping MUSA spellings back to CUDA ones; `reverse_choices` lists the
    many-to-one MUSA names (winner first) for MU1003."""
    from musify.rules.model import Rule, RuleSet

    out = RuleSet(digest=forward.digest + REVERSE_SUFFIX)
    groups: dict[tuple[bool, str], list[Rule]] = {}
    for rule in forward.all_rules():
        # CUDA spellings stay known (and untouched) in the reverse direction
        out.add(replace(rule, musa=rule.cuda, status="unchanged", diag=None, inferred=False))
        if is_reversible(rule):
            groups.setdefault((rule.kind == "header", rule.musa), []).append(rule)
    choices: dict[str, tuple[str, ...]] = {}
    for (_is_header, musa), candidates in sorted(groups.items()):
        candidates.sort(key=_winner_order)
        win = candidates[0]
        note = f"reverse of {win.cuda}" + (f"; also the MUSA name of {', '.join(c.cuda for c in candidates[1:])}"
                                            if len(candidates) > 1 else "")
        out.add(Rule(cuda=musa, musa=win.cuda, kind=win.kind, library=win.library, status="renamed",
                     note=note, section=win.section, origin=win.origin))
        if len(candidates) > 1:
            choices[musa] = tuple(c.cuda for c in candidates)
    out.reverse_choices = choices  # type: ignore[attr-defined]
    return out


def reverse_choices(ruleset: RuleSet) -> dict[str, tuple[str, ...]]:
    """The many-to-one MUSA names of a reversed RuleSet (empty for a forward one)."""
    return getattr(ruleset, "reverse_choices", None) or {}


def load_for(options: Options) -> RuleSet:
    """The built-in rules plus the user's tables, reversed when `options.reverse` is set."""
    from musify.rules.loader import load_ruleset

    ruleset = load_ruleset(extra=list(options.rules))
    return reverse_ruleset(ruleset) if options.reverse else ruleset


def digest_for(options: Options) -> str:
    """`load_for(options).digest`, computed from the files alone (nothing loaded)."""
    return ruleset_digest(extra=list(options.rules)) + (REVERSE_SUFFIX if options.reverse else "")
