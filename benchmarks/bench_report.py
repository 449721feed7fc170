"""How the HTML report copes with a big run (not a test: figures go to README.md).

Builds a corpus of about --files files by replicating the bundled corpora (as bench_migrate.py
does), migrates it once with --json, then times `musify report run.json -o report.html` and, when
Debian's chromium is installed, what a reader does in headless Chromium: load the page, type a
search word, choose a filter, open a file's diff (each measured inside the page with
performance.now(), from the input event until the table is updated).

    python benchmarks/bench_report.py --files 2000
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
sys.path.insert(0, str(REPO / "tests" / "report"))

from bench_migrate import build_corpus, sources

BYTES_PER_FILE = 2400  # the corpora's sources average about this size


def _musify(*args: str) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "musify", *args], capture_output=True, text=True, check=False)
    if proc.returncode not in (0, 1):
        sys.exit(f"musify {' '.join(args)} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return time.perf_counter() - t0


def _in_page(browser, action: str, done: str) -> float:
    """Milliseconds from `action` until `done` holds, measured by the page's own clock."""
    return browser.eval(f"""new Promise(resolve => {{
        const t0 = performance.now(); {action};
        const poll = () => ({done}) ? resolve(performance.now() - t0) : setTimeout(poll, 1);
        requestAnimationFrame(poll); }})""")


def browse(page: Path) -> dict[str, float]:
    import cdp_browser

    try:
        b = cdp_browser.start()
    except cdp_browser.Unavailable as exc:
        print(f"(no browser figures: {exc})")
        return {}
    try:
        t0 = time.perf_counter()
        b.load(page.as_uri(), timeout=120)
        figures = {"load to readyState complete (s)": time.perf_counter() - t0}
        rows = "document.querySelectorAll('#diags tbody tr')"
        visible = f"Array.from({rows}).filter(r => !r.hidden).length"
        before = b.eval("document.getElementById('shown').textContent")
        figures["search 'warp' (ms)"] = _in_page(  # done when the count of matches has changed
            b, "const q = document.getElementById('q'); q.value = 'warp'; q.dispatchEvent(new Event('input'))",
            f"document.getElementById('shown').textContent !== {json.dumps(before)}")
        figures["rows laid out after the search"] = b.eval(visible)
        figures["filter severity=note (ms)"] = _in_page(
            b, "const s = document.getElementById('f-severity'); s.value = 'note'; "
               "s.dispatchEvent(new Event('change'))", "true")
        figures["sort by ID (ms)"] = _in_page(b, "document.querySelector('#diags th[data-sort=id]').click()", "true")
        figures["open the first diff (ms)"] = _in_page(
            b, "document.querySelector('details.file').open = true",
            "document.querySelector('details.file table.diff')")
        figures["diagnostic rows"] = b.eval(f"{rows}.length")
        figures["files listed"] = b.eval("document.querySelectorAll('details.file').length")
        return figures
    finally:
        b.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--work", type=Path, default=REPO / "benchmarks" / "out-report")
    ap.add_argument("--record", type=Path, help="use this run record (e.g. of a real tree) instead of "
                    "migrating the replicated corpora")
    ap.add_argument("--rows-per-page", type=int, nargs="+", help="also render in-process with these page "
                    "sizes and time each page in the browser (a size above the row count lays out every row)")
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    if args.record:
        run, migrate_s = args.record, 0.0
        nfiles = len(json.loads(run.read_text())["files"])
    else:
        corpus = args.work / "corpus"
        build_corpus(REPO / "corpora", corpus, args.files * BYTES_PER_FILE / 1e6)
        nfiles = len(sources(corpus))
        run = args.work / "run.json"
        migrate_s = _musify("migrate", str(corpus), "-o", str(args.work / "port"), "--json", str(run), "-q")
    record = json.loads(run.read_text())
    diags = sum(len(f["diagnostics"]) for f in record["files"])
    page = args.work / "report.html"
    render_s = _musify("report", str(run), "-o", str(page))
    for size in args.rows_per_page or []:
        sys.path.insert(0, str(REPO))
        from musify.report.html import render_html

        paged = args.work / f"report-{size}.html"
        paged.write_text(render_html(record, rows_per_page=size), encoding="utf-8")
        print(f"rows per page {size}:")
        for name, value in browse(paged).items():
            print(f"  {name}: {value:.1f}" if isinstance(value, float) else f"  {name}: {value}")
    print(f"{nfiles} source files, {diags} diagnostics; migrate {migrate_s:.1f} s; "
          f"musify report -o report.html {render_s:.1f} s, {page.stat().st_size / 1e6:.1f} MB")
    for name, value in browse(page).items():
        print(f"  {name}: {value:.1f}" if isinstance(value, float) else f"  {name}: {value}")


if __name__ == "__main__":
    main()
