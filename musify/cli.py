"""The `musify` command line: a thin click layer over `musify.api`.

Exit codes (docs/cli.md): 0 success; 1 some file failed or a diagnostic at or above the failure
severity was raised; 2 the run could not start (bad option, output inside input, unreadable rule
file, tree held by another --in-place run); 3 musify itself failed (musify/failures.py).

Start-up is part of the interface (a pre-commit hook pays it on every commit): the engine, the
rules, rich and jinja2 are imported inside the commands that need them, never at module level.
"""

from __future__ import annotations

from musify import collector

collector.hold_start_up()  # before click and the rest are imported; released as a command starts

import functools
import json
import os
import sys

import click

from musify import __version__
from musify.arch import ARCHES
from musify.config import ConfigError, find_config
from musify.diagnostics import SEVERITIES
from musify.failures import GuardedGroup
from musify.options import Options
from musify.report import FORMATS as REPORT_FORMATS
from musify.report import format_for
from musify.verify.options import VERIFY_KEYS, verify_options

_CONTEXT = {"help_option_names": ["-h", "--help"]}

# One click.Path type of each kind, shared by every parameter that takes one (a type holds no
# per-parameter state): making one looks its name up in gettext, 0.17 M instructions each, and
# the commands took sixteen of them at every start-up.
_ANY_PATH = click.Path()
_FILE = click.Path(dir_okay=False)
_DIR = click.Path(file_okay=False)
_EXISTING_FILE = click.Path(exists=True, dir_okay=False)


class _Command(click.Command):
    """A command whose parser takes a short option ("-o", "-q", "-j1") straight to click's
    short-option matching. Click first tries such a word as a long option, and the failure it
    catches builds a `NoSuchOption`, which looks for close matches with difflib (imported for
    it): 75 us a word and 1.5 ms for the import, at every start-up that spells a short option.
    What the parser decides is click's own: the same path it takes after that failure."""

    def make_parser(self, ctx: click.Context):
        parser = super().make_parser(ctx)
        original = getattr(parser, "_process_opts", None)
        if original is not None and all(hasattr(parser, a) for a in ("_opt_prefixes", "_long_opt", "_match_short_opt")):
            parser._process_opts = functools.partial(_process_opts, parser, original)
        return parser


def _process_opts(parser, original, arg: str, state) -> None:
    """`parser._process_opts(arg, state)`, without its failed try of a short option as a long one
    (only where click would take the same path: no "=", not a "--" word, no such long option,
    no token normalisation)."""
    ctx = parser.ctx
    if "=" in arg or arg[:2] in parser._opt_prefixes or arg in parser._long_opt \
            or (ctx is not None and ctx.token_normalize_func is not None):
        return original(arg, state)
    return parser._match_short_opt(arg, state)


class _Group(GuardedGroup):
    """Commands from other packages are imported only when one of them (or the list) is asked for."""

    command_class = _Command

    def invoke(self, ctx: click.Context) -> object:
        collector.release_start_up()  # the command's own work is collected as always
        return super().invoke(ctx)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in self.commands:
            _register_optional_commands()
        return super().get_command(ctx, name)

    def list_commands(self, ctx: click.Context) -> list[str]:
        _register_optional_commands()
        return super().list_commands(ctx)


def _errors() -> tuple[type[Exception], ...]:
    """What a command reports as a usage error (exit 2); imported when a command runs."""
    from musify.api import UsageError
    from musify.rules.loader import RuleFileError

    return UsageError, ConfigError, RuleFileError


@click.group(cls=_Group, context_settings=_CONTEXT)
@click.version_option(__version__, prog_name="musify",  # click's own text, given: one gettext look-up less
                      message="%(prog)s, version %(version)s")
def main() -> None:
    """Port CUDA code to MUSA, report what could not be ported, and prove ports right."""


def _common(f):
    options = [
        click.argument("paths", nargs=-1, required=True, type=_ANY_PATH),
        click.option("-j", "--jobs", type=int, default=None, help="Worker processes (default 1)."),
        click.option("--exclude", multiple=True, metavar="GLOB", help="Skip paths matching GLOB (repeatable)."),
        click.option("--no-gitignore", is_flag=True, help="Do not honour .gitignore files."),
        click.option("--rules", "rule_files", multiple=True, type=_EXISTING_FILE,
                     help="Extra rule table (musify YAML or musify-text flat JSON); later ones win."),
        click.option("--rewrite-comments", is_flag=True, default=None, help="Also rename CUDA names in comments."),
        click.option("--rewrite-strings", is_flag=True, default=None, help="Also rename CUDA names in strings."),
        click.option("--no-rename", is_flag=True, help="Keep .cu/.cuh file names."),
        click.option("--suppress", multiple=True, metavar="IDS",
                     help="Diagnostic IDs or ranges not to report, e.g. MU1004,MU2010-MU2019."),
        click.option("--arch", type=click.Choice(ARCHES), default=None,
                     help="Target MUSA architecture; sets warp-size hazard severities (default mp_22)."),
        click.option("--arch-map", metavar="SM=MUSA,...", default=None,
                     help="Arch-guard threshold policy, e.g. 80=220,90=310 (docs/hazards.md)."),
        click.option("--no-shims", is_flag=True, help="Keep calls musify would route to a compat shim; report them."),
        click.option("--semantic", is_flag=True, help="Precise mode: resolve names with libclang (needs -p)."),
        click.option("-p", "--build-dir", type=_DIR,
                     help="Build directory holding compile_commands.json, for --semantic."),
        click.option("--json", "json_path", type=_FILE, help="Write the run record here."),
        click.option("--json-lite", is_flag=True, help="Leave the per-edit list out of the run record."),
        click.option("-q", "--quiet", is_flag=True, help="No progress and no summary; diagnostics only."),
        click.option("-v", "--verbose", is_flag=True, help="One line per file as it is done."),
        click.option("--no-cache", is_flag=True, help="Migrate every file afresh (ignore the incremental cache)."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def build_options(paths, jobs, exclude, no_gitignore, rule_files, rewrite_comments, rewrite_strings,
                  no_rename, suppress, arch=None, arch_map=None, no_shims=False, semantic=False,
                  build_dir=None, json_lite=False, no_cache=False, **flags) -> Options:
    """Command-line flags over the nearest configuration file over the defaults."""
    from musify.settings import hazard_settings

    found = find_config(paths[0]) if paths else None
    cfg = found[1] if found else {}
    sup = [s for item in (list(cfg.get("suppress", [])) + list(suppress)) for s in item.split(",") if s.strip()]
    return Options(
        jobs=max(1, jobs if jobs is not None else cfg.get("jobs", 1)),
        cache=not no_cache and cfg.get("cache", True),
        exclude=tuple(exclude),
        respect_gitignore=not no_gitignore and cfg.get("respect_gitignore", True),
        rules=tuple(cfg.get("rules", [])) + tuple(rule_files),
        rewrite_comments=cfg.get("rewrite_comments", False) if rewrite_comments is None else rewrite_comments,
        rewrite_strings=cfg.get("rewrite_strings", False) if rewrite_strings is None else rewrite_strings,
        rename_files=not no_rename and cfg.get("rename_files", True),
        suppress=tuple(sup),
        json_lite=json_lite,
        **hazard_settings(cfg, arch, arch_map, no_shims, semantic, build_dir),
        **flags,
    )


def _fail(message: str) -> None:
    click.echo(f"musify: error: {message}", err=True)
    sys.exit(2)


def _spool_dir(*written: str | None) -> str | None:
    """Where a run that writes a record (or a report) spools its entries: beside the first of
    them (musify/spool.py); None when it writes neither (nothing reads the entries back)."""
    for path in written:
        if path:
            return os.path.dirname(os.path.abspath(path))
    return None


def _write_json(record, path: str | None, report=None) -> None:
    """The record file at `path` (none without a path); its totals from `report` where given."""
    if path:
        from musify.file_tools import atomic_write

        # streamed: a big run's record is never one string. Not synced to the disk (`durable`),
        # as the HTML and SARIF reports are not: a report, not a user's source (the sync of the
        # 15 MB record of 4,928 files was 7 ms on this machine's disk, more on a slower one)
        atomic_write(path, record.iter_bytes(totals=report.totals if report is not None else None), durable=False)


@main.command("migrate", context_settings=_CONTEXT)
@_common
@click.option("-o", "--output", "out_dir", type=_DIR, help="Write a complete mirror here.")
@click.option("--in-place", is_flag=True, help="Rewrite files where they are (journaled; see docs/reliability.md).")
@click.option("--lock-wait", type=float, default=10.0, show_default=True, metavar="SECONDS",
              help="With --in-place: how long to wait for another run on the same tree.")
@click.option("--stdout", "to_stdout", is_flag=True, help="Print migrated sources to stdout.")
@click.option("--diff", "as_diff", is_flag=True, help="Print a unified diff; write nothing.")
@click.option("--reverse", is_flag=True, help="Port MUSA back to CUDA (.mu -> .cu); see docs/reverse.md.")
@click.option("--fail-on", type=click.Choice(SEVERITIES), default=None,
              help="Exit 1 when a diagnostic at or above this severity is raised (default: error).")
@click.option("--report", "report_path", type=_FILE, help="Also write the HTML report here.")
@click.option("--sarif", "sarif_path", type=_FILE, help="Also write SARIF 2.1.0 here.")
@click.option("--analyze", is_flag=True, help="Write nothing; report how much would port and the work left.")
@click.option("--verify", "verify_after", is_flag=True, help="Then verify the port (on the emulator, or --backend cuda|mcc; docs/verify.md; needs -o).")
@verify_options("--verify-arch")
def migrate_cmd(paths, out_dir, in_place, to_stdout, as_diff, json_path, quiet, verbose, fail_on, report_path,
                sarif_path, analyze, verify_after, **kw) -> None:
    """Migrate CUDA sources under PATHS to MUSA."""
    verify_kw = {k: kw.pop(k) for k in VERIFY_KEYS}
    if verify_after and not out_dir:
        _fail("--verify needs -o DIR (the port is verified where it was written)")
    if verify_after:  # a backend whose compiler is missing stops the run before anything is written
        from musify.verify.command import backend_name, chosen_backend

        verify_kw["backend"] = chosen_backend(backend_name(paths[0], verify_kw["backend"]), tuple(verify_kw["archs"] or ()))
    chosen = [m for m, on in (("out", out_dir), ("in-place", in_place), ("stdout", to_stdout), ("diff", as_diff),
                              ("none", analyze)) if on]
    if len(chosen) != 1:
        _fail("choose exactly one of -o DIR, --in-place, --stdout, --diff, --analyze")
    mode = chosen[0]
    if mode != "in-place":  # (an in-place run stats every file: it walks in Python)
        from musify.discover import prefetch

        prefetch(paths)  # the folders listed by a thread while the engine is imported
    try:
        options = build_options(paths, **kw)
        fail_on = fail_on or (find_config(paths[0]) or (None, {}))[1].get("fail_on") or "error"
        command = "musify migrate " + " ".join(sys.argv[2:])
        memo = _replay("migrate", paths, options, mode, out_dir, json_path, command, fail_on, quiet,
                       verbose or bool(report_path or sarif_path or analyze or verify_after))
        from musify.api import migrate  # after the memo: a replayed run never imports the engine
        from musify.progress import progress_for

        with progress_for(quiet, verbose) as progress:
            record, outputs = migrate(list(paths), options, mode, out_dir, collect=mode == "stdout",
                                      command=command, fail_on=fail_on, progress=progress,
                                      found=memo.found if memo else None,
                                      spool=_spool_dir(json_path, report_path, sarif_path))
    except SystemExit:  # a replayed run: checked first, so the clause below imports nothing
        raise
    except _errors() as exc:
        _fail(str(exc))
    finally:
        _forget_prefetched()
    if mode == "stdout":
        from musify.file_tools import write_stdout

        for data in outputs.texts.values():
            write_stdout(data)
    elif mode == "diff":
        sys.stdout.write(outputs.diff)
    if analyze:
        from musify.report.analysis import compute_analysis

        record.analysis = compute_analysis(record)
    if verify_after:
        from musify.report.summary import Report
        from musify.verify.command import verify_port

        verify_port(record, paths[0], out_dir, kw["jobs"] or 1, quiet, verify_kw)
        record.exit_code = Report(record).exit_code
    _finish(record, json_path, quiet, report_path, sarif_path, memo=memo)


def _forget_prefetched() -> None:
    """Let go of the folder listings read ahead that no walk took (a replayed run, an excluded
    tree), so a caller running commands in one process keeps none from one to the next."""
    discover = sys.modules.get("musify.discover")
    if discover is not None:
        discover.forget_prefetched()


def _replay(name: str, paths, options, mode: str, out_dir, json_path, command: str, fail_on: str,
            quiet: bool, not_memoised: bool, fail_on_change: bool = False):
    """Exit here when the run memo (musify/memo.py) holds this very run; else the memo to fill
    after the normal run (None when this run is not memoised)."""
    from musify.cache import usable

    if not_memoised or not usable(options):  # the memo's first test, made before it is imported
        return None
    from musify import memo as run_memo

    request = run_memo.Request(name, list(paths), options, mode, out_dir, json_path, command, fail_on, fail_on_change)
    if not run_memo.eligible(request):
        return None
    memo = run_memo.open_memo(request)
    if memo is not None:
        code = memo.replay(quiet)
        if code is not None:
            sys.exit(code)
    return memo


def _finish(record, json_path: str | None, quiet: bool, report_path: str | None = None,
            sarif_path: str | None = None, console: str = "", memo=None) -> None:
    """Print, write the record and reports, exit with the record's code (set once, by `Report`).
    `console` is what the command printed first; with it, it goes to the memo."""
    import io

    from musify.console import print_diagnostics, print_summary
    from musify.report.summary import Report

    summary = Report(record)  # the run's totals summed once, for the record, the memo and the summary
    with collector.settled():  # the lines and the record's pieces: many objects, no garbage cycle
        buffer = io.StringIO()
        print_diagnostics(record, buffer)
        console += buffer.getvalue()
        sys.stderr.write(console)
        _write_json(record, json_path, summary)
    if memo is not None:
        memo.store(record, console, summary)
    from musify import report

    for fmt, path in (("html", report_path), ("sarif", sarif_path)):
        if path:
            report.write(record, fmt, path)
    if not quiet:
        print_summary(record, report=summary)
    if record.analysis:
        from musify.report.analysis import format_analysis

        click.echo(format_analysis(record.analysis), nl=False)
    sys.exit(record.exit_code)


@main.command("check", context_settings=_CONTEXT)
@_common
@click.option("--fail-on", type=click.Choice(SEVERITIES), default="warning", show_default=True,
              help="Fail when a diagnostic at or above this severity is raised.")
@click.option("--sarif", "sarif_path", type=_FILE, help="Also write SARIF 2.1.0 here.")
def check_cmd(paths, fail_on, json_path, quiet, verbose, sarif_path, **kw) -> None:
    """For pre-commit and CI: fail when a migration would change a file or raise a diagnostic."""
    from musify.discover import printable

    try:
        options = build_options(paths, **kw)
        command = "musify check " + " ".join(sys.argv[2:])
        memo = _replay("check", paths, options, "none", None, json_path, command, fail_on, quiet,
                       verbose or bool(sarif_path), fail_on_change=True)
        from musify.api import migrate
        from musify.progress import progress_for

        with progress_for(quiet, verbose) as progress:
            record, _ = migrate(list(paths), options, "none", command=command, fail_on=fail_on,
                                fail_on_change=True, progress=progress, found=memo.found if memo else None,
                                spool=_spool_dir(json_path, sarif_path))
    except SystemExit:
        raise
    except _errors() as exc:
        _fail(str(exc))
    lines = []
    for f in record.files:
        if f.status == "migrated":
            new_name = f.output_path.rsplit("/", 1)[-1]
            renamed = new_name != f.rel.rsplit("/", 1)[-1]
            lines.append(f"{f.path}: would be migrated ({f.edit_count} edits"
                         + (f", renamed to {printable(new_name)}" if renamed else "") + ")\n")
    _finish(record, json_path, quiet, sarif_path=sarif_path, console="".join(lines), memo=memo)


@main.command("explain", context_settings=_CONTEXT)
@click.argument("diag_id")
def explain_cmd(diag_id: str) -> None:
    """Show the documentation page of a diagnostic ID (e.g. MU1001)."""
    from musify.diagnostics import CATALOGUE

    diag_id = diag_id.upper()
    spec = CATALOGUE.get(diag_id)
    if spec is None:
        _fail(f"unknown diagnostic {diag_id}; known: {', '.join(sorted(CATALOGUE))}")
    from musify.docs_paths import diagnostic_page

    page = diagnostic_page(diag_id)
    if page is not None:
        click.echo(page)
    else:
        click.echo(f"{spec.id} ({spec.severity}, effort {spec.effort}): {spec.title}\n\n{spec.template}")


@main.command("report", context_settings=_CONTEXT)
@click.argument("record_path", type=_EXISTING_FILE)
@click.option("--format", "fmt", type=click.Choice(REPORT_FORMATS), default=None,
              help="Output format (default: from the -o suffix: .html, .sarif, .md, .csv; else summary).")
@click.option("-o", "--output", "out_file", type=_FILE, help="Write the report here.")
def report_cmd(record_path: str, fmt: str | None, out_file: str | None) -> None:
    """Re-render a run record (from --json) without migrating again."""
    from musify.console import print_diagnostics, print_summary
    from musify.records import RunRecord

    try:
        with open(record_path, encoding="utf-8") as fh:
            record = RunRecord.from_json(json.load(fh))
    except (ValueError, KeyError, TypeError) as exc:
        _fail(f"{record_path}: not a readable run record: {exc}")
    fmt = fmt or format_for(out_file)
    if fmt == "summary":
        print_diagnostics(record, sys.stdout)
        print_summary(record, sys.stdout)
        if record.verify:
            from musify.verify.render import print_verify

            print_verify(record.verify, sys.stdout)
        return
    text = render_report(record, fmt)
    if out_file:
        from musify.file_tools import atomic_write

        atomic_write(out_file, text.encode("utf-8"), durable=False)
    else:
        sys.stdout.write(text)


def render_report(record, fmt: str) -> str:
    """The record in one of the file formats (musify.report.FORMATS)."""
    from musify.report import render

    return render(record, fmt)


def _register_optional_commands() -> None:
    """Commands that live in their own packages register here (one line each); run on first need."""
    if _OPTIONAL_LOADED:
        return
    _OPTIONAL_LOADED.append(True)
    for module, attr in (("musify.emu.command", "emu_run"), ("musify.rules.command", "rules_cmd"),
                         ("musify.verify.command", "verify_cmd")):
        try:
            mod = __import__(module, fromlist=[attr])
        except ModuleNotFoundError as exc:
            if exc.name and module.startswith(exc.name):
                continue  # that package is not part of this build
            raise
        main.add_command(getattr(mod, attr))


_OPTIONAL_LOADED: list[bool] = []
