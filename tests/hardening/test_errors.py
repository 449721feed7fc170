"""A failure that stops the run is one line naming what and why, with a documented exit code
(docs/cli.md); the traceback only with --debug."""

from __future__ import annotations

from tests.hardening.conftest import cli


def test_run_level_failure_is_one_line_and_debug_shows_the_traceback(tmp_path):
    (tmp_path / "a.cu").write_bytes(b"cudaMalloc;\n")
    blocker = tmp_path / "afile"
    blocker.write_bytes(b"")
    out = cli("check", "-q", str(tmp_path / "a.cu"), "--json", str(blocker / "run.json"))
    errors = [ln for ln in out.stderr.splitlines() if ln.startswith("musify: error:")]
    assert out.returncode == 3 and errors == [f"musify: error: {blocker}: File exists"], out.stderr
    assert "Traceback" not in out.stderr
    debug = cli("--debug", "check", "-q", str(tmp_path / "a.cu"), "--json", str(blocker / "run.json"))
    assert isinstance(debug.exception, FileExistsError)  # raised on: Python prints the traceback
