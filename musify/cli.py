"""The `musify` command line: a thin click layer over `musify.api`.

Exit codes (docs/cli.md): 0 success; 1 some file failed or a diagnostic at or above the failure
severity was raised; 2 the run could not start (bad option, output inside input, unreadable rule
file, tree held by another --in-place run); 3 musify itself failed (musify/failures.py).
"""

from __future__ import annotations

import json
import sys

import click

from musify import __version__
from musify.api import UsageError, migrate
from musify.arch import ARCHES
from musify.config import ConfigError, find_config
from musify.console import print_diagnostics, print_summary
from musify.diagnostics import CATALOGUE, SEVERITIES
from musify.discover import printable
from musify.failures import GuardedGroup
from musify.options import Options
from musify.passes.hazards.settings import hazard_settings
from musify.rules.loader import RuleFileError
from musify.verify.command import VERIFY_KEYS, verify_options, verify_port

_CONTEXT = {"help_option_names": ["-h", "--help"]}


@click.group(cls=GuardedGroup, context_settings=_CONTEXT)
@click.version_option(__version__, prog_name="musify")
def main() -> None:
    """Port CUDA code to MUSA, report what could not be ported, and prove ports right."""


def _common(f):
    options = [
        click.argument("paths", nargs=-1, required=True, type=click.Path()),
        click.option("-j", "--jobs", type=int, default=1, show_default=True, help="Worker processes."),
        click.option("--exclude", multiple=True, metavar="GLOB", help="Skip paths matching GLOB (repeatable)."),
        click.option("--no-gitignore", is_flag=True, help="Do not honour .gitignore files."),
        click.option("--rules", "rule_files", multiple=True, type=click.Path(exists=True, dir_okay=False),
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
        click.option("-p", "--build-dir", type=click.Path(file_okay=False),
                     help="Build directory holding compile_commands.json, for --semantic."),
        click.option("--json", "json_path", type=click.Path(dir_okay=False), help="Write the run record here."),
        click.option("--json-lite", is_flag=True, help="Leave the per-edit list out of the run record."),
        click.option("-q", "--quiet", is_flag=True, help="No summary; diagnostics only."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def build_options(paths, jobs, exclude, no_gitignore, rule_files, rewrite_comments, rewrite_strings,
                  no_rename, suppress, arch=None, arch_map=None, no_shims=False, semantic=False,
                  build_dir=None, json_lite=False, **flags) -> Options:
    """Command-line flags over the nearest configuration file over the defaults."""
    found = find_config(paths[0]) if paths else None
    cfg = found[1] if found else {}
    sup = [s for item in (list(cfg.get("suppress", [])) + list(suppress)) for s in item.split(",") if s.strip()]
    return Options(
        jobs=max(1, jobs),
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


def _write_json(record, path: str | None) -> None:
    if path:
        from musify.writers import atomic_write

        atomic_write(path, record.dumps().encode())


@main.command("migrate", context_settings=_CONTEXT)
@_common
@click.option("-o", "--output", "out_dir", type=click.Path(file_okay=False), help="Write a complete mirror here.")
@click.option("--in-place", is_flag=True, help="Rewrite files where they are (journaled; see docs/reliability.md).")
@click.option("--lock-wait", type=float, default=10.0, show_default=True, metavar="SECONDS",
              help="With --in-place: how long to wait for another run on the same tree.")
@click.option("--stdout", "to_stdout", is_flag=True, help="Print migrated sources to stdout.")
@click.option("--diff", "as_diff", is_flag=True, help="Print a unified diff; write nothing.")
@click.option("--reverse", is_flag=True, help="Port MUSA back to CUDA (.mu -> .cu); see docs/reverse.md.")
@click.option("--fail-on", type=click.Choice(SEVERITIES), default=None,
              help="Exit 1 when a diagnostic at or above this severity is raised (default: error).")
@click.option("--report", "report_path", type=click.Path(dir_okay=False), help="Also write the HTML report here.")
@click.option("--verify", "verify_after", is_flag=True, help="Then verify the port on the emulator (docs/verify.md; needs -o).")
@verify_options("--verify-arch")
def migrate_cmd(paths, out_dir, in_place, to_stdout, as_diff, json_path, quiet, fail_on, report_path, verify_after,
                **kw) -> None:
    """Migrate CUDA sources under PATHS to MUSA."""
    verify_kw = {k: kw.pop(k) for k in VERIFY_KEYS}
    if verify_after and not out_dir:
        _fail("--verify needs -o DIR (the port is verified where it was written)")
    chosen = [m for m, on in (("out", out_dir), ("in-place", in_place), ("stdout", to_stdout), ("diff", as_diff)) if on]
    if len(chosen) != 1:
        _fail("choose exactly one of -o DIR, --in-place, --stdout, --diff")
    mode = chosen[0]
    try:
        options = build_options(paths, **kw)
        fail_on = fail_on or (find_config(paths[0]) or (None, {}))[1].get("fail_on") or "error"
        record, outputs = migrate(list(paths), options, mode, out_dir, collect=mode == "stdout",
                                  command="musify migrate " + " ".join(sys.argv[2:]), fail_on=fail_on)
    except (UsageError, ConfigError, RuleFileError) as exc:
        _fail(str(exc))
    if mode == "stdout":
        from musify.writers import write_stdout

        for data in outputs.texts.values():
            write_stdout(data)
    elif mode == "diff":
        sys.stdout.write(outputs.diff)
    if verify_after:
        verify_port(record, paths[0], out_dir, kw["jobs"], quiet, verify_kw)
        from musify.report.summary import Report

        record.exit_code = Report(record).exit_code
    _finish(record, json_path, quiet, report_path)


def _finish(record, json_path: str | None, quiet: bool, report_path: str | None = None) -> None:
    """Print, write the record and reports, exit with the record's code (set once, by `Report`)."""
    print_diagnostics(record)
    _write_json(record, json_path)
    if report_path:
        from musify.writers import atomic_write

        atomic_write(report_path, render_report(record, "html").encode("utf-8"), durable=False)
    if not quiet:
        print_summary(record)
    sys.exit(record.exit_code)


@main.command("check", context_settings=_CONTEXT)
@_common
@click.option("--fail-on", type=click.Choice(SEVERITIES), default="warning", show_default=True,
              help="Fail when a diagnostic at or above this severity is raised.")
def check_cmd(paths, fail_on, json_path, quiet, **kw) -> None:
    """For pre-commit and CI: fail when a migration would change a file or raise a diagnostic."""
    try:
        options = build_options(paths, **kw)
        record, _ = migrate(list(paths), options, "none", command="musify check " + " ".join(sys.argv[2:]),
                            fail_on=fail_on, fail_on_change=True)
    except (UsageError, ConfigError, RuleFileError) as exc:
        _fail(str(exc))
    for f in record.files:
        if f.status == "migrated":
            new_name = f.output_path.rsplit("/", 1)[-1]
            renamed = new_name != f.rel.rsplit("/", 1)[-1]
            click.echo(f"{f.path}: would be migrated ({f.edit_count} edits"
                       + (f", renamed to {printable(new_name)}" if renamed else "") + ")", err=True)
    _finish(record, json_path, quiet)


@main.command("explain", context_settings=_CONTEXT)
@click.argument("diag_id")
def explain_cmd(diag_id: str) -> None:
    """Show the documentation page of a diagnostic ID (e.g. MU1001)."""
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
@click.argument("record_path", type=click.Path(exists=True, dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["summary", "json", "csv", "html"]), default=None,
              help="Output format (default: html with -o FILE.html, else summary).")
@click.option("-o", "--output", "out_file", type=click.Path(dir_okay=False), help="Write the report here.")
def report_cmd(record_path: str, fmt: str | None, out_file: str | None) -> None:
    """Re-render a run record (from --json) without migrating again."""
    from musify.records import RunRecord

    try:
        with open(record_path, encoding="utf-8") as fh:
            record = RunRecord.from_json(json.load(fh))
    except (ValueError, KeyError, TypeError) as exc:
        _fail(f"{record_path}: not a readable run record: {exc}")
    fmt = fmt or ("html" if out_file and out_file.endswith((".html", ".htm")) else "summary")
    if fmt == "summary":
        print_diagnostics(record, sys.stdout)
        print_summary(record, sys.stdout)
        if record.verify:
            from musify.verify.render import print_verify

            print_verify(record.verify, sys.stdout)
        return
    text = render_report(record, fmt)
    if out_file:
        from musify.writers import atomic_write

        atomic_write(out_file, text.encode("utf-8"), durable=False)
    else:
        sys.stdout.write(text)


def render_report(record, fmt: str) -> str:
    """The record in one of the file formats (json totals, csv, html)."""
    if fmt == "json":
        return json.dumps(record.totals, indent=2) + "\n"
    if fmt == "csv":
        from musify.report.csv_report import render_csv

        return render_csv(record)
    from musify.report.html import render_html

    return render_html(record)


def _register_optional_commands() -> None:
    """Commands that live in their own packages register here (one line each)."""
    for module, attr in (("musify.emu.command", "emu_run"), ("musify.rules.command", "rules_cmd"),
                         ("musify.verify.command", "verify_cmd")):
        try:
            mod = __import__(module, fromlist=[attr])
        except ModuleNotFoundError as exc:
            if exc.name and module.startswith(exc.name):
                continue  # that package is not part of this build
            raise
        main.add_command(getattr(mod, attr))


_register_optional_commands()
