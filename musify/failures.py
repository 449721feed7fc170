"""Whole-run failures as one line: `musify: error: <what>: <cause>`, with an exit code that says
which kind (docs/cli.md). A traceback is for developers: `--debug` (anywhere on the command
line) or MUSIFY_DEBUG=1 shows it instead.

Per-file problems never get here: they are diagnostics on their file and the run goes on. This
is for what stops a run: another run holding the tree, a worker killed by the system, a full
disk while writing the record, a bug.
"""

from __future__ import annotations

import os
import sys

import click

from musify import collector

EXIT_FILES = 1  # some file failed, or a diagnostic at or above --fail-on
EXIT_USAGE = 2  # the run could not start: bad option or configuration, tree busy
EXIT_INTERNAL = 3  # musify itself failed: a bug, a killed worker, out of memory
EXIT_INTERRUPTED = 130


def describe(exc: BaseException) -> tuple[str, int]:
    """The one-line message and exit code for an exception that ended the run."""
    from concurrent.futures.process import BrokenProcessPool

    from musify.journal import TreeBusy

    if isinstance(exc, TreeBusy):
        return str(exc), EXIT_USAGE
    if isinstance(exc, BrokenProcessPool):
        return ("a worker process died (killed by a signal, or out of memory); nothing was written: "
                "run again, with fewer -j workers if memory is short"), EXIT_INTERNAL
    if isinstance(exc, MemoryError):
        return "out of memory; nothing more was written", EXIT_INTERNAL
    if isinstance(exc, OSError):
        where = f"{exc.filename}: " if exc.filename else ""
        return f"{where}{exc.strerror or exc}", EXIT_INTERNAL
    return (f"internal error: {type(exc).__name__}: {exc} (a bug: run again with --debug for the "
            "traceback and report it)"), EXIT_INTERNAL


class GuardedGroup(click.Group):
    """A click group that turns an escaping exception into one line and an exit code."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        if args is None and standalone_mode:  # the program itself (not a test calling it)
            collector.skip_last_collection()
        try:
            return self._guarded(args, prog_name, complete_var, standalone_mode, **extra)
        except SystemExit as done:  # how click ends every command
            if args is None and standalone_mode and collector.is_program():  # and nothing runs after it
                collector.exit_now(done.code)  # returns when a normal exit is the safe one
            raise

    def _guarded(self, args, prog_name, complete_var, standalone_mode, **extra):
        args = list(sys.argv[1:] if args is None else args)
        cut = args.index("--") if "--" in args else len(args)
        debug = "--debug" in args[:cut] or os.environ.get("MUSIFY_DEBUG") == "1"
        args = [a for i, a in enumerate(args) if not (a == "--debug" and i < cut)]
        # a file's internal error (MU0022) is raised rather than reported, wherever the file is
        # migrated (a -j worker inherits the variable): the traceback says where it failed
        told = debug and os.environ.get("MUSIFY_DEBUG") != "1"
        if told:
            os.environ["MUSIFY_DEBUG"] = "1"
        try:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        except KeyboardInterrupt:
            if debug:
                raise
            click.echo("musify: interrupted", err=True)
            sys.exit(EXIT_INTERRUPTED)
        except Exception as exc:  # the last line of defence, by design
            if debug:
                raise
            message, code = describe(exc)
            click.echo(f"musify: error: {message}", err=True)
            sys.exit(code)
        finally:
            if told:
                del os.environ["MUSIFY_DEBUG"]
