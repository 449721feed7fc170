"""`musify verify`: build the original and the port on the emulator, run both, compare.

`verify_record(record, port_root, settings)` is the whole flow over a run record (from
`migrate -o`, or a dry migration of the original): pair the files, find the programs (and the
kernels to harness), verify each on every arch, mark the record's warp-size diagnostics
confirmed or cleared, and store the `verify` section on the record (docs/verify.md).
"""

from __future__ import annotations

import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from musify.records import RunRecord
from musify.verify import hazards
from musify.verify.backend import Backend, make_backend
from musify.verify.engine import verify_all
from musify.verify.harness import harness_programs
from musify.verify.programs import Program, find_programs, pairing
from musify.verify.settings import Settings

FAILING = ("fail", "build-fail-port", "timeout")
NOT_RUN = "not-run"  # built, not run (no GPU for the backend): never a success


def verify_record(record: RunRecord, port_root: Path, settings: Settings,
                  done: Callable[[Program, dict], None] | None = None,
                  found: Callable[[list[Program]], None] | None = None, backend: Backend | None = None) -> dict:
    """Verify every program of `record` against its port under `port_root`; returns the section
    (also stored as `record.verify`). The backend is `settings.backend`'s unless one is given;
    ValueError when that backend's compiler is not installed."""
    t0 = time.monotonic()
    backend = backend or make_backend(settings.backend)
    pair = pairing(record, Path(port_root))
    programs = find_programs(record, pair, settings)
    with tempfile.TemporaryDirectory(prefix="musify-harness-") as tmp:
        runnable = [p for p in programs if p.kind == "program" or p.problem]  # a missing port is a verdict
        harnessed, unharnessed = harness_programs([p for p in programs if p.kind == "harness" and not p.problem],
                                                  Path(tmp), settings)
        runnable += harnessed
        if found:
            found(runnable)
        results = verify_all(runnable, settings, done, backend)
    counts = hazards.apply(record, results, {v: k for k, v in pair.ports.items()}, backend.name)
    hazards.note_unharnessed(record, unharnessed)
    verdicts = Counter(entry["verdict"] for r in results for entry in r["archs"].values())
    section = {
        "backend": backend.name, "device": backend.device, "not_run": backend.not_run,
        "archs": list(backend.targets(settings.archs)),
        "original": str(pair.original_root), "port": str(pair.port_root), "programs": results, "unharnessed": unharnessed,
        "totals": {"programs": len(results), "verdicts": dict(sorted(verdicts.items())), "hazards": counts},
        "seconds": round(time.monotonic() - t0, 3),
        "exit_code": 1 if any(verdicts[v] for v in (*FAILING, NOT_RUN)) or not results else 0,
    }
    record.verify = section
    return section
