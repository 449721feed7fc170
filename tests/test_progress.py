"""Progress output: a bar on a terminal, plain lines in a log, one line per file with -v, none with -q."""

from __future__ import annotations

import io
from types import SimpleNamespace

from click.testing import CliRunner

from musify import progress as prog
from musify.cli import main


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _results(n: int):
    return [SimpleNamespace(path=f"src/k{i}.cu", status="migrated", edit_count=i) for i in range(n)]


def test_quiet_gives_no_callback() -> None:
    with prog.progress_for(True, False, io.StringIO()) as cb:
        assert cb is None


def test_log_gets_plain_lines_only_for_a_long_run(monkeypatch) -> None:
    log = io.StringIO()
    with prog.progress_for(False, False, log) as cb:
        for i, r in enumerate(_results(3), 1):
            cb(r, i, 3)
    assert log.getvalue() == ""  # a short run prints nothing
    monkeypatch.setattr(prog, "FIRST_LINE_S", 0.0)
    with prog.progress_for(False, False, log) as cb:
        for i, r in enumerate(_results(3), 1):
            cb(r, i, 3)
    assert log.getvalue().startswith("musify: 1/3 files (33%)") and "last src/k0.cu" in log.getvalue()
    assert "\x1b[" not in log.getvalue()


def test_verbose_prints_each_file() -> None:
    log = io.StringIO()
    with prog.progress_for(False, True, log) as cb:
        for i, r in enumerate(_results(2), 1):
            cb(r, i, 2)
    assert log.getvalue().splitlines() == ["musify: [1/2] src/k0.cu: migrated", "musify: [2/2] src/k1.cu: migrated, 1 edits"]


def test_terminal_gets_a_bar_with_count_rate_and_file() -> None:
    tty = Terminal()
    with prog.progress_for(False, False, tty) as cb:
        assert isinstance(cb, prog._Bar)
        for i, r in enumerate(_results(4), 1):
            cb(r, i, 4)
        cb.progress.refresh()
        shown = tty.getvalue()
    assert "4/4" in shown and "/s" in shown and "src/k3.cu" in shown


def test_cli_verbose_lists_files(tmp_path) -> None:
    (tmp_path / "a.cu").write_text("int main() { cudaDeviceSynchronize(); }\n")
    (tmp_path / "b.h").write_text("int x;\n")
    r = CliRunner().invoke(main, ["migrate", str(tmp_path), "--diff", "-v", "--no-cache"])
    assert r.exit_code == 0, r.output
    assert "a.cu: migrated, 1 edits" in r.output and "b.h: unchanged" in r.output
