"""Project configuration: `[tool.musify]` in pyproject.toml, or a `.musify.toml`.

The file closest to the input (the input directory itself, then its parents up to the working
directory's root) wins; command-line flags override it. Unknown keys are an error naming the
file, so a misspelt option is not silently ignored.
"""

from __future__ import annotations

import os
import sys

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

KEYS = {
    "exclude": list, "rewrite_comments": bool, "rewrite_strings": bool, "rename_files": bool,
    "rules": list, "arch": str, "arch_map": dict, "suppress": list, "shims": bool, "fail_on": str,
    "respect_gitignore": bool, "verify": dict,  # verify: musify/verify/settings.py checks its keys
}


class ConfigError(ValueError):
    pass


def find_config(start: str) -> tuple[str, dict] | None:
    """The nearest `.musify.toml` or pyproject `[tool.musify]` at or above `start`."""
    d = os.path.abspath(start if os.path.isdir(start) else os.path.dirname(start) or ".")
    while True:
        for name in (".musify.toml", "pyproject.toml"):
            path = os.path.join(d, name)
            if os.path.isfile(path):
                table = _read(path)
                if table is not None:
                    return path, table
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def _read(path: str) -> dict | None:
    try:
        with open(path, "rb") as fh:
            doc = tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read configuration: {exc}") from None
    table = doc.get("tool", {}).get("musify") if path.endswith("pyproject.toml") else doc
    if table is None:
        return None
    for key, value in table.items():
        if key not in KEYS:
            raise ConfigError(f"{path}: unknown option {key!r} (known: {', '.join(sorted(KEYS))})")
        if not isinstance(value, KEYS[key]):
            raise ConfigError(f"{path}: option {key!r} must be a {KEYS[key].__name__}")
    base = os.path.dirname(path)
    if "rules" in table:
        table = dict(table, rules=[os.path.join(base, r) for r in table["rules"]])
    return table
