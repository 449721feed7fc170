"""Per-file diffs for the HTML report, syntax-highlighted with pygments.

A diff comes from the record's edits (start, end, old, new), so it needs no second migration.
When the original file is still readable and every edit's `old` text is found at its span, the
edits are applied to it and the reviewer gets a unified diff with context lines; otherwise (the
file moved, was ported in place since, or the record is --json-lite) the report lists the edits
themselves, each old and new text highlighted. Every piece of user text is escaped here, once.
"""

from __future__ import annotations

import bisect
import difflib
import itertools
from collections.abc import Iterator

from markupsafe import Markup, escape
from pygments.lexer import Lexer
from pygments.lexers import CudaLexer, PythonLexer, TextLexer
from pygments.token import STANDARD_TYPES

from musify.report.view import edit_list

CONTEXT = 3
HIGHLIGHT_BUDGET = 250_000  # characters highlighted per report (pygments lexes ~0.1-0.2 MB/s); the rest plain


class Highlighter:
    """Turns source text into per-line HTML, keeping a running budget so a huge run stays fast."""

    def __init__(self, budget: int = HIGHLIGHT_BUDGET) -> None:
        self.budget = budget
        self._lexers: dict[str, Lexer] = {}

    def _lexer(self, path: str) -> Lexer:
        kind = "py" if path.endswith(".py") else "text" if path.endswith((".txt", ".cmake")) else "cuda"
        if kind not in self._lexers:
            cls = {"py": PythonLexer, "text": TextLexer, "cuda": CudaLexer}[kind]
            self._lexers[kind] = cls(stripnl=False, ensurenl=False)
        return self._lexers[kind]

    def lines(self, text: str, path: str) -> list[Markup]:
        """One escaped, highlighted HTML string per line of `text` (no trailing newlines)."""
        if len(text) > self.budget:
            return [escape(line) for line in text.split("\n")]
        self.budget -= len(text)
        out: list[list[str]] = [[]]
        for ttype, value in self._lexer(path).get_tokens(text):
            cls = _css_class(ttype)
            cls = "" if cls in _PLAIN else cls
            for i, piece in enumerate(value.split("\n")):
                if i:
                    out.append([])
                if piece:
                    esc = str(escape(piece))
                    out[-1].append(f"<span class='{cls}'>{esc}</span>" if cls else esc)
        return [Markup("".join(parts)) for parts in out]


_PLAIN = frozenset({"", "n", "p", "o", "w", "x", "err"})  # drawn in the text colour: no span, smaller page


def _css_class(ttype) -> str:  # a pygments token type
    while ttype not in STANDARD_TYPES:
        ttype = ttype.parent
    return STANDARD_TYPES[ttype]


def _offsets(text: str) -> list[int]:
    """The offset at which each line starts."""
    return [0, *itertools.accumulate(len(line) + 1 for line in text.split("\n")[:-1])]


def _spans(original: str, edits: list[dict]) -> list[tuple[int, int, str]] | None:
    """The edits as sorted (start, end, new) offsets, or None when one does not match."""
    starts = _offsets(original)
    spans = []
    for e in edits:
        line, col = e["start"]
        if not 1 <= line <= len(starts):
            return None
        at = starts[line - 1] + col - 1
        old = e.get("old", "")
        if original[at:at + len(old)] != old:
            return None
        spans.append((at, at + len(old), e.get("new", "")))
    spans.sort()
    if any(a < prev_end for (_, prev_end, _), (a, _, _) in itertools.pairwise(spans)):
        return None  # overlapping edits: not a record this renderer understands
    return spans


def _rebuild(original: str, spans: list[tuple[int, int, str]]) -> str:
    out, pos = [], 0
    for a, b, new in spans:
        out.append(original[pos:a])
        out.append(new)
        pos = b
    out.append(original[pos:])
    return "".join(out)


def _opcodes(original: str, spans: list[tuple[int, int, str]]) -> list[tuple[str, int, int, int, int]]:
    """difflib-style opcodes over lines, read off the edits: the lines an edit touches are replaced
    (edits on one line, or on touching lines, make one block), every other line is equal. A general
    diff of two whole files (difflib) is quadratic on long files with many equal lines, and the
    edits already say what changed."""
    starts = _offsets(original)
    blocks: list[list] = []  # [first old line, last old line, [spans]]
    for a, b, new in spans:
        first = bisect.bisect_right(starts, a) - 1
        last = bisect.bisect_right(starts, b) - 1 if b > a else first  # an edit taking a newline joins the next line
        if blocks and first <= blocks[-1][1] + 1:
            blocks[-1][1] = max(blocks[-1][1], last)
            blocks[-1][2].append((a, b, new))
        else:
            blocks.append([first, last, [(a, b, new)]])
    ops, i, j = [], 0, 0
    n_old = len(starts)
    for first, last, group in blocks:
        if first > i:
            ops.append(("equal", i, first, j, j + first - i))
            j += first - i
        lo = starts[first]
        hi = starts[last + 1] - 1 if last + 1 < n_old else len(original)
        block_old = original[lo:hi].split("\n")
        block_new = _rebuild(original[lo:hi], [(a - lo, b - lo, new) for a, b, new in group]).split("\n")
        head = 0  # lines the edits left as they were, at the block's ends, are context
        while head < min(len(block_old), len(block_new)) and block_old[head] == block_new[head]:
            head += 1
        tail = 0
        while (tail < min(len(block_old), len(block_new)) - head
               and block_old[-1 - tail] == block_new[-1 - tail]):
            tail += 1
        if head:
            ops.append(("equal", first, first + head, j, j + head))
        old_n, new_n = len(block_old) - head - tail, len(block_new) - head - tail
        tag = "replace" if old_n and new_n else ("delete" if old_n else "insert")
        if old_n or new_n:
            ops.append((tag, first + head, first + head + old_n, j + head, j + head + new_n))
        if tail:
            ops.append(("equal", last + 1 - tail, last + 1, j + head + new_n, j + head + new_n + tail))
        i, j = last + 1, j + len(block_new)
    if i < n_old or not ops:
        ops.append(("equal", i, n_old, j, j + n_old - i))
    merged: list[tuple[str, int, int, int, int]] = []
    for op in ops:  # one equal run between changes, as difflib gives
        if merged and op[0] == "equal" == merged[-1][0]:
            merged[-1] = ("equal", merged[-1][1], op[2], merged[-1][3], op[4])
        elif op[2] > op[1] or op[4] > op[3] or op[0] == "equal":
            merged.append(op)
    return merged


class _EditMatcher(difflib.SequenceMatcher):
    """difflib's hunk grouping (`get_grouped_opcodes`) over opcodes read off the edits."""

    def __init__(self, ops: list[tuple[str, int, int, int, int]]) -> None:
        super().__init__(None, [], [])
        self._ops = ops

    def get_opcodes(self):
        return list(self._ops)


def _hunks(old_lines: list[str], new_lines: list[str],
           ops: list[tuple[str, int, int, int, int]] | None = None) -> Iterator[list[tuple[str, int, int]]]:
    """Unified-diff hunks as rows (tag, old index, new index); tag ' ', '-' or '+'. `ops`: opcodes
    already known (from the edits); else difflib computes them."""
    matcher = _EditMatcher(ops) if ops is not None else difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for group in matcher.get_grouped_opcodes(CONTEXT):
        rows = []
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                rows += [(" ", i, j1 + (i - i1)) for i in range(i1, i2)]
                continue
            rows += [("-", i, -1) for i in range(i1, i2)]
            rows += [("+", -1, j) for j in range(j1, j2)]
        yield rows


def _excerpt(lines: list[str], picked: list[int], path: str, hl: Highlighter) -> dict[int, Markup]:
    """Highlight only the lines a hunk shows (lexing whole files would dominate a big report)."""
    if not picked:
        return {}
    lo, hi = min(picked), max(picked)
    return dict(zip(range(lo, hi + 1), hl.lines("\n".join(lines[lo:hi + 1]), path)))


def unified_rows(path: str, original: str, port: str, hl: Highlighter,
                 ops: list[tuple[str, int, int, int, int]] | None = None) -> Markup:
    """The unified diff in the report's compact form: one row a line, "\n" between rows. A hunk
    starts with "@<first old line>,<first new line>" (the old one is the line its header shows);
    each line of it is its tag
    (" ", "-" or "+") and its highlighted code. The report's script builds the table from it when
    the file is opened (`table_html` in Python, the reference); as table markup, the rows and cells
    were half of a big report (18 of xformers' 36 MB of diffs)."""
    old_lines, new_lines = original.split("\n"), port.split("\n")
    parts = []
    for rows in _hunks(old_lines, new_lines, ops):
        old_html = _excerpt(old_lines, [i for _, i, _ in rows if i >= 0], path, hl)
        new_html = _excerpt(new_lines, [j for tag, _, j in rows if tag == "+"], path, hl)
        first = next((i for _, i, _ in rows if i >= 0), 0)
        first_new = next((j for _, _, j in rows if j >= 0), 0)
        parts.append(f"@{first + 1},{first_new + 1}")
        parts += [tag + (old_html[i] if i >= 0 else new_html[j]) for tag, i, j in rows]
    return Markup("\n".join(parts))


def table_html(rows: str) -> str:
    """The table the report's script builds from `unified_rows` (report.js, `diffTable`): the
    reference the tests hold it to. Anything else (an edits table) is HTML already."""
    if not rows.startswith("@"):
        return rows
    out = ["<table class='diff'>"]
    old = new = 0
    for row in rows.split("\n"):
        tag, code = row[:1], row[1:]
        if tag == "@":
            old_text, new_text = code.split(",")
            old, new = int(old_text), int(new_text)
            out.append(f"<tr class='hunk'><td colspan='3'>@@ line {old} @@</td></tr>")
            continue
        cls = {" ": "ctx", "-": "del", "+": "add"}[tag]
        out.append(f"<tr class='{cls}'><td>{new if tag == '+' else old}</td><td>{tag}</td><td>{code}</td></tr>")
        old += tag != "+"
        new += tag != "-"
    out.append("</table>")
    return "".join(out)


def edits_html(path: str, edits: list[dict], hl: Highlighter) -> Markup:
    """The edits themselves, when the original cannot be read back: where, old, new, which rule."""
    parts = ["<table class='diff edits'><tr><th>at</th><th>was</th><th>now</th><th>rule</th></tr>"]
    for e in sorted(edits, key=lambda e: tuple(e["start"])):
        line, col = e["start"]
        old = Markup("<br>").join(hl.lines(e.get("old", ""), path))
        new = Markup("<br>").join(hl.lines(e.get("new", ""), path))
        rule = escape(" ".join(str(x) for x in (e.get("library", ""), e.get("rule", "")) if x))
        parts.append(f"<tr><td>{line}:{col}</td><td class='del'>{old}</td><td class='add'>{new}</td>"
                     f"<td>{rule}</td></tr>")
    parts.append("</table>")
    return Markup("".join(parts))


def file_diff(f: dict, hl: Highlighter, read_source: bool = True) -> tuple[str, Markup]:
    """("unified" | "edits" | "none", HTML) for one file of the record."""
    edits = edit_list(f)
    if not edits:
        return "none", Markup("")
    path = f.get("path", "")
    if read_source:
        try:
            with open(path, encoding="utf-8", newline="") as fh:
                original = fh.read()
        except (OSError, UnicodeDecodeError, ValueError):
            original = None
        spans = _spans(original, edits) if original is not None else None
        if spans is not None:
            return "unified", unified_rows(path, original, _rebuild(original, spans), hl, _opcodes(original, spans))
    return "edits", edits_html(path, edits, hl)


def stylesheet() -> str:
    """The pygments colours for the token classes `Highlighter` emits, scoped to the diffs."""
    from pygments.formatters import HtmlFormatter

    return HtmlFormatter(style="default").get_style_defs("table.diff")
