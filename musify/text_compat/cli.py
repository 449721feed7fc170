"""The `musify-text` console script: Moore Threads' command line, musify's engine underneath.

    musify-text [-t | -c | -i] [-d {c2m,m2c}] [-m MAPPING ...] [--clear-mapping]
                [-l {DEBUG,INFO,WARNING}] [--text-mode] -- srcs...

`-c` (the default) writes `<file>.mt` beside each source, `-i` rewrites the source in place,
`-t` prints to stdout. Files are never renamed. Logs use musify-text's shape
(`[LEVEL] [time] message`) and its wording for exclusion markers; musify's own diagnostics are
logged too, in their compiler shape, so nothing left unported goes unmentioned.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys

from musify.discover import classify
from musify.file_tools import atomic_write
from musify.finalise import finalise
from musify.options import Options
from musify.passes._base import ProjectInfo
from musify.passes.exclusions import find_exclusions
from musify.rules.loader import RuleFileError
from musify.rules.model import RuleSet
from musify.runner import FileJob, migrate_file
from musify.text_compat.tables import build_ruleset, flat_table
from musify.text_compat.textmode import replace_text, trie_regex

LOG = logging.getLogger("musify-text")
LOG_FORMAT = "[%(levelname)s] [%(asctime)s] %(message)s"
# exclusion events (musify/passes/exclusions.py) in musify-text's own words
_EVENT_LOGS = {
    "open": (logging.INFO, "musify exclusion block opened at line %s"),
    "close": (logging.INFO, "musify exclusion block closed at line %s"),
    "line": (logging.INFO, "musify single line exclusion at line %s"),
    "reopen": (logging.WARNING, "open musify exclusion block when it is already opened at line %s"),
    "stray-stop": (logging.WARNING, "close musify exclusion block when it is already closed at line %s"),
    "line-in-block": (logging.WARNING, "use musify single line exclusion when in exclusion block at line %s"),
    "unclosed": (logging.WARNING, "musify exclusion block not closed when file ends."),
}
_SEVERITY_LEVEL = {"note": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="musify-text",
        description="Port CUDA sources to MUSA (musify-text compatible command line, musify engine).")
    out = parser.add_mutually_exclusive_group()
    out.add_argument("-t", "--terminal", dest="output_method", action="store_const", const="terminal",
                     help="print the result to stdout")
    out.add_argument("-c", "--create", dest="output_method", action="store_const", const="create",
                     help="write <file>.mt beside each source (default)")
    out.add_argument("-i", "--inplace", dest="output_method", action="store_const", const="inplace",
                     help="rewrite each source in place")
    parser.set_defaults(output_method="create")
    parser.add_argument("-d", "--direction", choices=["c2m", "m2c"], default="c2m",
                        help="c2m: CUDA to MUSA (default); m2c: MUSA back to CUDA")
    parser.add_argument("-m", "--mapping", nargs="+", action="extend", default=[], metavar="MAPPING",
                        help="extra flat JSON table {\"cudaX\": \"musaX\"} (or musify YAML); later ones win")
    parser.add_argument("--clear-mapping", action="store_true",
                        help="drop the built-in rules; only the -m tables apply")
    parser.add_argument("-l", "--log-level", choices=["DEBUG", "INFO", "WARNING"], default="INFO",
                        help="lowest log level to display")
    parser.add_argument("--text-mode", action="store_true",
                        help="old musify-text behaviour: replace names everywhere, comments and strings too")
    parser.add_argument("srcs", nargs="+", help="source files (put them after --)")
    return parser


def _setup_logging(level: str) -> None:
    LOG.handlers.clear()
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    LOG.addHandler(handler)
    LOG.setLevel(level)
    LOG.propagate = False


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    _setup_logging(args.log_level)
    LOG.debug("Options: %s", vars(args))
    try:
        ruleset = build_ruleset(args.mapping, args.clear_mapping, args.direction)
    except (RuleFileError, OSError) as exc:
        LOG.error("%s", exc)
        return 2
    options = Options(rename_files=False, respect_gitignore=False, reverse=args.direction == "m2c",
                      rules=tuple(args.mapping), text_mode=args.text_mode)
    porter = _TextPorter(flat_table(ruleset)) if args.text_mode else None
    failed = 0
    for src in args.srcs:
        LOG.info("Processing %s", src)
        try:
            with open(src, "rb") as fh:
                data = fh.read()
        except OSError as exc:
            LOG.error("cannot read %s: %s", src, exc.strerror or exc)
            failed += 1
            continue
        _log_exclusions(data)
        new = porter.port(data) if porter else _engine_port(src, data, ruleset, options)
        if new is None:
            failed += 1
            continue
        try:
            _emit(src, data, new, args.output_method)
        except OSError as exc:
            LOG.error("cannot write output for %s: %s", src, exc.strerror or exc)
            failed += 1
    return 1 if failed else 0


class _TextPorter:
    """`--text-mode`: the table compiled once, applied to each file's bytes."""

    def __init__(self, table: dict[str, str]):
        self.table = table
        self.pattern = trie_regex(list(table))

    def port(self, data: bytes) -> bytes:
        text = data.decode("utf-8", "surrogateescape")
        new, _count = replace_text(text, self.table, self.pattern)
        return new.encode("utf-8", "surrogateescape")


def _log_exclusions(data: bytes) -> None:
    for event in find_exclusions(data.decode("utf-8", "surrogateescape")).events:
        level, message = _EVENT_LOGS[event.kind]
        if event.kind == "unclosed":
            LOG.log(level, message)
        else:
            LOG.log(level, message, event.line)


def _engine_port(src: str, data: bytes, ruleset: RuleSet, options: Options) -> bytes | None:
    """One file through musify's engine; its diagnostics are logged; None when it failed."""
    root, name = os.path.split(os.path.abspath(src))
    job = FileJob(os.path.abspath(src), name, root, classify(name), name, src)
    result, new = migrate_file(job, ruleset, options, ProjectInfo())
    (result,) = finalise([result])
    for d in result.diagnostics:
        if not d.id.startswith("MU4"):  # exclusion events were logged in musify-text's words
            LOG.log(_SEVERITY_LEVEL.get(d.severity, logging.WARNING), "%s", d.console())
    if result.status == "failed":
        return None
    return data if new is None else new  # empty or binary: nothing to port, output = input


def _emit(src: str, old: bytes, new: bytes, method: str) -> None:
    if method == "terminal":
        out = sys.stdout.buffer if hasattr(sys.stdout, "buffer") else None
        if out is not None:
            out.write(new)
            out.flush()
        else:
            sys.stdout.write(new.decode("utf-8", "surrogateescape"))
    elif method == "create":
        atomic_write(src + ".mt", new, mode_from=src)
    elif new != old:
        atomic_write(src, new, mode_from=src)


if __name__ == "__main__":
    sys.exit(main())
