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


def test_a_bug_on_one_file_is_mu0022_and_debug_raises_it(tmp_path, monkeypatch):
    """A pass that raises on a file: that file is reported (MU0022, not the "cannot read file" of
    MU0001) and left unwritten, the others are migrated, exit 1; with --debug the error itself
    comes out, with its traceback."""
    from musify.passes import includes

    (tmp_path / "a.cu").write_bytes(b"#include <cuda_runtime.h>\n")
    (tmp_path / "b.cu").write_bytes(b"cudaMalloc;\n")

    def broken(ctx):
        raise RuntimeError("a bug in the includes pass")

    monkeypatch.setattr(includes, "_edits", lambda ctx, *a: broken(ctx))
    out = cli("migrate", "--no-cache", str(tmp_path / "a.cu"), str(tmp_path / "b.cu"), "-o", str(tmp_path / "out"))
    assert out.returncode == 1
    assert "a.cu:1:1: error: MU0022: left as is: internal error: RuntimeError: a bug in the includes pass" in out.stderr
    assert "MU0001" not in out.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["b.mu"]
    debug = cli("--debug", "migrate", "--no-cache", str(tmp_path / "a.cu"), "-o", str(tmp_path / "out2"))
    assert isinstance(debug.exception, RuntimeError)
    import os

    assert "MUSIFY_DEBUG" not in os.environ  # set for the run only
