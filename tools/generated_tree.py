"""Write, or check, a folder of generated files (the generators of shims/emu/libs and shims/musa_on_cuda).

A generator fills a fresh temporary folder; `--check` compares it byte for byte with the committed
one (exit 1 and a message when they differ), otherwise the committed one is replaced.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path


def tree(root: Path) -> dict[str, bytes]:
    """Every file under root, by relative path."""
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()} if root.is_dir() else {}


def run(description: str, generate: Callable[[Path], None], target: Path, parts: tuple[str, ...],
        command: str, argv: list[str] | None = None) -> int:
    """Generate into a temporary folder, then check or replace `target/<part>` for each part."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--check", action="store_true", help="compare with the committed files, write nothing")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        fresh = Path(tmp) / "out"
        generate(fresh)
        if args.check:
            stale = [part for part in parts if tree(target / part) != tree(fresh / part)]
            if stale:
                print(f"{target}/{stale[0]} is out of date: run {command}", file=sys.stderr)
                return 1
            return 0
        for part in parts:
            shutil.rmtree(target / part, ignore_errors=True)
            shutil.copytree(fresh / part, target / part)
    return 0
