"""Regenerate the corpora's golden ports: `python -m tools.update_goldens`.

Migrates `corpora/` with the default options into a temporary tree and copies each program's
migrated sources into `corpora/<program>/expected/`. Review the diff before committing: the
goldens are the project's statement of what a correct port looks like.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORPORA = REPO / "corpora"
PORT_EXTS = {".mu", ".muh", ".cpp", ".cc", ".h", ".hpp", ".cu", ".cuh"}


def is_port_file(path: Path) -> bool:
    """Sources, and the Python and build files musify migrates (setup.py, CMakeLists.txt, Makefile...)."""
    from musify.discover import BUILD_KINDS, classify

    return path.suffix in PORT_EXTS or classify(path.name) in BUILD_KINDS


def port_corpora(out: Path) -> int:
    from musify.api import migrate
    from musify.options import Options

    record, _ = migrate([str(CORPORA)], Options(), "out", str(out))
    return record.exit_code


def expected_files(port: Path, program: str) -> dict[str, bytes]:
    """The ported sources of one program, relative to its directory."""
    root = port / program
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and is_port_file(p) and "expected" not in p.relative_to(root).parts}


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "port"
        code = port_corpora(out)
        for program in sorted(p.name for p in CORPORA.iterdir() if (p / "program.toml").exists()):
            dest = CORPORA / program / "expected"
            if dest.exists():
                shutil.rmtree(dest)
            for rel, data in expected_files(out, program).items():
                target = dest / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
        print(f"goldens written (migration exit code {code})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
