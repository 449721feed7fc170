"""The options `musify verify` and `musify migrate --verify` share, with nothing heavy imported:
the command line builds its parser from these before any command runs."""

from __future__ import annotations

import click

from musify.arch import ARCHES

VERIFY_KEYS = ("archs", "backend", "time_limit", "memory_gib", "rtol", "atol", "ignore", "no_racecheck",
               "no_harness", "verify_build_dir")


def verify_options(*arch_names: str):
    """The options `verify` and `migrate --verify` share (`migrate` has an `--arch` of its own)."""
    return lambda f: _with_options(f, arch_names)


def _with_options(f, arch_names: tuple[str, ...]):
    options = [
        click.option(*arch_names, "archs", multiple=True, type=click.Choice(ARCHES),
                     help="MUSA arch(s) to verify the port on (default: mp_22 at warp 128 and mp_31 at warp 32)."),
        click.option("--backend", type=click.Choice(["emu", "mcc", "cuda"]), default=None,
                     help="Where to build and run: the CPU emulator (default; or the configuration's verify.backend), "
                          "mcc and a MUSA GPU, or nvcc and an NVIDIA GPU."),
        click.option("--time-limit", type=float, default=None, help="Seconds each run may take (default 60)."),
        click.option("--memory", "memory_gib", type=float, default=None, help="Address-space limit per run in GiB (default 8)."),
        click.option("--rtol", type=float, default=None, help="Relative tolerance for numbers (default 1e-5)."),
        click.option("--atol", type=float, default=None, help="Absolute tolerance for numbers (default 1e-8)."),
        click.option("--ignore", multiple=True, metavar="REGEX", help="Output lines to leave out of the comparison (replaces the default timing pattern)."),
        click.option("--no-racecheck", is_flag=True, help="Build without the shared-memory race check."),
        click.option("--no-harness", is_flag=True, help="Do not generate harnesses for kernels without a main."),
        click.option("--verify-build-dir", "verify_build_dir", type=click.Path(file_okay=False), default=None,
                     hidden=arch_names == ("--arch",),  # `verify` spells it -p
                     help="Folder of the compile_commands.json to take build flags from."),
    ]
    for option in reversed(options):
        f = option(f)
    return f
