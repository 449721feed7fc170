"""Analysis mode (`musify migrate --analyze`): how much of a tree would port by itself, how much
through compatibility shims, and how much needs a person, with an effort estimate.

The section is computed from a dry run's record (nothing is written) and stored on the record as
`analysis`, a plain dict, so every report format can show it and `musify report` can re-render it.
Counts are places in the code: a converted reference is one automatic place, a call routed to a
shim is one shim place, and each site of a warning or error is one manual place. The estimate
adds the catalogue's effort class of each diagnostic (one per cause and function) in hours. A
vendored copy of a library MUSA ships its own port of (`musify/report/vendored.py`: CUTLASS in
xformers' `third_party/cutlass`) is one decision, replacing it, not places to port: its files are
counted apart (`vendored`) and left out of the totals, tables and estimate.
"""

from __future__ import annotations

import posixpath
from collections import Counter, defaultdict
from typing import Any

from musify.report.vendored import copy_of, find_copies
from musify.report.view import (
    EFFORT_HOURS,
    READINESS,
    SHIM_DIAGNOSTICS,
    as_dict,
    display_path,
    edit_list,
    effort_of,
    library_of,
    needs_hand_work,
    readiness,
)

_MEASURES = ("automatic", "shims", "manual")


def _blank() -> dict:
    return {"files": 0, "automatic": 0, "shims": 0, "manual": 0, "effort_hours": 0.0,
            "readiness": {r: 0 for r in READINESS}}


def _file_entry(f: dict) -> tuple[dict, dict[str, Counter]]:
    """One file's measures, and the same split by library."""
    diags = f.get("diagnostics", [])
    shim = [d for d in diags if d.get("id") in SHIM_DIAGNOSTICS]
    manual = [d for d in diags if needs_hand_work(d)]
    refs = f.get("references")
    converted = refs.get("converted", 0) if isinstance(refs, dict) else sum((f.get("renamed") or {}).values())
    by_lib: dict[str, Counter] = defaultdict(Counter)
    edits = edit_list(f)
    if edits:  # references only: include rewrites and the like are not places to port
        for e in edits:
            if e.get("category", "reference") == "reference":
                by_lib[e.get("library", "")]["automatic"] += 1
    else:
        for lib, n in (f.get("edits_by_library") or {}).items():
            by_lib[lib]["automatic"] += n
    for d in shim:
        lib = library_of(d)
        by_lib[lib]["shims"] += 1
        if by_lib[lib]["automatic"]:
            by_lib[lib]["automatic"] -= 1  # the shim call was also counted as a rename
    for d in manual:
        by_lib[library_of(d)]["manual"] += 1 + len(d.get("sites") or ())
    hours = round(sum(EFFORT_HOURS.get(effort_of(d["id"]), 1.0) for d in diags), 2)
    for d in diags:
        by_lib[library_of(d)]["effort_hours"] += EFFORT_HOURS.get(effort_of(d["id"]), 1.0)
    entry = {
        "path": display_path(f),
        "readiness": readiness(f),
        "automatic": max(0, converted - len(shim)),
        "shims": len(shim),
        "manual": sum(1 + len(d.get("sites") or ()) for d in manual),
        "effort_hours": hours,
    }
    return entry, by_lib


def _add(into: dict, entry: dict) -> None:
    into["files"] += 1
    for k in _MEASURES:
        into[k] += entry[k]
    into["effort_hours"] = round(into["effort_hours"] + entry["effort_hours"], 2)
    into["readiness"][entry["readiness"]] += 1


def compute_analysis(record: Any) -> dict:
    """The `analysis` section of a record: totals, per file, per library and per directory, and
    the vendored copies apart."""
    d = as_dict(record)
    totals = _blank()
    files, dirs = [], defaultdict(_blank)
    libraries: dict[str, Counter] = defaultdict(Counter)
    copies = find_copies(d.get("files", []))
    vendored: dict[str, dict] = {}
    for f in d.get("files", []):
        entry, by_lib = _file_entry(f)
        copy = copy_of(f, copies) if copies else None
        if copy is not None:  # what the copy would cost ported line by line: shown, not counted
            held = vendored.setdefault(copy.root, {"library": copy.library, "counterpart": copy.counterpart,
                                                   **_blank()})
            _add(held, entry)
            continue
        _add(totals, entry)
        if entry["readiness"] == "untouched":
            continue
        files.append(entry)
        _add(dirs[posixpath.dirname(f.get("rel") or display_path(f)) or "."], entry)
        for lib, c in by_lib.items():
            libraries[lib].update(c)
    lib_out = {lib: {k: round(c.get(k, 0), 2) if k == "effort_hours" else c.get(k, 0)
                     for k in (*_MEASURES, "effort_hours")} for lib, c in sorted(libraries.items())}
    files.sort(key=lambda e: (-e["effort_hours"], -e["manual"], e["path"]))
    return {"totals": totals, "files": files, "libraries": lib_out, "directories": dict(sorted(dirs.items())),
            "effort_hours_per_class": dict(EFFORT_HOURS), "vendored": vendored}


def vendored_line(root: str, v: dict) -> str:
    """The console's line for one vendored copy (the HTML and Markdown reports say it from
    `vendored.split_effort`'s figures)."""
    return (f"vendored {v['library']} in {root}: {v['files']} files, {v['manual']} manual places, "
            f"{v['effort_hours']:g} h if ported line by line; not counted above: replace it with MUSA's "
            f"{v['counterpart']}")


def _pct(part: int, whole: int) -> str:
    return f"{100.0 * part / whole:.0f}%" if whole else "-"


def format_analysis(section: dict, limit: int = 15) -> str:
    """The console form: totals, then the directories and libraries, then the files with most work."""
    t = section["totals"]
    places = t["automatic"] + t["shims"] + t["manual"]
    ready = t["readiness"]
    lines = [
        (f"analysis: {t['files']} files; {places} places to port: {t['automatic']} automatic "
         f"({_pct(t['automatic'], places)}), {t['shims']} through shims ({_pct(t['shims'], places)}), "
         f"{t['manual']} manual ({_pct(t['manual'], places)}); estimated effort {t['effort_hours']:g} h"),
        "files: " + ", ".join(f"{ready[r]} {r}" for r in READINESS if ready[r]),
    ]
    lines += [vendored_line(root, v) for root, v in (section.get("vendored") or {}).items()]

    def table(title: str, rows: dict, first: str) -> None:
        if not rows:
            return
        lines.append("")
        lines.append(f"{first:<40} {'auto':>6} {'shims':>6} {'manual':>7} {'effort h':>9}   ({title})")
        ordered = sorted(rows.items(), key=lambda kv: (-kv[1]["effort_hours"], -kv[1]["manual"], kv[0]))
        for name, r in ordered[:limit]:
            lines.append(f"{name[:40]:<40} {r['automatic']:>6} {r['shims']:>6} {r['manual']:>7} "
                         f"{r['effort_hours']:>9g}")
        if len(ordered) > limit:
            lines.append(f"... {len(ordered) - limit} more in the report")

    table("by directory", section["directories"], "directory")
    table("by library", section["libraries"], "library")
    table("files with the most work", {e["path"]: e for e in section["files"] if e["effort_hours"] or e["manual"]},
          "file")
    return "\n".join(lines) + "\n"
