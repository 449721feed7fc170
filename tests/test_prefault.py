"""The program's memory faulted in on another core (musify/prefault.py, musify/_cmem.c): objects
made, freed and made again hold their values, a forked child allocates from what it inherited,
memory given back is returned to the system, a library user's process is never touched, and a
run's outputs are byte for byte those of a run without it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from musify import prefault
from musify.frontend import compiled

REPO = Path(__file__).resolve().parents[1]
NATIVE = compiled.load("_cmem", "musify")
needs_native = pytest.mark.skipif(NATIVE is None or sys.platform != "linux", reason="_cmem not built (Linux only)")


def _python(code: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=REPO, capture_output=True, text=True,
                          env=env, timeout=120, check=False)


@needs_native
def test_objects_keep_their_values_through_arenas_made_freed_and_made_again():
    got = _python("""
        import os, sys
        from musify import _cmem
        started = _cmem.start()
        print("started", started)
        if not started:  # (a kernel without MADV_POPULATE_WRITE: nothing was changed)
            sys.exit(0)
        assert not _cmem.start()  # once a process
        for round in range(3):
            rows = [(i, str(i), [i] * 3) for i in range(400_000)]  # ~100 arenas of small objects
            assert all(r[0] == i and r[1] == str(i) and r[2] == [i, i, i] for i, r in enumerate(rows))
            del rows
        pid = os.fork()
        if pid == 0:  # the child has no populating thread: it allocates from what it inherited
            rows = [(i, str(i)) for i in range(200_000)]
            os._exit(0 if all(r[1] == str(r[0]) for r in rows) else 3)
        _, status = os.waitpid(pid, 0)
        print("child", os.waitstatus_to_exitcode(status))
        print("stopped", _cmem.stop(), _cmem.stop())
    """)
    assert got.returncode == 0, got.stderr
    if "started False" in got.stdout:
        pytest.skip("this kernel has no MADV_POPULATE_WRITE")
    assert "child 0" in got.stdout
    assert "stopped True False" in got.stdout


@needs_native
def test_memory_given_back_goes_back_to_the_system():
    """Arenas pymalloc frees are released beyond the few kept for reuse: a run's peak is not
    held to the end."""
    got = _python("""
        from musify import _cmem
        def rss():
            return int(open("/proc/self/statm").read().split()[1]) * 4096 >> 20
        if not _cmem.start():
            print("unsupported"); raise SystemExit
        base = rss()
        rows = [(i, i + 1) for i in range(1_500_000)]  # some 200 MB of small objects
        peak = rss()
        del rows
        print(base, peak, rss())
    """)
    assert got.returncode == 0, got.stderr
    if "unsupported" in got.stdout:
        pytest.skip("this kernel has no MADV_POPULATE_WRITE")
    base, peak, after = map(int, got.stdout.split())
    assert peak - base > 100
    assert after - base < 40  # the spare arenas, the populated ones ahead and the heap's pad


def test_not_under_an_address_space_limit():
    """Under `ulimit -v` the 4 GB reservation would eat the limit a run that fits needs: not started."""
    got = _python("""
        import resource
        from musify import prefault
        print(prefault.reservation_is_free())
        resource.setrlimit(resource.RLIMIT_AS, (16 << 30, resource.RLIM_INFINITY))
        print(prefault.reservation_is_free())
    """)
    assert got.returncode == 0, got.stderr
    first, second = got.stdout.split()
    assert second == "False"
    if first == "False":  # (this machine runs with a limit, or in strict overcommit, already)
        pytest.skip("the test process has an address space limit or strict overcommit")


def test_a_library_process_is_left_alone():
    """Importing musify (a test, a tool calling the API) never changes the process's allocator."""
    assert prefault.start_for_program(prefault.MIN_FILES * 10) is False


@needs_native
@pytest.mark.parametrize(("setting", "files", "started"),
                         [("1", prefault.MIN_FILES, "[True]"), ("1", prefault.MIN_FILES - 1, "[]"),
                          ("0", prefault.MIN_FILES, "[False]")])
def test_the_program_starts_it_for_a_big_run(tmp_path, setting, files, started):
    """The program (`collector.is_program`: `python -m musify`, the console script) starts it once
    a run lists MIN_FILES files; a smaller run (a pre-commit hook's check) and MUSIFY_PREFAULT=0
    leave it off."""
    for k in range(files):
        (tmp_path / f"k{k}.cu").write_text(f"__global__ void k{k}() {{}}\n", encoding="utf-8")
    env = dict(os.environ, MUSIFY_PREFAULT=setting)
    env.pop("MUSIFY_PURE_PYTHON", None)
    got = _python(f"""
        import sys, types
        sys.modules["__main__"].__spec__ = types.SimpleNamespace(name="musify.__main__")
        from musify import api, prefault
        api.migrate([{str(tmp_path)!r}])
        print(prefault._STARTED)
    """, env)
    assert got.returncode == 0, got.stderr
    if started == "[True]" and "[False]" in got.stdout:
        pytest.skip("this kernel has no MADV_POPULATE_WRITE")
    assert got.stdout.strip() == started


@needs_native
def test_a_run_writes_the_same_bytes_with_and_without_it(tmp_path):
    corpus = tmp_path / "corpora"  # the bundled corpora twice: a run big enough to start it
    for copy in ("a", "b"):
        shutil.copytree(REPO / "corpora", corpus / copy)
    outs = {}
    for setting in ("1", "0"):
        out = tmp_path / f"out{setting}"
        env = dict(os.environ, MUSIFY_PREFAULT=setting)
        env.pop("MUSIFY_PURE_PYTHON", None)
        run = subprocess.run([sys.executable, "-m", "musify", "migrate", str(corpus), "-o", str(out), "-j1", "-q",
                              "--no-cache", "--json", str(tmp_path / f"run{setting}.json")],
                             cwd=REPO, capture_output=True, env=env, timeout=300, check=False)
        assert run.returncode in (0, 1), run.stderr
        record = json.loads((tmp_path / f"run{setting}.json").read_text(encoding="utf-8"))
        for key in ("started", "seconds", "command", "output"):  # (when, and the two output paths)
            record.pop(key, None)
        for entry in record["files"]:
            entry.pop("seconds", None)
        files = {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
        outs[setting] = (files, record, run.stderr.replace(str(out).encode(), b"OUT"))
    assert len(outs["1"][1]["files"]) >= prefault.MIN_FILES
    assert outs["1"][0] == outs["0"][0]
    assert outs["1"][1] == outs["0"][1]
    assert outs["1"][2] == outs["0"][2]
    assert len(outs["1"][0]) > 20
