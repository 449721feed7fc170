"""Inline SVG bar charts for the HTML report: no script, no web font, no network.

A horizontal bar chart reads on a phone as well as on a laptop (the SVG scales to its box), and
labels are text, so they stay searchable and copyable. Labels are escaped here.
"""

from __future__ import annotations

from markupsafe import Markup, escape

ROW = 22
LABEL_W = 180
BAR_W = 260
MAX_ROWS = 12


def bar_chart(title: str, data: dict[str, int | float], css: str = "bar", unit: str = "") -> Markup:
    """Bars for the largest `MAX_ROWS` entries of `data` (the rest summed as "other")."""
    items = sorted(((k, v) for k, v in data.items() if v), key=lambda kv: (-kv[1], kv[0]))
    if len(items) > MAX_ROWS:
        rest = sum(v for _, v in items[MAX_ROWS - 1:])
        items = items[:MAX_ROWS - 1] + [("other", rest)]
    width = LABEL_W + BAR_W + 70
    height = ROW * max(1, len(items)) + 28
    top = max((v for _, v in items), default=0) or 1
    out = [(f'<svg class="chart" viewBox="0 0 {width} {height}" role="img" '
            f'aria-label="{escape(title)}" xmlns="http://www.w3.org/2000/svg">'),
           f'<text x="0" y="14" class="ct">{escape(title)}</text>']
    if not items:
        out.append('<text x="0" y="40" class="cl">nothing to show</text>')
    for i, (label, value) in enumerate(items):
        y = 24 + i * ROW
        w = max(1.0, BAR_W * value / top)
        shown = label if len(label) <= 22 else label[:21] + "\u2026"
        out.append(f'<text x="{LABEL_W - 6}" y="{y + 14}" class="cl" text-anchor="end">'
                   f'<title>{escape(label)}</title>{escape(shown)}</text>')
        out.append(f'<rect x="{LABEL_W}" y="{y + 3}" width="{w:.1f}" height="{ROW - 8}" '
                   f'class="{escape(css)} {escape(_slug(label))}"/>')
        out.append(f'<text x="{LABEL_W + w + 4:.1f}" y="{y + 14}" class="cv">{value:g}{escape(unit)}</text>')
    out.append("</svg>")
    return Markup("".join(out))


def _slug(label: str) -> str:
    return "c-" + "".join(ch if ch.isalnum() else "-" for ch in label.lower())
