"""The HTML report in a real browser (Debian's chromium, headless, over the DevTools protocol):
search and filters work on the corpora report, the page paints, and nothing hostile comes alive.
Skips cleanly where no chromium is installed (`.ci/run` installs it)."""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path

import pytest
from conftest import HOSTILE_NAME

from musify.report.diffs import table_html

ROWS = "Array.from(document.querySelectorAll('#diags tbody tr'))"
VISIBLE = ROWS + ".filter(r => !r.hidden)"


@pytest.fixture(scope="module")
def corpora_page(corpora_record, corpora_html, tmp_path_factory, browser):
    path = tmp_path_factory.mktemp("page") / "report.html"
    path.write_text(corpora_html)
    browser.load(path.as_uri())
    return corpora_record


def _row_texts(record) -> list[tuple[dict, str]]:
    from musify.report.view import effort_of, library_of

    out = []
    for f in record.files:
        for d in f.diagnostics:
            j = d.to_json()
            text = " ".join([j["severity"], j["id"], f"{j['path']}:{j['line']}:{j['column']}", j["message"],
                             library_of(j), effort_of(j["id"])])
            out.append((j, text.lower()))
    return out


def _table_rows(html: str) -> list[list[str]]:
    """A table's rows as [class, cell text...], as the browser's DOM gives them."""
    from html.parser import HTMLParser

    rows: list[list[str]] = []

    class Rows(HTMLParser):
        def handle_starttag(self, tag, attrs):
            if tag == "tr":
                rows.append([dict(attrs).get("class", "")])
            elif tag == "td":
                rows[-1].append("")

        def handle_data(self, data):
            if rows and len(rows[-1]) > 1:
                rows[-1][-1] += data

    Rows(convert_charrefs=True).feed(html)
    return rows


def _select(browser, select_id: str, value: str) -> None:
    """Choose an option as a user does: the value changes and the page gets a change event."""
    browser.eval(f"(s => {{ s.value = {json.dumps(value)}; s.dispatchEvent(new Event('change')); }})"
                 f"(document.getElementById({json.dumps(select_id)}))")
    browser.settle()


def test_search_filter_and_sort_work_on_the_corpora_report(browser, corpora_page):
    rows = _row_texts(corpora_page)
    assert browser.eval(ROWS + ".length") == len(rows) > 0
    browser.type_into("#q", "warp")
    want = [j for j, t in rows if "warp" in t]
    assert 0 < len(want) < len(rows)
    assert browser.eval(VISIBLE + ".length") == len(want)
    assert browser.eval("document.getElementById('shown').textContent") == f"{len(want)} of {len(rows)}"
    diag_id = max({j["id"] for j in want}, key=lambda i: sum(j["id"] == i for j in want))
    _select(browser, "f-id", diag_id)
    ids = browser.eval(VISIBLE + ".map(r => r.getAttribute('data-id'))")
    assert ids == [diag_id] * sum(j["id"] == diag_id for j in want)
    # clear the search: the filter alone still holds
    browser.eval("(q => { q.value = ''; q.dispatchEvent(new Event('input')); })(document.getElementById('q'))")
    assert browser.eval(VISIBLE + ".length") == sum(j["id"] == diag_id for j, _ in rows)
    _select(browser, "f-id", "")
    _select(browser, "f-severity", "note")
    assert browser.eval(VISIBLE + ".length") == sum(j["severity"] == "note" for j, _ in rows)
    _select(browser, "f-severity", "")
    browser.eval("document.querySelector('#diags th[data-sort=id]').click()")
    shown = browser.eval(ROWS + ".map(r => r.getAttribute('data-id'))")
    assert shown == sorted(j["id"] for j, _ in rows)
    browser.eval("document.querySelector('#diags th[data-sort=id]').click()")
    assert browser.eval(ROWS + ".map(r => r.getAttribute('data-id'))") == sorted(shown, reverse=True)
    # a diagnostic's link opens its explanation, which is part of the page
    browser.eval(f"document.querySelector('a[href=\"#doc-{diag_id}\"]').click()")
    assert browser.eval(f"document.getElementById('doc-{diag_id}').open") is True
    assert "How to fix" in browser.eval(f"document.getElementById('doc-{diag_id}').textContent")
    # a file's diff is built when it is opened, not before
    first = "document.querySelector('details.file')"
    assert browser.eval(f"{first}.querySelector('table.diff')") is None
    browser.eval(f"{first}.querySelector('summary').click()")
    assert browser.wait_for(f"{first}.querySelectorAll('table.diff tr.add').length") > 0
    # built from the compact rows exactly as `diffs.table_html` builds it (rows, classes, cells)
    key = browser.eval(f"{first}.getAttribute('data-diff')")
    compact = browser.eval(f"JSON.parse(document.getElementById('diffs').textContent)[{json.dumps(key)}]")
    assert compact.startswith("@")
    built = browser.eval(f"Array.from({first}.querySelectorAll('table.diff tr'))"
                         ".map(r => [r.className, ...Array.from(r.cells).map(c => c.textContent)])")
    assert built == _table_rows(table_html(compact))
    # the file filter keeps the files whose path matches
    browser.type_into("#fq", "warp32")
    shown = browser.eval("Array.from(document.querySelectorAll('details.file')).filter(d => !d.hidden)"
                         ".map(d => d.getAttribute('data-path'))")
    assert shown and all("warp32" in p for p in shown)


def test_the_report_paints_on_a_laptop_and_a_phone(browser, corpora_page, tmp_path):
    browser.eval("window.scrollTo(0, 0)")
    for name, width, height in (("laptop", 1280, 900), ("phone", 390, 844)):
        shot = tmp_path / f"report-{name}.png"
        pixels = _decode_png(browser.screenshot(shot, width, height, scale=0.5))
        colours = {p for p in pixels}
        dark = sum(1 for p in pixels if sum(p[:3]) < 300)
        assert len(colours) > 30, f"{shot}: {len(colours)} colours, looks blank"
        assert dark > len(pixels) // 200, f"{shot}: almost no text painted"
        if name == "phone":  # nothing is wider than the phone's screen
            assert browser.eval("document.documentElement.scrollWidth") <= width + 1


def test_hostile_report_has_no_live_tag_in_the_dom(browser, hostile, tmp_path):
    browser.load(hostile["html_path"].as_uri())
    browser.eval("document.querySelectorAll('details').forEach(d => { d.open = true; "
                 "d.dispatchEvent(new Event('toggle')); })")
    assert browser.eval("typeof window.PWNED") == "undefined"
    assert browser.eval("document.images.length") == 0
    assert browser.eval("Array.from(document.scripts).filter(s => s.type !== 'application/json').length") == 1
    assert browser.wait_for("document.querySelectorAll('table.diff').length") >= 1  # diffs built, inert
    assert browser.eval("document.images.length") == 0 and browser.eval("typeof window.PWNED") == "undefined"
    assert HOSTILE_NAME in browser.eval("document.body.innerText")  # shown as text
    # the Markdown comment, rendered the way a forge would (inline HTML allowed), is inert too
    from markdown_it import MarkdownIt

    page = tmp_path / "md.html"
    page.write_text("<!doctype html><meta charset=utf-8><body>"
                    + MarkdownIt("commonmark", {"html": True}).enable("table").render(hostile["markdown"]))
    browser.load(page.as_uri())
    assert browser.eval("typeof window.PWNED") == "undefined"
    assert browser.eval("document.images.length") == 0 and browser.eval("document.scripts.length") == 0
    assert HOSTILE_NAME in browser.eval("document.body.textContent")


def _decode_png(data: bytes) -> list[tuple[int, ...]]:
    """Pixels of an 8-bit RGB/RGBA PNG (what Chromium writes), sampled every 4th pixel of every 4th row."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        (length,), kind = struct.unpack(">I", data[pos:pos + 4]), data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and colour in (2, 6)
            bpp = 4 if colour == 6 else 3
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw, stride = zlib.decompress(idat), width * bpp
    prev, pixels = bytearray(stride), []
    for y in range(height):
        ftype, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if ftype == 1:
                line[i] = (line[i] + a) & 255
            elif ftype == 2:
                line[i] = (line[i] + b) & 255
            elif ftype == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        if y % 4 == 0:
            pixels += [tuple(line[x:x + bpp]) for x in range(0, stride, 4 * bpp)]
        prev = line
    return pixels


def test_png_decoder_reads_what_it_is_given(tmp_path):
    """The blank-screenshot check is only as good as its decoder: check it on a known image."""
    width, height = 8, 2
    rows = b"".join(b"\x00" + bytes([255, 255, 255] * 4 + [0, 0, 0] * 4) for _ in range(height))

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
           + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))
    assert _decode_png(png) == [(255, 255, 255), (0, 0, 0)]
    Path(tmp_path / "x.png").write_bytes(png)


def test_a_long_table_lays_out_one_page_and_shows_more_on_request(browser, corpora_record, tmp_path):
    """A run with tens of thousands of diagnostics would lay out every row; the page shows the
    first page of matching rows, "show more" adds a page, and a new filter starts again."""
    from musify.report.html import render_html

    rows = _row_texts(corpora_record)
    assert len(rows) > 12
    path = tmp_path / "paged.html"
    path.write_text(render_html(corpora_record, rows_per_page=5))
    browser.load(path.as_uri())
    assert browser.eval(VISIBLE + ".length") == 5
    assert browser.eval("document.getElementById('more-row').hidden") is False
    browser.eval("document.getElementById('more').click()")
    assert browser.eval(VISIBLE + ".length") == 10
    assert browser.eval("document.getElementById('not-shown').textContent") == f"{len(rows) - 10} more match"
    _select(browser, "f-severity", "note")
    notes = sum(j["severity"] == "note" for j, _ in rows)
    assert browser.eval(VISIBLE + ".length") == min(5, notes)
    assert browser.eval("document.getElementById('shown').textContent") == f"{notes} of {len(rows)}"
    _select(browser, "f-severity", "")
    browser.eval("document.querySelector('#diags th[data-sort=id]').click()")
    first = browser.eval(VISIBLE + ".map(r => r.getAttribute('data-id'))")
    assert first == sorted(j["id"] for j, _ in rows)[:5]
