"""musify-text's exclusion markers: lines and blocks the user asked to keep exactly as written.

A line containing `MUSIFY_EXCL_LINE` is left alone; so is every line from one containing
`MUSIFY_EXCL_START` to the next one containing `MUSIFY_EXCL_STOP` (both marker lines included).
The markers are plain text, found anywhere on a line (usually inside a comment), as Moore
Threads' musify-text finds them. Misuse (a stray STOP, a START never closed, a START inside an
open block) is reported instead of silently changing what gets migrated.

`find_exclusions` is a pure function so `musify-text` can log the same events in its own shapes.
"""

from __future__ import annotations

from dataclasses import field

from musify.classes import dataclass
from musify.engine.edits import Edit
from musify.passes._base import PassContext
from musify.passes.literals import holds, register
from musify.patterns import lazy_pattern

MARKER_PREFIX = "MUSIFY_EXCL_"
register(MARKER_PREFIX)
_MARKER = lazy_pattern(globals(), "_MARKER", r"MUSIFY_EXCL_(START|STOP|LINE)")

# event kind -> (diagnostic ID or None); None events are informational (musify-text logs them)
EVENT_DIAGNOSTICS = {
    "open": None,
    "close": None,
    "line": None,
    "stray-stop": "MU4001",
    "unclosed": "MU4002",
    "reopen": "MU4003",
    "line-in-block": "MU4004",
}


@dataclass(frozen=True, slots=True)
class MarkerEvent:
    kind: str  # a key of EVENT_DIAGNOSTICS
    offset: int  # where the marker is
    line: int  # 1-based line of the marker
    opened: int = 0  # for events inside a block: the line the block was opened at


@dataclass
class Exclusions:
    spans: list[tuple[int, int]] = field(default_factory=list)  # [start, end) kept as written
    events: list[MarkerEvent] = field(default_factory=list)

    def excluded_lines(self, text: str) -> int:
        """How many lines the spans cover (a span ending after a newline does not count the next)."""
        return sum(text.count("\n", s, e) + (0 if text[e - 1:e] == "\n" else 1) for s, e in self.spans if e > s)


def _line_bounds(text: str, offset: int) -> tuple[int, int]:
    start = text.rfind("\n", 0, offset) + 1
    end = text.find("\n", offset)
    return start, len(text) if end < 0 else end


def find_exclusions(text: str) -> Exclusions:
    """The excluded spans of `text` and the marker events, in text order."""
    out = Exclusions()
    if MARKER_PREFIX not in text:  # the common case: one C-speed search
        return out
    open_at: int | None = None  # offset of the line start of the open block
    open_line = 0
    line_no, counted_to = 1, 0
    for m in _MARKER.finditer(text):
        line_no += text.count("\n", counted_to, m.start())
        counted_to = m.start()
        what = m.group(1)
        line_start, line_end = _line_bounds(text, m.start())
        if what == "START":
            if open_at is not None:
                out.events.append(MarkerEvent("reopen", m.start(), line_no, open_line))
            else:
                open_at, open_line = line_start, line_no
                out.events.append(MarkerEvent("open", m.start(), line_no))
        elif what == "STOP":
            if open_at is None:
                out.events.append(MarkerEvent("stray-stop", m.start(), line_no))
            else:
                out.spans.append((open_at, line_end))
                out.events.append(MarkerEvent("close", m.start(), line_no, open_line))
                open_at = None
        elif open_at is not None:
            out.events.append(MarkerEvent("line-in-block", m.start(), line_no, open_line))
        else:
            out.spans.append((line_start, line_end))
            out.events.append(MarkerEvent("line", m.start(), line_no))
    if open_at is not None:
        out.spans.append((open_at, len(text)))
        start_event = next(e for e in reversed(out.events) if e.kind == "open")
        out.events.append(MarkerEvent("unclosed", start_event.offset, start_event.line))
    out.spans = _merge(out.spans)
    return out


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for s, e in sorted(spans):
        if merged and s <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(e, merged[-1][1]))
        else:
            merged.append((s, e))
    return merged


def triggers(ruleset) -> tuple[str, ...]:
    """Every marker holds the prefix (the runner skips a file without it: `literals.file_bits`)."""
    return (MARKER_PREFIX,)


def run(ctx: PassContext) -> list[Edit]:
    """Protect the excluded lines and blocks; report misused markers. Makes no edits itself."""
    if not holds(ctx, MARKER_PREFIX):  # the common case: nothing to find, nothing to make
        return []
    found = find_exclusions(ctx.text)
    for start, end in found.spans:
        ctx.protect(start, end)
    for event in found.events:
        diag_id = EVENT_DIAGNOSTICS[event.kind]
        if diag_id is not None:
            ctx.warn(diag_id, event.offset, opened=event.opened)
    if found.spans:
        ctx.facts["excluded_lines"] = found.excluded_lines(ctx.text)
    return []
