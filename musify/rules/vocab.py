"""The vocabularies of the Python and build-file front ends (`rules/**/*.toml`).

The C-family rules are a table of names (`rules/**/*.yaml`); what Python, CMake and Make code needs
is shaped differently (module paths, compiler flags, CMake commands and targets), so those tables
are small TOML files of their own, still data under `rules/`, never names in a pass. Each table is
read once per process; a malformed table raises `RuleFileError` naming the file.
"""

from __future__ import annotations

import marshal
import os
import sys
from functools import cache
from pathlib import Path
from zlib import crc32

from musify import digests, resources
from musify.rules.files import RuleFileError, default_rules_dir

SCHEMA = "musify-vocab/1"
TABLES = ("pytorch/python.toml", "build/toolchain.toml", "build/cmake.toml", "torch_cpp/structural.toml")


def load_vocab(table: str) -> dict:
    """One vocabulary table (a path relative to `rules/`, e.g. "build/toolchain.toml"), read once
    per rules folder (`MUSIFY_RULES_DIR` can point elsewhere)."""
    return _load(_table_path(table, os.environ.get("MUSIFY_RULES_DIR")))


@cache
def _table_path(table: str, rules_dir: str | None) -> Path:
    """Where `table` is, for the `MUSIFY_RULES_DIR` given: found once, not once a file (the rules
    folder's lookup asks the file system whether the package holds one: a `stat` a call)."""
    return default_rules_dir() / table


def digest() -> str:
    """A digest of every vocabulary table's bytes: part of the incremental cache's key, since the
    tables change what the Python, build-file and C++ front ends rewrite (the rules digest covers
    the YAML records only)."""
    h = digests.sha256()
    for table in TABLES:
        try:
            data = (default_rules_dir() / table).read_bytes()
        except OSError:
            data = b"\0missing"
        h.update(table.encode() + b"\0" + data + b"\0")
    return h.hexdigest()[:20]


@cache
def _load(path: Path) -> dict:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise RuleFileError(f"{path}:1: cannot read vocabulary table: {exc.strerror or exc}") from None
    doc = _parsed(path, data)
    if doc.get("schema") != SCHEMA:
        raise RuleFileError(f"{path}:1: 'schema' must be {SCHEMA!r}, got {doc.get('schema')!r}")
    for key, value in doc.items():
        if isinstance(value, list) and not all(isinstance(v, dict) and "cuda" in v or "call" in v for v in value):
            raise RuleFileError(f"{path}:1: every [[{key}]] record needs a 'cuda' (or 'call') field")
    return doc


def _parsed(path: Path, data: bytes) -> dict:
    """The table's TOML parsed; kept, by a hash of its bytes, as a marshal file in the cache root
    (behind its CRC-32, so that a damaged file is parsed again rather than read as other words),
    so that a run reads it back (a tenth of a millisecond) instead of importing the TOML parser and
    parsing (a few milliseconds, every run over C-family files: the C++ pass reads its table)."""
    key = digests.sha256(b"%d.%d\0crc\0" % sys.version_info[:2] + data).hexdigest()[:24]
    kept = resources.cache_dir("vocab") / f"{key}.marshal"
    try:
        raw = kept.read_bytes()  # the CRC-32 of the marshal string, then the string
        if crc32(raw[4:]) == int.from_bytes(raw[:4], "little"):  # intact (else parsed again)
            doc = marshal.loads(raw[4:])
            if isinstance(doc, dict):
                return doc
    except (OSError, ValueError, EOFError, TypeError):
        pass
    import tomllib  # here: a run with the table kept never parses one

    text = data.decode("utf-8")
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise RuleFileError(f"{path}:1: not valid TOML: {exc}") from None
    try:
        kept_data = marshal.dumps(doc)
        digests.write_atomically(kept, crc32(kept_data).to_bytes(4, "little") + kept_data)
    except ValueError:  # a value marshal cannot hold (a TOML date): parsed again next time
        pass
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


# What each table's records are, for the coverage tables (`musify rules docs`):
# (table, key, library shown, kind shown, how a record's CUDA spelling is written)
_COVERAGE = (
    ("pytorch/python.toml", "module", "pytorch-python", "namespace", "{cuda}"),
    ("pytorch/python.toml", "name", "pytorch-python", "function", "{module}.{cuda}"),
    ("pytorch/python.toml", "member", "pytorch-python", "function", ".{cuda}"),
    ("build/toolchain.toml", "flag", "build-toolchain", "keyword", "{cuda}"),
    ("build/toolchain.toml", "library", "build-toolchain", "keyword", "-l{cuda}"),
    ("build/toolchain.toml", "path", "build-toolchain", "keyword", "{cuda}"),
    ("build/toolchain.toml", "variable", "build-toolchain", "variable", "{cuda}"),
    ("build/cmake.toml", "package", "cmake", "keyword", "find_package({cuda})"),
    ("build/cmake.toml", "command", "cmake", "function", "{cuda}()"),
    ("build/cmake.toml", "target", "cmake", "variable", "{cuda}"),
    ("build/cmake.toml", "variable", "cmake", "variable", "{cuda}"),
    ("torch_cpp/structural.toml", "member_call", "torch", "function", ".{cuda}()"),
    ("torch_cpp/structural.toml", "macro_argument", "torch", "enumerator", "{macro}(.., {cuda}, ..)"),
    ("torch_cpp/structural.toml", "case_label", "torch", "enumerator", "case {cuda}:"),
)


def vocab_rules() -> list:
    """The vocabulary records as `Rule`s, so the coverage tables list them with the name rules:
    a best guess shows as inferred, a record with no MUSA form as unsupported (with its diag)."""
    from musify.rules.model import Rule

    out = []
    for table, key, library, kind, shown in _COVERAGE:
        if not (default_rules_dir() / table).is_file():  # a rules folder without this vocabulary
            continue
        for r in records(load_vocab(table), key):
            musa = r.get("musa")
            if key == "flag" and r.get("action") == "drop":
                musa = None
            status = "renamed" if musa else "unsupported"
            note = r.get("source") or ("this project's best guess" if r.get("guess") else None)
            if key == "flag" and musa is None:
                note = "dropped" + (f" ({note})" if note else "")
            if key == "case_label":
                status, musa, note = "renamed", r["musa"], f"kept with {r['diag']} when the switch already has {r['musa']}"
            out.append(Rule(cuda=shown.format(**r), musa=musa if status == "renamed" else None, kind=kind,
                            library=library, status=status, diag=r.get("diag"), note=note,
                            inferred=bool(r.get("guess")), section=table, origin=f"rules/{table}"))
    return out
