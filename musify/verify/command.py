"""`musify verify ORIGINAL PORT`, and the `--verify` step of `musify migrate -o DIR`."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import click

from musify.config import ConfigError, find_config
from musify.emu.command import _SplitAtDashes, report_ignored
from musify.emu.flags import parse_flags
from musify.records import RunRecord
from musify.verify.options import verify_options
from musify.verify.settings import Settings, from_table


def load_settings(original: str, **overrides) -> Settings:
    """The configuration's verify table (if any) under the command-line overrides."""
    found = find_config(original)
    settings = Settings()
    if found:
        path, table = found
        settings = from_table(table.get("verify", {}), path, str(Path(path).parent))
    else:
        settings = settings.with_(base=str(Path(original).resolve() if Path(original).is_dir() else Path(original).parent))
    return settings.with_(**overrides)


def backend_name(original: str, given: str | None) -> str:
    """`--backend`, else the configuration's `verify.backend`, else the emulator."""
    if given:
        return given
    try:
        found = find_config(original)
        return from_table(found[1].get("verify", {}), found[0], str(Path(found[0]).parent)).backend if found else "emu"
    except ConfigError as exc:  # the whole table is checked here, before anything is migrated or built
        click.echo(f"musify verify: error: {exc}", err=True)
        sys.exit(2)


def chosen_backend(name: str, archs: tuple[str, ...] = ()):
    """The backend `--backend` names; a missing compiler is a usage error (one line, exit 2)."""
    from musify.verify.backend import make_backend

    try:
        backend = make_backend(name)
    except ValueError as exc:
        click.echo(f"musify verify: error: {exc}", err=True)
        sys.exit(2)
    if archs and name == "cuda":
        click.echo("musify verify: note: --arch is for the emu and mcc backends; the cuda backend verifies at "
                   "the NVIDIA GPU's own arch (warp 32)", err=True)
    return backend


def run_verify(record: RunRecord, port_root: Path, settings: Settings, quiet: bool = False, backend=None) -> dict:
    """Verify with progress on stderr, then print the section; returns it."""
    from musify.verify.flow import verify_record
    from musify.verify.render import print_verify

    progress = _Progress(enabled=not quiet and settings.progress)
    section = verify_record(record, port_root, settings, done=progress.done, found=progress.start, backend=backend)
    progress.close()
    print_verify(section)
    return section


class _Progress:
    """A rich progress bar on a terminal; one line per finished program otherwise."""

    def __init__(self, enabled: bool):
        self.enabled = enabled
        self.bar = None
        self.task = None

    def start(self, programs: list) -> None:
        if not self.enabled:
            return
        if sys.stderr.isatty():
            from rich.progress import Progress

            self.bar = Progress(transient=True)
            self.bar.start()
            self.task = self.bar.add_task("verifying", total=len(programs))
        else:
            click.echo(f"musify verify: {len(programs)} programs to verify", err=True)

    def done(self, program, result: dict) -> None:
        if not self.enabled:
            return
        if self.bar is not None:
            self.bar.update(self.task, advance=1, description=program.name)
        else:
            verdicts = " ".join(f"{a}={e['verdict']}" for a, e in result["archs"].items())
            click.echo(f"musify verify: {program.name}: {verdicts}", err=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def settings_from_cli(original: str, ctx: click.Context, archs, time_limit, memory_gib, rtol, atol, ignore,
                      no_racecheck, no_harness, verify_build_dir, jobs: int = 1) -> Settings:
    flags = parse_flags(ctx.meta.get("build_words", []), ".")
    report_ignored(flags.ignored, "verify")
    memory = None if memory_gib is None else (None if memory_gib <= 0 else int(memory_gib * (1 << 30)))
    settings = load_settings(original, archs=tuple(archs) or None, time_limit=time_limit, rtol=rtol, atol=atol,
                             ignore=tuple(ignore) or None, build_dir=verify_build_dir, jobs=max(1, jobs),
                             extra_flags=tuple(flags.flags) or None)
    if memory_gib is not None:
        settings = replace(settings, memory_limit=memory)
    if no_racecheck:
        settings = settings.with_(racecheck=False)
    if no_harness:
        settings = settings.with_(harness=False)
    return settings


def verify_port(record: RunRecord, original: str, out_dir: str, jobs: int, quiet: bool, verify_kw: dict) -> dict:
    """`migrate -o DIR --verify`: verify the port just written (exit 2 on a usage problem).
    `verify_kw["backend"]` is a backend's name or the backend itself."""
    backend = verify_kw.pop("backend", None)
    if backend is None or isinstance(backend, str):  # the name, not yet the backend (musify/cli.py chose it)
        backend = chosen_backend(backend_name(original, backend), tuple(verify_kw.get("archs") or ()))
    name = backend.name
    try:
        settings = settings_from_cli(original, click.get_current_context(), jobs=jobs, **verify_kw).with_(backend=name)
    except (ConfigError, ValueError) as exc:
        click.echo(f"musify verify: error: {exc}", err=True)
        sys.exit(2)
    return run_verify(record, Path(out_dir), settings, quiet, backend)


@click.command("verify", cls=_SplitAtDashes, context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("original", type=click.Path(exists=True))
@click.argument("port", type=click.Path(exists=True))
@click.option("--record", "record_path", type=click.Path(exists=True, dir_okay=False),
              help="The run record of the migration (pairs files by it; its diagnostics get marked).")
@verify_options("--arch")
@click.option("-j", "--jobs", type=int, default=1, show_default=True, help="Programs verified at once.")
@click.option("-p", "--build-dir", "build_dir", type=click.Path(file_okay=False), default=None,
              help="Folder of the compile_commands.json to take build flags from.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), help="Write the run record with its verify section here.")
@click.option("-q", "--quiet", is_flag=True, help="No progress lines.")
@click.pass_context
def verify_cmd(ctx, original, port, record_path, backend, jobs, build_dir, json_path, quiet, **kw) -> None:
    """Build ORIGINAL and PORT on the emulator (or nvcc/mcc: --backend), run both, and compare what they do.

    Compiler flags -I, -D, -U, -std=, -Xcompiler and -fopenmp apply to both builds; flags are also
    read from the project's compile_commands.json, Makefile or CMakeLists.txt. Exit status 1 when
    a port fails, does not compile or does not finish, or when a GPU backend has no GPU to run on
    (the builds are still checked); 0 otherwise (docs/verify.md).
    """
    name = backend_name(original, backend)
    backend = chosen_backend(name, tuple(kw.get("archs") or ()))
    kw["verify_build_dir"] = kw.get("verify_build_dir") or build_dir
    try:
        settings = settings_from_cli(original, ctx, jobs=jobs, **kw).with_(backend=name)
        record = _record(original, record_path)
    except (ConfigError, ValueError) as exc:
        click.echo(f"musify verify: error: {exc}", err=True)
        sys.exit(2)
    section = run_verify(record, Path(port), settings, quiet, backend)
    from musify.console import print_diagnostics

    print_diagnostics(_verified_only(record))
    if json_path:
        from musify.file_tools import atomic_write

        atomic_write(json_path, record.dumps().encode())
    sys.exit(section["exit_code"])


def _record(original: str, record_path: str | None) -> RunRecord:
    if record_path:
        import json

        with open(record_path, encoding="utf-8") as fh:
            return RunRecord.from_json(json.load(fh))
    from musify.api import migrate
    from musify.cli import build_options

    options = build_options([original], 1, (), False, (), None, None, False, ())
    record, _ = migrate([original], options, "none", command=f"musify verify {original}")
    return record


def _verified_only(record: RunRecord) -> RunRecord:
    """The record with only the diagnostics verify raised or marked (what this command adds)."""
    from dataclasses import replace as copy

    files = [copy(f, diagnostics=[d for d in f.diagnostics if d.verify or d.origin == "verify"]) for f in record.files]
    return copy(record, files=files)
