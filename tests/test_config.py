"""Configuration files: every key checked with file, line and key in the error; flags win."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from musify.config import KEYS, ConfigError, find_config

REPO = Path(__file__).resolve().parents[1]


def _error(path: Path) -> str:
    with pytest.raises(ConfigError) as info:
        find_config(str(path.parent))
    return str(info.value)


def test_unknown_key_names_file_line_and_key(tmp_path: Path) -> None:
    cfg = tmp_path / ".musify.toml"
    cfg.write_text('# project settings\nexclude = ["build/*"]\n\nrewrite_coments = true\n')
    message = _error(cfg)
    assert message.startswith(f"{cfg}:4: rewrite_coments: unknown key")
    assert "rewrite_comments" in message  # the known keys are listed


@pytest.mark.parametrize("line, problem", [
    ("jobs = 0", "at least 1"), ("jobs = true", "whole number"), ("fail_on = 'fatal'", "one of note"),
    ("arch = 'mp_99'", "mp_22"), ("suppress = ['MU20x']", "not a diagnostic ID"),
    ("exclude = 'build'", "list of strings"), ("cache = 'yes'", "true or false"),
    ("arch_map = {80 = 'fast'}", "numbers"),
])
def test_bad_value_in_pyproject_names_its_line(tmp_path: Path, line: str, problem: str) -> None:
    cfg = tmp_path / "pyproject.toml"
    cfg.write_text(f'[project]\nname = "x"\n\n[tool.musify]\nrename_files = false\n{line}\n')
    message = _error(cfg)
    key = line.split()[0]
    assert message.startswith(f"{cfg}:6: {key}: ") and problem in message, message


def test_sub_table_error_points_at_its_header(tmp_path: Path) -> None:
    cfg = tmp_path / ".musify.toml"
    cfg.write_text('arch = "mp_31"\n\n[arch_map]\n80 = "x"\n')
    assert _error(cfg).startswith(f"{cfg}:3: arch_map: ")


def test_invalid_toml_names_the_line(tmp_path: Path) -> None:
    cfg = tmp_path / ".musify.toml"
    cfg.write_text('arch = "mp_31"\nexclude = [\n')
    assert re.match(rf"{re.escape(str(cfg))}:\d+: not valid TOML", _error(cfg))


def test_command_line_flags_win_over_the_file(tmp_path: Path) -> None:
    from musify.cli import build_options

    (tmp_path / ".musify.toml").write_text('jobs = 2\narch = "mp_31"\nrename_files = false\ncache = false\n')
    from_file = build_options((str(tmp_path),), None, (), False, (), None, None, False, ())
    assert (from_file.jobs, from_file.arch, from_file.rename_files) == (2, "mp_31", False)
    flags = build_options((str(tmp_path),), 1, (), False, (), None, None, False, (), arch="mp_21")
    assert (flags.jobs, flags.arch) == (1, "mp_21")


def test_the_cli_reports_a_bad_file_and_exits_2(tmp_path: Path) -> None:
    (tmp_path / ".musify.toml").write_text("shims = 1\n")
    (tmp_path / "a.cu").write_text("int x;\n")
    done = subprocess.run([sys.executable, "-m", "musify", "check", str(tmp_path)], capture_output=True,
                          text=True, cwd=REPO, check=False)
    assert done.returncode == 2
    assert f"{tmp_path / '.musify.toml'}:1: shims: must be true or false" in done.stderr


def test_docs_list_every_key() -> None:
    page = (REPO / "docs" / "configuration.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"^\| `(\w+)` \|", page, re.MULTILINE))
    assert documented == set(KEYS)
