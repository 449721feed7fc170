"""`Report`: the one place that turns a run record into totals, an exit code and its reasons.

The CLI prints what this says; every renderer (console, CSV, HTML, SARIF, Markdown) reads the same
numbers from here, so the summary on the screen and every file report agree by construction.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import field
from itertools import chain
from operator import attrgetter

from musify.classes import dataclass
from musify.diagnostics import at_least
from musify.records import RunRecord, compute_totals

# verify verdicts that count against the port (docs/verify.md); "original-fails" never does
PORT_FAILURES = frozenset({"fail", "build-fail-port", "timeout"})
NOT_RUN = "not-run"  # built but not run (a GPU backend without its GPU): not a failure, never a pass
_SEVERITY, _DIAGNOSTICS = attrgetter("severity"), attrgetter("diagnostics")


@dataclass(init="fields")  # made once or twice a run: no __init__ compiled at every start-up
class Report:
    record: RunRecord
    _totals: dict | None = field(default=None, repr=False)

    @property
    def totals(self) -> dict:
        if self._totals is None:
            self._totals = compute_totals(self.record.files)
        return self._totals

    def problems(self) -> list[str]:
        """Why the run fails, one phrase per reason (empty when it passes)."""
        r = self.record
        out = []
        failed = sum(1 for f in r.files if f.status == "failed")
        if failed:
            out.append(f"{failed} file{'s' if failed != 1 else ''} failed")
        # each severity's count, then asked once per severity (in the order first met: the same
        # KeyError as asking per diagnostic), not once per diagnostic (11,650 on the CUDA headers)
        severities = Counter(map(_SEVERITY, chain.from_iterable(map(_DIAGNOSTICS, r.files))))
        at = sum(n for severity, n in severities.items() if at_least(severity, r.fail_on))
        if at:
            worst = "errors" if r.fail_on == "error" else f"diagnostics at or above {r.fail_on}"
            out.append(f"{at} {worst}" if r.fail_on != "error" or at != 1 else "1 error")
        if r.fail_on_change:
            changing = sum(1 for f in r.files if f.status == "migrated")
            if changing:
                out.append(f"{changing} file{'s' if changing != 1 else ''} would be migrated")
        bad = verify_port_failures(r.verify)
        if bad:
            out.append(f"{bad} verify run{'s' if bad != 1 else ''} failed on the port")
        unrun = verify_port_failures(r.verify, frozenset({NOT_RUN}))
        if unrun:
            why = r.verify.get("not_run") or ""
            out.append(f"{unrun} verify run{'s' if unrun != 1 else ''} built but not run" + (f" ({why})" if why else ""))
        return out

    @property
    def exit_code(self) -> int:
        """0 when the run passes, 1 when any `problems()` reason holds (2, a usage error, never
        reaches a record)."""
        return 1 if self.problems() else 0


def verify_port_failures(section: dict | None, verdicts: frozenset[str] = PORT_FAILURES) -> int:
    """How many (program, arch) verify runs ended in a verdict that counts against the port (or
    in one of `verdicts`)."""
    if not section:
        return 0
    return sum(1 for p in section.get("programs", [])
               for run in [*p.get("archs", {}).values(), *p.get("runs", [])]  # archs: docs/verify.md
               if run.get("verdict") in verdicts)
