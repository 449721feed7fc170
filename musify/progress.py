"""Progress of a run on stderr: a rich bar on a terminal, occasional plain lines elsewhere.

On a terminal the bar shows files done out of the total, the rate and the file just finished, and
disappears when the run ends (the summary follows). In a CI log (not a terminal) a bar would be
noise, so a plain line is printed every few seconds of a long run and nothing for a short one.
`-v` prints one line per file either way; `-q` prints nothing. Diagnostics are printed after the
run, from the record, so they never interleave with the bar.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

Callback = Callable[[object, int, int], None]
FIRST_LINE_S = 2.0  # a plain run this short prints no progress at all
EVERY_S = 5.0


def _describe(result) -> str:
    edits = f", {result.edit_count} edits" if getattr(result, "edit_count", 0) else ""
    return f"{result.path}: {result.status}{edits}"


class _Plain:
    """Plain lines: every EVERY_S seconds (the first after FIRST_LINE_S), or each file with -v."""

    def __init__(self, stream: TextIO, verbose: bool):
        self.stream, self.verbose = stream, verbose
        self.start = time.perf_counter()
        self.next_line = self.start + FIRST_LINE_S

    def __call__(self, result, done: int, total: int) -> None:
        now = time.perf_counter()
        if self.verbose:
            print(f"musify: [{done}/{total}] {_describe(result)}", file=self.stream, flush=True)
        elif now >= self.next_line and done < total:
            rate = done / max(now - self.start, 1e-9)
            print(f"musify: {done}/{total} files ({100 * done // total}%), {rate:.1f} files/s, "
                  f"last {result.path}", file=self.stream, flush=True)
            self.next_line = now + EVERY_S


class _Bar:
    """A rich progress bar, created when the first file is done (the total is known by then)."""

    def __init__(self, stream: TextIO, verbose: bool):
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.verbose = verbose
        self.progress = Progress(
            TextColumn("[bold]musify[/]"), BarColumn(), MofNCompleteColumn(), TextColumn("files"),
            TextColumn("{task.fields[rate]}"), TimeElapsedColumn(), TextColumn("{task.fields[current]}"),
            console=Console(file=stream), transient=True,
        )
        self.task = None
        self.start = time.perf_counter()

    def __call__(self, result, done: int, total: int) -> None:
        if self.task is None:
            self.progress.start()
            self.task = self.progress.add_task("migrate", total=total, rate="", current="")
        rate = done / max(time.perf_counter() - self.start, 1e-9)
        self.progress.update(self.task, completed=done, rate=f"{rate:.1f}/s", current=result.path)
        if self.verbose:
            self.progress.console.print(_describe(result), highlight=False, markup=False)

    def close(self) -> None:
        if self.task is not None:
            self.progress.stop()


@contextmanager
def progress_for(quiet: bool, verbose: bool, stream: TextIO | None = None) -> Iterator[Callback | None]:
    """The `progress` callback for `musify.api.migrate` (None with --quiet), closed on exit."""
    stream = stream or sys.stderr
    if quiet:
        yield None
        return
    if stream.isatty():
        bar = _Bar(stream, verbose)
        try:
            yield bar
        finally:
            bar.close()
        return
    yield _Plain(stream, verbose)
