"""The verify section of a run record, on the console: a verdict table, then what went wrong.

A pure function of the section (a plain dict), so `musify report run.json` can show it again.
"""

from __future__ import annotations

import sys

from rich.console import Console
from rich.markup import escape
from rich.table import Table

_STYLE = {"pass": "green", "fail": "bold red", "build-fail-port": "bold red", "timeout": "bold red",
          "original-fails": "yellow", "build-fail-original": "yellow", "not-run": "bold yellow"}


def print_verify(section: dict, stream=None) -> None:
    console = Console(file=stream or sys.stderr, highlight=False, soft_wrap=True)
    archs = section["archs"]
    table = Table(title="musify verify", box=None, pad_edge=False)
    table.add_column("program", style="bold")
    for arch in archs:
        table.add_column(arch)
    table.add_column("time", justify="right")
    for p in section["programs"]:
        cells = []
        seconds = p["original"].get("build_seconds", 0) + p["original"].get("run_seconds", 0)
        for arch in archs:
            e = p["archs"].get(arch, {})
            seconds += e.get("build_seconds", 0) + e.get("run_seconds", 0)
            verdict = e.get("verdict", "-")
            cells.append(f"[{_STYLE.get(verdict, '')}]{verdict}[/]")
        label = p["name"] + (" (harness)" if p["kind"] == "harness" else "")
        table.add_row(escape(label), *cells, f"{seconds:.1f} s")
    console.print(table)
    for p in section["programs"]:
        _details(console, p, archs)
    for k in section.get("unharnessed", []):
        console.print(f"  [dim]not harnessed[/] {escape(k['path'])}:{k['line']} {escape(k['kernel'])}: {escape(k['reason'])}")
    totals = section["totals"]
    verdicts = ", ".join(f"{n} {v}" for v, n in totals["verdicts"].items()) or "nothing verified"
    hz = totals["hazards"]
    backend = section.get("backend", "emu")
    where = f" with {backend}" + (f", {section['device']}" if section.get("device") else "") if backend != "emu" else ""
    if section.get("not_run"):
        console.print(f"[bold yellow]verify[/]: built with {escape(backend)}, not run: {escape(section['not_run'])}")
    console.print(f"[bold]verify[/]: {totals['programs']} programs on {', '.join(archs)}{escape(where)}: {verdicts}; "
                  f"warp-size diagnostics {hz['confirmed']} confirmed, {hz['cleared']} cleared "
                  f"({section['seconds']:.1f} s)")


def _details(console: Console, p: dict, archs: list[str]) -> None:
    flags = p.get("flags", {})
    for flag, why in flags.get("not_honoured", []):
        console.print(f"  {escape(p['name'])}: [dim]note[/]: flag '{escape(flag)}' from {escape(flags.get('from') or 'the command line')} "
                      f"not honoured: {escape(why)}")
    if flags.get("problem"):
        console.print(f"  {escape(p['name'])}: [dim]note[/]: {escape(flags['problem'])}")
    shown: set[str] = set()
    for arch in archs:
        e = p["archs"].get(arch, {})
        if e.get("verdict", "pass") == "pass":
            continue
        text = f"{e['verdict']}: {e.get('reason', '')}"
        if e["verdict"] in ("original-fails", "build-fail-original", "not-run") and text in shown:
            continue
        shown.add(text)
        console.print(f"  {escape(p['name'])} [{_STYLE.get(e['verdict'], '')}]{arch}[/]: {escape(text)}")
        for err in e.get("errors", [])[:5]:
            console.print(f"    {escape(err['path'])}:{err['line']}: error: {escape(err['message'])}")
            for said in err.get("migration", []):
                console.print(f"      migration said here: {escape(said)}")
        for race in e.get("races", [])[:3]:
            console.print(f"    race: {escape(race)}")
        diff = (e.get("first_difference") or {}).get("diff")
        if diff:
            console.print("    " + escape(diff).replace("\n", "\n    "))
