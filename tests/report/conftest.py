"""Fixtures for the report tests: the corpora run, a run over a hostile file name, a browser."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from musify.api import migrate
from musify.cli import main
from musify.options import Options

REPO = Path(__file__).resolve().parents[2]
HOSTILE_NAME = 'x"><img src=x onerror=alert(1)>.cu'
HOSTILE_TAGS = ("<img", "<script>window.PWNED", "</script><script>")
HOSTILE_SOURCE = """#include <cuda_runtime.h>
// </script><script>window.PWNED=1</script>
__global__ void k(float *v) {
  for (int offset = 16 /*<img src=x onerror=alert(3)>*/; offset > 0; offset >>= 1)
    v[0] += __shfl_down_sync(0xffffffff, v[0], offset);
}
int main() { float *p; cudaMalloc(&p, 4); /* </script><script>window.PWNED=1</script> */ return 0; }
"""


@pytest.fixture(scope="session")
def corpora_record():
    record, _ = migrate([str(REPO / "corpora")], Options(), "none", command="musify check corpora")
    return record


@pytest.fixture(scope="session")
def corpora_html(corpora_record) -> str:
    from musify.report.html import render_html

    return render_html(corpora_record)


@pytest.fixture(scope="session")
def hostile(tmp_path_factory):
    """A run over a file whose name and comments are markup; every report format of it."""
    base = tmp_path_factory.mktemp("hostile")
    src = base / "src"
    src.mkdir()
    (src / HOSTILE_NAME).write_text(HOSTILE_SOURCE)
    run, html, sarif = base / "run.json", base / "r.html", base / "r.sarif"
    r = CliRunner().invoke(main, ["migrate", str(src), "-o", str(base / "out"), "--json", str(run),
                                  "--report", str(html), "--sarif", str(sarif)])
    assert r.exit_code == 0, r.output
    md = CliRunner().invoke(main, ["report", str(run), "--format", "markdown"])
    assert md.exit_code == 0, md.output
    return {"dir": base, "record": json.loads(run.read_text()), "html": html.read_text(),
            "html_path": html, "sarif": sarif.read_text(), "markdown": md.output}


@pytest.fixture(scope="session")
def browser():
    import cdp_browser

    try:
        b = cdp_browser.start()
    except cdp_browser.Unavailable as exc:
        pytest.skip(f"no headless browser: {exc}")
    yield b
    b.close()
