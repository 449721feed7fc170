"""Put what the runs showed back on the run record's diagnostics.

A warp-size diagnostic (MU2020-MU2029, or one raised by the warp-size pass) in a verified program
is `cleared` when the port passes at every 128-lane arch (shown as a note from then on), and
`confirmed` when it passes at 32 lanes and fails at 128 (the first difference is shown beside
it). A port that does not compile gets MU5001 at each compiler error's line, beside what the
migration already said there; a port that computes something else, or does not finish, gets
MU5002/MU5003 at its `main`; a shared-memory race in a port is a warp-size hazard (MU5010) at
both source lines; an original that cannot be verified here is a note (MU5005).
"""

from __future__ import annotations

import re
from pathlib import Path

from musify.arch import emulator_target
from musify.diagnostics import Diagnostic, make, with_changes
from musify.records import FileResult, RunRecord

WARP_SIZE_IDS = frozenset(f"MU20{n}" for n in range(20, 30))
_RACE_SITE = re.compile(r"(?P<path>[^\s:()]+\.(?:cu|cuh|mu|muh|cpp|h|hpp)):(?P<line>\d+)")
_MAIN = re.compile(r"(?m)^[ \t]*(?:int|auto|void)\s+main\s*\(")


def warp_of(arch: str) -> int:
    """The warp width an arch key of the record stands for: the emulator's and mcc's `mp_XX`, an
    NVIDIA GPU's `sm_XX`; any other key is an NVIDIA target of the cuda backend (32 lanes)."""
    try:
        return emulator_target(arch)[2]
    except ValueError:
        return 32


def is_warp_size(d: Diagnostic) -> bool:
    return d.id in WARP_SIZE_IDS or d.origin.startswith("pass:warp")


# how each backend builds the port, and where it runs the original (for MU5001 and MU5005)
_PORT_BUILT = {"emu": "on the emulator's MUSA face", "cuda": "with nvcc through musa_on_cuda", "mcc": "with mcc"}
_ORIGINAL_RUN = {"emu": "on the emulator", "cuda": "with nvcc on this machine", "mcc": "on the emulator"}


def apply(record: RunRecord, results: list[dict], port_to_original: dict[Path, Path],
          backend: str = "emu") -> dict[str, int]:
    """Mark and add diagnostics on `record` for every verified program; return the counts."""
    by_path = {Path(f.path).resolve(): f for f in record.files}
    counts = {"confirmed": 0, "cleared": 0}
    for result in results:
        files = [by_path[p] for p in _program_files(result, by_path)]
        verdict = _hazard_verdict(result["archs"])
        if verdict:
            first = _first_128_difference(result["archs"])
            for f in files:
                n = _mark(f, verdict, first)
                counts[verdict] += n
            result["hazards"] = verdict
        _add_outcome_diagnostics(result, by_path, port_to_original, backend)
    return counts


def _program_files(result: dict, by_path: dict[Path, FileResult]) -> list[Path]:
    from musify.emu.build import collect_files

    sources = [Path(s) for s in result["sources"] if Path(s).resolve() in by_path]
    return [p for p in collect_files(sources) if p in by_path] if sources else []


def _hazard_verdict(archs: dict) -> str:
    wide = [e for name, e in archs.items() if warp_of(name) == 128]
    narrow = [e for name, e in archs.items() if warp_of(name) == 32]
    if wide and all(e["verdict"] == "pass" for e in wide):
        return "cleared"
    if any(e["verdict"] == "pass" for e in narrow) and any(e["verdict"] in ("fail", "timeout") for e in wide):
        return "confirmed"
    return ""


def _first_128_difference(archs: dict) -> str:
    for name, entry in archs.items():
        if warp_of(name) == 128 and entry["verdict"] != "pass":
            return f"{name}: {entry.get('reason', entry['verdict'])}"
    return ""


def _mark(f: FileResult, verdict: str, first: str) -> int:
    marked = 0
    for i, d in enumerate(f.diagnostics):
        if is_warp_size(d) and not d.verify:
            changes: dict = {"verify": verdict}
            if verdict == "cleared":
                changes.update(severity="note", message=d.message + " [cleared by verify: the port passes at 128 lanes]")
            elif first:
                changes.update(message=d.message + f" [confirmed by verify: {first}]")
            f.diagnostics[i] = with_changes(d, **changes)
            marked += 1
    return marked


def _add_outcome_diagnostics(result: dict, by_path: dict[Path, FileResult], port_to_original: dict[Path, Path],
                             backend: str) -> None:
    built, ran = _PORT_BUILT.get(backend, f"with {backend}"), _ORIGINAL_RUN.get(backend, f"with {backend}")
    main = _main_site(result, by_path)
    for arch, entry in result["archs"].items():
        verdict, reason = entry["verdict"], entry.get("reason", "")
        if verdict == "build-fail-port":
            for err in entry.get("errors", []) or [{"path": "", "line": 0, "message": reason}]:
                original = port_to_original.get(Path(err["path"]).resolve()) if err["path"] else None
                target = by_path.get(original) if original else None
                if target is None and main:
                    target, line = main
                    _add(target, make("MU5001", target.path, line, 1, arch=arch, where=built, error=f"{err['path']}:{err['line']}: {err['message']}", origin="verify"))
                elif target is not None:
                    err["migration"] = [d.console() for d in target.diagnostics
                                        if d.line == err["line"] and d.origin != "verify"]
                    _add(target, make("MU5001", target.path, err["line"], max(1, err["column"]), arch=arch,
                                      where=built, error=err["message"], origin="verify"))
        elif main and verdict == "fail" and entry.get("races"):
            _races(entry["races"], arch, by_path, port_to_original, main)
        elif main and verdict == "fail":
            _add(main[0], make("MU5002", main[0].path, main[1], 1, arch=arch, difference=reason, origin="verify"))
        elif main and verdict == "timeout":
            _add(main[0], make("MU5003", main[0].path, main[1], 1, arch=arch, reason=reason, origin="verify"))
        elif main and verdict in ("original-fails", "build-fail-original"):
            _add(main[0], make("MU5005", main[0].path, main[1], 1, where=ran, reason=f"{verdict}: {reason}",
                                   origin="verify"))
            if entry.get("races"):  # the port keeps the code: a hazard where a warp has 128 lanes
                wide = next((a for a in result["archs"] if warp_of(a) == 128), "mp_22")
                _races(entry["races"], wide, by_path, port_to_original, main)
            break


def _races(races: list[str], arch: str, by_path, port_to_original, main) -> None:
    width = warp_of(arch)
    for race in races[:3]:
        sites = [(m["path"], int(m["line"])) for m in _RACE_SITE.finditer(race)]
        placed = False
        for path, line in sites[:1]:
            resolved = Path(path).resolve()
            target = by_path.get(port_to_original.get(resolved, resolved))
            if target:
                more = tuple((ln, 1) for _, ln in sites[1:])
                _add(target, make("MU5010", target.path, line, 1, arch=arch, race=race, width=width,
                                  origin="verify", sites=more))
                placed = True
        if not placed:
            _add(main[0], make("MU5010", main[0].path, main[1], 1, arch=arch, race=race, width=width, origin="verify"))


def _main_site(result: dict, by_path: dict[Path, FileResult]) -> tuple[FileResult, int] | None:
    for s in result["sources"]:
        f = by_path.get(Path(s).resolve())
        if f is None:
            continue
        try:
            text = Path(s).read_text(errors="replace")
        except OSError:
            continue
        m = _MAIN.search(text)
        if m:
            return f, text.count("\n", 0, m.start()) + 1
    first = next((by_path[Path(s).resolve()] for s in result["sources"] if Path(s).resolve() in by_path), None)
    return (first, 1) if first else None


def _add(f: FileResult, d: Diagnostic) -> None:
    if d not in f.diagnostics:
        f.diagnostics.append(d)


def note_unharnessed(record: RunRecord, unharnessed: list[dict]) -> None:
    """MU5004 at each kernel the harness could not run."""
    by_path = {Path(f.path).resolve(): f for f in record.files}
    for k in unharnessed:
        f = by_path.get(Path(k["path"]).resolve())
        if f is not None:
            _add(f, make("MU5004", f.path, k["line"], 1, name=k["kernel"], reason=k["reason"], origin="verify"))
