"""Helpers for the verify tests: copy an input tree, migrate it, edit the port, verify."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from musify.api import migrate
from musify.options import Options
from musify.verify.flow import verify_record
from musify.verify.settings import Settings

HERE = Path(__file__).resolve().parent
INPUTS = HERE / "inputs"
PROJECTS = HERE / "projects"
CORPORA = HERE.parents[1] / "corpora"
requires_cxx = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")


def ported(tmp_path: Path, *sources: Path, name: str = "orig") -> tuple[Path, Path, object]:
    """Copy `sources` (folders) under tmp_path/name, migrate them to tmp_path/port; (orig, port, record)."""
    original = tmp_path / name
    for src in sources:
        shutil.copytree(src, original / src.name, dirs_exist_ok=True, ignore=shutil.ignore_patterns("expected"))
    port = tmp_path / "port"
    record, _ = migrate([str(original)], Options(), "out", str(port))
    return original, port, record


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


def verify(record, port: Path, original: Path, **settings) -> dict:
    base = {"archs": ("mp_31",), "time_limit": 30.0, "jobs": 2, "base": str(original)}
    return verify_record(record, port, Settings(**{**base, **settings}))


def verdicts(section: dict) -> dict[str, dict[str, str]]:
    return {p["name"]: {a: e["verdict"] for a, e in p["archs"].items()} for p in section["programs"]}


def program(section: dict, name: str) -> dict:
    return next(p for p in section["programs"] if p["name"] == name)
