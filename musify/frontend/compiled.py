"""Where the compiled modules are looked up, in one place, so every pass agrees on when the
pure-Python reference path is used (MUSIFY_PURE_PYTHON set: tests and debugging; or the
module was not built, e.g. an install without a C compiler)."""

from __future__ import annotations

import importlib
import os
from types import ModuleType


def load(name: str, package: str = "musify.frontend") -> ModuleType | None:
    """`<package>.<name>`, or None when it was not built or MUSIFY_PURE_PYTHON is set."""
    if os.environ.get("MUSIFY_PURE_PYTHON", "") not in ("", "0"):
        return None
    try:
        return importlib.import_module(f"{package}.{name}")
    except ImportError:
        return None
