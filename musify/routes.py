"""Which of a plan's passes a file is given, in order: its route.

A pass is skipped where the file holds none of the candidate names its findings need (its
`needs` words: `Scan.may_hold`) or none of its literal trigger words (its `triggers` bits in
`literals.file_bits`), and a skipped pass that writes facts on every file has its idle facts
written in its turn (`languages.plan` says why each gate is sound). Asking the twelve gates in
a loop was about 3.4 us of every file; a run's files fall into a few dozen routes, so `_edit`
asks one key of each file (which of the `needs` gates pass, and the file's bits under every
pass's triggers) and looks its route up (`Routes`). `route` is the reference: the steps the
gates give one by one, tests/test_routes.py compares the two.
"""

from __future__ import annotations

from collections.abc import Callable

# a step: (pass name, its run function, None) to call it, or (pass name, None, its idle facts)
Step = tuple[str, Callable | None, dict | None]


def route(passes: tuple, present: frozenset[str] | None, bits: int | None) -> tuple[Step, ...]:
    """The steps for a file whose candidate names are `present` (None: the scan did not report
    them, so no `needs` gate skips) and whose literal words are `bits` (None: not asked, as
    where no pass has triggers), each pass gated as `runner._edit` always gated it."""
    steps = []
    for name, run, needs, triggers, idle in passes:
        if (needs is not None and present is not None and needs.isdisjoint(present)) \
                or (triggers and not bits & triggers):
            if idle is not None:
                steps.append((name, None, idle))
            continue
        steps.append((name, run, None))
    return tuple(steps)


class Routes:
    """A plan's routes by the gates' outcome, made as files ask for them (a run's plan per file
    kind holds one)."""

    __slots__ = ("_made", "_needed", "_needs", "_passes", "triggers")
    LIMIT = 1024  # routes kept (a tree with more gate outcomes makes them again)

    def __init__(self, passes: tuple) -> None:
        self._passes = passes
        # the `needs` gates as (bit, words), and every word of them: most files hold none
        self._needs = tuple((1 << k, needs) for k, (_, _, needs, _, _) in enumerate(passes) if needs is not None)
        self._needed = frozenset().union(*(needs for _, needs in self._needs))
        triggers = 0
        for _, _, _, bits, _ in passes:
            triggers |= bits
        self.triggers = triggers  # every pass's trigger bits: 0 where no pass has triggers
        self._made: dict[tuple[int, int], tuple[Step, ...]] = {}

    def of(self, present: frozenset[str] | None, bits: int | None) -> tuple[Step, ...]:
        """`route(passes, present, bits)`, looked up by which `needs` gates pass and `bits`
        under every pass's triggers."""
        passing = 0
        if present is None:
            passing = -1  # (no `needs` gate skips)
        elif not self._needed.isdisjoint(present):
            for bit, needs in self._needs:
                if not needs.isdisjoint(present):
                    passing |= bit
        key = (passing, bits & self.triggers if bits is not None else 0)
        made = self._made.get(key)
        if made is None:
            if len(self._made) >= self.LIMIT:
                self._made.clear()
            made = self._made[key] = route(self._passes, present, bits)
        return made


_BY_PLAN: dict[int, Routes] = {}  # a plan's passes (by identity) -> their routes


def routes_for(passes: tuple) -> Routes:
    """The routes of a plan's passes, kept with the plan (`languages.plan` keeps one plan per
    rule set, language and options, so a caller migrating file after file outside a run's
    `runner.steady` gets its routes again too)."""
    made = _BY_PLAN.get(id(passes))
    if made is None or made._passes is not passes:
        if len(_BY_PLAN) >= 64:
            _BY_PLAN.clear()
        made = _BY_PLAN[id(passes)] = Routes(passes)
    return made
