"""Build steps pyproject.toml cannot declare: ship the repository's data inside the package.

The rule database, the shims and the user docs live at the top of the repository (`rules/`,
`shims/`, `docs/`), where people edit them. A wheel must carry them, so `build_py` copies them
to `musify/data/` in the build tree and compiles the rules once into `musify/data/ruleset-*.pickle`,
so the first run of an installed musify needs no cache build. Editable installs skip the copy:
they read the checkout (musify/resources.py).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
DATA = ("rules", "shims", "docs")  # top-level folders copied to musify/data/
DATA_SKIP = ("coverage",)  # docs/coverage: generated tables for maintainers, not read at run time

# Compiled extensions, each optional with a pure-Python fallback: without a C compiler (or
# Python's headers) the build only warns; `musify.frontend.scanner.SCANNER` says which one runs.
EXT_MODULES = [
    Extension("musify.frontend._cscan", ["musify/frontend/_cscan.c", "musify/frontend/_cscan_ident.c",
                                         "musify/frontend/_cscan_lines.c", "musify/frontend/_cscan_pytree.c"],
              depends=["musify/frontend/_cscan.h", "musify/frontend/_cscan_lex.h", "musify/frontend/_cscan_label.h",
                       "musify/_cnewlines.h"],
              optional=True, extra_compile_args=["-O2"]),
    Extension("musify.frontend._claunch", ["musify/frontend/_claunch.c", "musify/frontend/_claunch_structure.c",
                                           "musify/frontend/_claunch_kernel.c", "musify/frontend/_claunch_defs.c",
                                           "musify/frontend/_claunch_shape.c", "musify/frontend/_claunch_literals.c",
                                           "musify/frontend/_claunch_warp.c"],
              depends=["musify/frontend/_claunch.h"], optional=True, extra_compile_args=["-O2"]),
    Extension("musify.engine._cedits", ["musify/engine/_cedits.c"], optional=True, extra_compile_args=["-O2"]),
    Extension("musify._cport", ["musify/_cport.c", "musify/_cport_probe.c", "musify/_cport_ports.c"],
              depends=["musify/_cport.h"],
              optional=True, extra_compile_args=["-O2"]),
    Extension("musify._cread", ["musify/_cread.c"], optional=True, extra_compile_args=["-O2"]),
    Extension("musify._crecord", ["musify/_crecord.c", "musify/_crecord_entry.c", "musify/_crecord_totals.c",
                                  "musify/_crecord_out.c"],
              depends=["musify/_crecord.h", "musify/_cnewlines.h"], optional=True, extra_compile_args=["-O2"]),
    Extension("musify._cdiag", ["musify/_cdiag.c"], optional=True, extra_compile_args=["-O2"]),
    Extension("musify._cmem", ["musify/_cmem.c"], optional=True, extra_compile_args=["-O2"]),
    Extension("musify._cwalk", ["musify/_cwalk.c", "musify/_cwalk_prefetch.c"], depends=["musify/_cwalk.h"],
              optional=True, extra_compile_args=["-O2"]),
]


class BuildPyWithData(build_py):
    """build_py, then the data folders and the compiled rules into the build tree."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        target = Path(self.build_lib) / "musify" / "data"
        for name in DATA:
            if (ROOT / name).is_dir():
                shutil.rmtree(target / name, ignore_errors=True)
                shutil.copytree(ROOT / name, target / name, ignore=shutil.ignore_patterns(*DATA_SKIP, "__pycache__"))
        _compile_rules(target)


def _compile_rules(target: Path) -> None:
    """Write the compiled RuleSet beside the copied rules; a failure only costs the first run time."""
    sys.path.insert(0, str(ROOT))
    try:
        from musify.rules import loader

        rules_dir = target / "rules"
        blobs = [(p, p.read_bytes()) for p in loader.rule_files(rules_dir)]
        digest = loader.rules_digest(blobs, rules_dir)
        ruleset = loader.compile_rules(blobs, rules_dir, digest)
        loader.save_compiled(ruleset, target / loader.compiled_name(digest))
    except Exception as exc:  # noqa: BLE001 -- the package still works, it compiles on first use
        print(f"setup.py: rules not precompiled ({exc.__class__.__name__}: {exc})", file=sys.stderr)
    finally:
        sys.path.remove(str(ROOT))


setup(cmdclass={"build_py": BuildPyWithData}, ext_modules=EXT_MODULES)
