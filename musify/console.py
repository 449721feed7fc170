"""Console output: diagnostics in the compiler's shape and a short rich summary.

Diagnostics go to stderr as `path:line:col: severity: MUxxxx: text` so editors and CI annotate
them like compiler messages; the summary is rendered from the run record's totals only.
"""

from __future__ import annotations

import sys

from musify.diagnostics import SEVERITY_RANK, console_text
from musify.records import RunRecord
from musify.report.summary import Report


def print_diagnostics(record: RunRecord, stream=None, min_severity: str = "note") -> None:
    """Each diagnostic of at least `min_severity` on its own line, all of them written at once,
    made in one compiled call where it is built (11,650 lines on the CUDA toolkit's headers: a
    `console()` call each cost about 0.5 us)."""
    write = (stream or sys.stderr).write
    least = SEVERITY_RANK[min_severity]
    text = console_text([f.diagnostics for f in record.files if f.diagnostics], least)
    if text is None:
        _print_python(record, write, least)
    elif text:
        write(text)


def _print_python(record: RunRecord, write, least: int) -> None:
    """`print_diagnostics` in Python, a file's lines written at once (a `print` per line cost a
    third more): the reference for the compiled `console`."""
    rank = SEVERITY_RANK
    for f in record.files:
        lines = [d.console() for d in f.diagnostics if rank[d.severity] >= least]
        if lines:
            lines.append("")
            write("\n".join(lines))


def print_summary(record: RunRecord, stream=None, report: Report | None = None) -> None:
    """The run's summary; `report`: its `Report` where the caller made one (totals summed once)."""
    report = report if report is not None else Report(record)
    print_totals(record.command, report.totals, report.problems(), record.seconds, stream)


def print_totals(command: str, t: dict, problems: list[str], seconds: float, stream=None) -> None:
    """The summary of a run from its totals and failure reasons (a memoised run has no files)."""
    from rich.console import Console  # here: `-q` runs and diagnostics alone never need rich
    from rich.table import Table

    console = Console(file=stream or sys.stderr, highlight=False, soft_wrap=True)
    table = Table(title=f"musify {command.split()[1] if ' ' in command else ''}".strip(),
                  show_header=False, box=None, pad_edge=False)
    table.add_column(style="bold")
    table.add_column()
    status = ", ".join(f"{v} {k}" for k, v in t["files_by_status"].items())
    table.add_row("files", f"{t['files']} ({status})")
    table.add_row("edits", f"{t['edits']} in {t['lines_changed']} lines"
                  + (f" ({t['inferred_edits']} by inferred names)" if t["inferred_edits"] else ""))
    if t["edits_by_library"]:
        libs = ", ".join(f"{k} {v}" for k, v in sorted(t["edits_by_library"].items(), key=lambda kv: -kv[1]))
        table.add_row("by library", libs)
    table.add_row("references", f"{t['references_converted']} converted, "
                  f"{t['references_unconverted']} not converted ({t['conversion_percent']}%)")
    if t["include_rewrites"] or t["shim_includes"]:
        table.add_row("includes", f"{t['include_rewrites']} rewritten, {t['shim_includes']} compat shim includes added")
    facts = t["facts"]
    if facts:
        table.add_row("kernels", f"{facts.get('kernels', 0)} defined, {facts.get('launches', 0)} launches")
    sev = t["diagnostics_by_severity"]
    table.add_row("diagnostics", ", ".join(f"{sev.get(k, 0)} {k}s" for k in ("error", "warning", "note")))
    table.add_row("time", f"{seconds:.2f} s")
    console.print(table)
    if problems:
        console.print(f"[bold red]failed: {'; '.join(problems)}[/]")
