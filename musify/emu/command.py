"""`musify emu-run`: build CUDA or MUSA sources on the reference emulator and run them."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from musify.arch import ARCHES
from musify.emu.build import BuildError, BuildOptions, build
from musify.emu.flags import parse_flags
from musify.emu.run import run
from musify.sandbox import Limits


class _SplitAtDashes(click.Command):
    """Everything after `--` belongs to the program, not to emu-run (click would drop the `--`);
    compiler-style flags (`-I`, `-D`, `-U`, `-std=`, `-Xcompiler`, `-fopenmp`) are taken out
    before click parses the rest, since click cannot spell `-std=c++17` or `-I../common`."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if "--" in args:
            i = args.index("--")
            ctx.meta["program_args"] = args[i + 1 :]
            args = args[:i]
        ctx.meta["build_words"], args = split_build_flags(args)
        return super().parse_args(ctx, args)


def split_build_flags(args: list[str]) -> tuple[list[str], list[str]]:
    """(compiler flags, everything else) from a command line."""
    flags, rest = [], []
    i = 0
    while i < len(args):
        word = args[i]
        if word in ("-I", "-D", "-U", "-Xcompiler", "--compiler-options") and i + 1 < len(args):
            flags += [word, args[i + 1]]
            i += 2
            continue
        if word.startswith(("-I", "-D", "-U", "-std=", "--std=", "-Xcompiler=")) or word == "-fopenmp":
            flags.append(word)
        else:
            rest.append(word)
        i += 1
    return flags, rest


def _database_flags(build_dir: Path, files: tuple[Path, ...], typed):
    """The compile database's flags for these files, then the ones typed (a missing entry is an error)."""
    from musify.verify.buildinfo import from_compile_commands

    db = build_dir / "compile_commands.json"
    if not db.is_file():
        raise click.UsageError(f"{db}: no compile_commands.json there")
    wanted = {f.resolve() for f in files}
    info = from_compile_commands(db, Path(os.path.commonpath([str(f.parent) for f in wanted])))
    if info.problem:
        raise click.UsageError(info.problem)
    if not wanted & set(info.sources):
        raise click.UsageError(f"{db}: no entry compiles {', '.join(str(f) for f in files)}")
    info.flags.merge(typed)
    return info.flags


def report_ignored(ignored: list[tuple[str, str]], who: str) -> None:
    """Say which project flags the emulator build does not honour (never drop them silently)."""
    for flag, why in ignored:
        click.echo(f"musify {who}: note: flag '{flag}' not honoured: {why}", err=True)


@click.command("emu-run", cls=_SplitAtDashes)
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--arch", type=click.Choice(["sm_80", *ARCHES]), default=None,
              help="Target: mp_21/mp_22 imply a 128-lane warp, mp_31 and sm_80 a 32-lane warp.")
@click.option("--warp", type=click.Choice(["32", "128"]), default=None, help="Warp width (overrides --arch).")
@click.option("--face", type=click.Choice(["cuda", "musa"]), default=None,
              help="Header set; default: musa for .mu files, cuda otherwise.")
@click.option("--arch-macro", is_flag=True, help="Define __CUDA_ARCH__/__MUSA_ARCH__ (see docs/emulator.md).")
@click.option("--sanitize", is_flag=True, help="Build with AddressSanitizer.")
@click.option("--racecheck", is_flag=True,
              help="Report a __shared__ read or write racing another thread's since the last barrier (exit 86).")
@click.option("--keep-build", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Keep the rewritten sources and the executable in this folder.")
@click.option("--timeout", type=float, default=60.0, show_default=True, help="Seconds before the program is stopped.")
@click.option("--memory", "memory_gib", type=float, default=8.0, show_default=True,
              help="Address-space limit of the program in GiB (0: none; --sanitize implies none).")
@click.option("--compile-timeout", type=float, default=600.0, show_default=True,
              help="Seconds before the compiler is stopped.")
@click.option("-p", "--build-dir", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
              help="Take the build flags of FILE... from this folder's compile_commands.json.")
@click.pass_context
def emu_run(ctx, files, arch, warp, face, arch_macro, sanitize, racecheck, keep_build, timeout, memory_gib,
            compile_timeout, build_dir):
    """Compile FILE... with the emulator headers and run the program with ARGS (after `--`).

    Compiler flags -I DIR, -D NAME[=VALUE], -U NAME, -std=c++NN, -fopenmp and -Xcompiler FLAGS are
    passed to the build. The program runs contained (docs/sandbox.md) in a temporary directory.
    The exit status is the program's; 124 when it was stopped at the time limit, 2 when it did
    not compile.
    """
    flags = parse_flags(ctx.meta.get("build_words", []), os.getcwd())
    if build_dir is not None:
        flags = _database_flags(build_dir, files, flags)
    report_ignored(flags.ignored, "emu-run")
    options = BuildOptions(face=face, warp=int(warp) if warp else None, arch=arch, sanitize=sanitize,
                           arch_macro=arch_macro, racecheck=racecheck, project_flags=tuple(flags.flags),
                           compile_timeout=compile_timeout)
    try:
        result = build(list(files), options, keep_dir=keep_build)
    except BuildError as exc:
        click.echo(exc.log, err=True, nl=False)
        click.echo(f"musify emu-run: {exc}", err=True)
        sys.exit(2)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from exc
    memory = None if sanitize or memory_gib <= 0 else int(memory_gib * (1 << 30))
    outcome = run(result.executable, ctx.meta.get("program_args", []), limits=Limits(time=timeout, memory=memory))
    if outcome.lock_failed:
        click.echo(f"musify emu-run: warning: could not make read-only: {', '.join(outcome.lock_failed)}", err=True)
    click.echo(outcome.stdout, nl=False)
    click.echo(outcome.stderr, err=True, nl=False)
    sys.exit(outcome.returncode)
