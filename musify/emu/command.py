"""`musify emu-run`: build CUDA or MUSA sources on the reference emulator and run them."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from musify.arch import ARCHES
from musify.emu.build import BuildError, BuildOptions, build
from musify.emu.run import run


class _SplitAtDashes(click.Command):
    """Everything after `--` belongs to the program, not to emu-run (click would drop the `--`)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if "--" in args:
            i = args.index("--")
            ctx.meta["program_args"] = args[i + 1 :]
            args = args[:i]
        return super().parse_args(ctx, args)


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
@click.pass_context
def emu_run(ctx, files, arch, warp, face, arch_macro, sanitize, racecheck, keep_build, timeout):
    """Compile FILE... with the emulator headers and run the program with ARGS (after `--`).

    The exit status is the program's; 124 when it was stopped at the time limit, 2 when it did
    not compile.
    """
    options = BuildOptions(face=face, warp=int(warp) if warp else None, arch=arch, sanitize=sanitize,
                           arch_macro=arch_macro, racecheck=racecheck)
    try:
        result = build(list(files), options, keep_dir=keep_build)
    except BuildError as exc:
        click.echo(exc.log, err=True, nl=False)
        click.echo(f"musify emu-run: {exc}", err=True)
        sys.exit(2)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from exc
    outcome = run(result.executable, ctx.meta.get("program_args", []), timeout=timeout)
    click.echo(outcome.stdout, nl=False)
    click.echo(outcome.stderr, err=True, nl=False)
    sys.exit(outcome.returncode)
