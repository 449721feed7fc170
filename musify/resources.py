"""Where musify's data and caches live, whichever way it was installed.

The rule database, the shims and the diagnostics pages are kept in the repository's top-level
`rules/`, `shims/` and `docs/` folders. A wheel (or `pip install .`) carries a copy of them
under `musify/data/` (setup.py copies them at build time); a checkout or an editable install has
no such copy and reads the top-level folders. Asking here, rather than walking up from a source
file, is what lets an installed musify work from any directory.

Caches (the compiled rules, the emulator's builds, the incremental-run cache) share one root:
`$MUSIFY_CACHE_DIR`, else `$XDG_CACHE_HOME/musify`, else `~/.cache/musify`.
"""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
PACKAGED = PACKAGE / "data"  # filled by setup.py's build step; absent in a checkout
CHECKOUT = PACKAGE.parent


def data_dir(name: str) -> Path:
    """The folder `name` ("rules", "shims", "shims/emu", "docs", ...): the packaged copy when
    there is one, else the checkout's. The path may not exist (a broken install); callers say so."""
    packaged = PACKAGED / name
    if packaged.is_dir():
        return packaged
    return CHECKOUT / name


def packaged_file(name: str) -> Path | None:
    """A file the build step put in the package (e.g. the compiled rules), or None."""
    path = PACKAGED / name
    return path if path.is_file() else None


def cache_root() -> Path:
    """The one cache root: $MUSIFY_CACHE_DIR, else $XDG_CACHE_HOME/musify, else ~/.cache/musify."""
    env = os.environ.get("MUSIFY_CACHE_DIR")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return Path(xdg if xdg else os.path.expanduser("~/.cache")) / "musify"


def cache_dir(name: str) -> Path:
    """One cache's folder under the root ("rules", "vocab", "emu", "files", "digests"); not created here."""
    return cache_root() / name
