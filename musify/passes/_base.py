"""What every pass receives and returns.

A pass is a plain function `run(ctx: PassContext) -> list[Edit]`; it reports diagnostics through
`ctx.warn`. It never writes files and never raises for bad input: the runner turns a crash into a
failed-file result with its traceback, so one broken pass cannot lose the other files.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from musify import diagnostics
from musify.diagnostics import Diagnostic
from musify.frontend.scanner import LineIndex, Scan
from musify.options import Options
from musify.rules.model import RuleSet


@dataclass(frozen=True)
class ProjectInfo:
    """Facts about the whole input that a single file needs: which project headers get renamed."""

    header_renames: dict[str, str] = field(default_factory=dict)  # old relpath -> new relpath
    files: frozenset[str] = frozenset()  # every project source/header relpath
    suffix_index: dict[str, tuple[str, ...]] = field(default_factory=dict)  # path suffix -> relpaths

    @property
    def renames(self) -> dict[str, str]:
        """Every file this migration renames, sources as well as headers (old relpath -> new
        relpath): build files and `setup.py` source lists follow them."""
        return self.header_renames


@dataclass
class PassContext:
    path: str  # path relative to its input root, posix, as shown to the user
    text: str
    scan: Scan
    ruleset: RuleSet
    options: Options
    project: ProjectInfo
    lines: LineIndex
    diagnostics: list[Diagnostic] = field(default_factory=list)
    # filled by the passes for the record
    declared: set[str] = field(default_factory=set)  # vendor-looking names this file declares
    pending_unknown: list[tuple[str, int, int]] = field(default_factory=list)  # (name, line, col)
    unconverted: Counter = field(default_factory=Counter)  # names left as they are, for statistics
    facts: dict[str, int] = field(default_factory=dict)  # kernels, launches, ...
    display_path: str = ""
    # spans no edit may touch (exclusion markers, defines kept as written); see `protect`
    protected: list[tuple[int, int]] = field(default_factory=list)
    # passes can leave notes for later passes (e.g. the shim headers a file needs)
    scratch: dict = field(default_factory=dict)

    def protect(self, start: int, end: int) -> None:
        """Keep text[start:end] exactly as written: edits inside it from any pass are dropped.

        Zero-width insertions at the span's edges are kept, so a shim include after a guard
        still lands."""
        self.protected.append((start, end))

    def warn(self, diag_id: str, offset: int, name: str = "", severity: str | None = None,
             end: int | None = None, origin: str = "", sites: tuple = (), **args: object) -> None:
        """Raise `diag_id` at `offset`; the span ends at `end` (default: the end of `name` when
        given, else the offset itself)."""
        line, col = self.lines.position(offset)
        if end is None:
            end = offset + len(name) if name and self.text.startswith(name, offset) else offset
        end_pos = self.lines.position(end) if end != offset else (line, col)
        self.diagnostics.append(
            diagnostics.make(diag_id, self.display_path or self.path, line, col, name, severity,
                             end=end_pos, origin=origin, sites=sites, **args)
        )
