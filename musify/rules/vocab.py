"""The vocabularies of the Python and build-file front ends (`rules/**/*.toml`).

The C-family rules are a table of names (`rules/**/*.yaml`); what Python, CMake and Make code needs
is shaped differently (module paths, compiler flags, CMake commands and targets), so those tables
are small TOML files of their own, still data under `rules/`, never names in a pass. Each table is
read once per process; a malformed table raises `RuleFileError` naming the file.
"""

from __future__ import annotations

from functools import cache

import tomllib

from musify.rules.loader import RuleFileError, default_rules_dir

SCHEMA = "musify-vocab/1"
TABLES = ("pytorch/python.toml", "build/toolchain.toml", "build/cmake.toml", "torch_cpp/structural.toml")


@cache
def load_vocab(table: str) -> dict:
    """One vocabulary table (a path relative to `rules/`, e.g. "build/toolchain.toml")."""
    path = default_rules_dir() / table
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise RuleFileError(f"{path}:1: cannot read vocabulary table: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise RuleFileError(f"{path}:1: not valid TOML: {exc}") from None
    if doc.get("schema") != SCHEMA:
        raise RuleFileError(f"{path}:1: 'schema' must be {SCHEMA!r}, got {doc.get('schema')!r}")
    for key, value in doc.items():
        if isinstance(value, list) and not all(isinstance(v, dict) and "cuda" in v or "call" in v for v in value):
            raise RuleFileError(f"{path}:1: every [[{key}]] record needs a 'cuda' (or 'call') field")
    return doc


def python_vocab() -> dict:
    return load_vocab("pytorch/python.toml")


def toolchain_vocab() -> dict:
    return load_vocab("build/toolchain.toml")


def cmake_vocab() -> dict:
    return load_vocab("build/cmake.toml")


def torch_cpp_vocab() -> dict:
    return load_vocab("torch_cpp/structural.toml")


def records(table: dict, key: str) -> list[dict]:
    """The `[[key]]` records of a table (an empty list when it has none)."""
    value = table.get(key, [])
    return value if isinstance(value, list) else []
