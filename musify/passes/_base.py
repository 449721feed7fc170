"""What every pass receives and returns.

A pass is a plain function `run(ctx: PassContext) -> list[Edit]`; it reports diagnostics through
`ctx.warn`. It never writes files and never raises for bad input: the runner turns a crash into a
failed-file result with its traceback, so one broken pass cannot lose the other files.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import field
from typing import TYPE_CHECKING

from musify.classes import dataclass
from musify.diagnostics import Diagnostic, compiled_warn
from musify.diagnostics import make_from as _make_from

if TYPE_CHECKING:  # annotations only: a run that migrates nothing never loads the scanner
    from musify.frontend.scanner import LineIndex, Scan
    from musify.options import Options
    from musify.rules.model import RuleSet


@dataclass(frozen=True)
class ProjectInfo:
    """Facts about the whole input that a single file needs: which project headers get renamed."""

    header_renames: dict[str, str] = field(default_factory=dict)  # old relpath -> new relpath
    files: frozenset[str] = frozenset()  # every project source/header relpath
    suffix_index: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # path suffix -> relpaths (suffix_index.py)

    @property
    def renames(self) -> dict[str, str]:
        """Every file this migration renames, sources as well as headers (old relpath -> new
        relpath): build files and `setup.py` source lists follow them."""
        return self.header_renames


@dataclass(init=False, slots=True)  # __init__ below: the generated one is slow; slots: no dictionary a file
class Findings:
    """What the passes found in one file, filled as they run and read by the runner for the record.

    Kept apart from the (frozen) input so a pass cannot change what the next pass sees as input,
    and so the runner has one object to turn into the file's result."""

    diagnostics: list[Diagnostic] = field(default_factory=list)
    declared: set[str] = field(default_factory=set)  # vendor-looking names this file declares
    pending_unknown: list[tuple[str, int, int]] = field(default_factory=list)  # (name, line, col)
    unconverted: Counter = field(default_factory=Counter)  # names left as they are, for statistics
    facts: dict[str, int] = field(default_factory=dict)  # kernels, launches, ...
    # spans no edit may touch (exclusion markers, defines kept as written); see `PassContext.protect`
    protected: list[tuple[int, int]] = field(default_factory=list)
    # passes can leave notes for later passes (e.g. the shim headers a file needs)
    scratch: dict = field(default_factory=dict)
    current_pass: str = ""  # set by the runner: the default `origin` of a diagnostic
    # macros this file defines that call a warp shuffle, and loops that may call one through such a
    # macro: the run settles them (musify/passes/hazards/warp_macros.py)
    warp_aliases: set[str] = field(default_factory=set)
    pending_warp: list[tuple] = field(default_factory=list)
    # the (macro, argument position) pairs this file's macros paste, and where an unrecognised use
    # is a call's whole argument (line, column, callee, position): musify/passes/macro_pastes.py
    pasting: set[tuple[str, int]] = field(default_factory=set)
    unknown_args: list[tuple] = field(default_factory=list)

    def __init__(self, diagnostics: list[Diagnostic] | None = None, declared: set[str] | None = None,
                 pending_unknown: list[tuple[str, int, int]] | None = None, unconverted: Counter | None = None,
                 facts: dict[str, int] | None = None, protected: list[tuple[int, int]] | None = None,
                 scratch: dict | None = None, current_pass: str = "", warp_aliases: set[str] | None = None,
                 pending_warp: list[tuple] | None = None, pasting: set[tuple[str, int]] | None = None,
                 unknown_args: list[tuple] | None = None) -> None:
        """What the dataclass would generate, made once per file: the `Counter` made without its
        Python `__init__` (which only calls `update` with nothing), a third of the generated one."""
        self.diagnostics = [] if diagnostics is None else diagnostics
        self.declared = set() if declared is None else declared
        self.pending_unknown = [] if pending_unknown is None else pending_unknown
        self.warp_aliases = set() if warp_aliases is None else warp_aliases
        self.pending_warp = [] if pending_warp is None else pending_warp
        self.pasting = set() if pasting is None else pasting
        self.unknown_args = [] if unknown_args is None else unknown_args
        self.unconverted = _new_counter(Counter) if unconverted is None else unconverted
        self.facts = {} if facts is None else facts
        self.protected = [] if protected is None else protected
        self.scratch = {} if scratch is None else scratch
        self.current_pass = current_pass


_new_counter = Counter.__new__  # an empty Counter (a dict subclass: `dict.__new__` makes it whole)


@dataclass(frozen=True, init=False)  # __init__ below: the generated one is slow
class PassContext:
    """One file as every pass sees it: the input is frozen; findings go to `found`."""

    path: str  # path relative to its input root, posix, as shown to the user
    text: str
    scan: Scan
    ruleset: RuleSet
    options: Options
    project: ProjectInfo
    lines: LineIndex
    display_path: str = ""
    abspath: str = ""  # where the file is on disk (precise mode matches compile_commands.json on it)
    found: Findings = field(default_factory=Findings)

    def __init__(self, path: str, text: str, scan: Scan, ruleset: RuleSet, options: Options, project: ProjectInfo,
                 lines: LineIndex, display_path: str = "", abspath: str = "", found: Findings | None = None) -> None:
        """What the dataclass would generate (a frozen one sets each field through
        `object.__setattr__`, looked up again for each: a tenth of a small file's context), the
        fields given as the instance dictionary, made whole (one dictionary built at its size,
        rather than one made from the empty instance and grown key by key)."""
        _SET_CONTEXT_DICT(self, {"path": path, "text": text, "scan": scan, "ruleset": ruleset, "options": options,
                                 "project": project, "lines": lines, "display_path": display_path, "abspath": abspath,
                                 "found": Findings() if found is None else found})

    # the accumulator's parts, for brevity in the passes
    @property
    def diagnostics(self) -> list[Diagnostic]:
        return self.found.diagnostics

    @property
    def declared(self) -> set[str]:
        return self.found.declared

    @property
    def pending_unknown(self) -> list[tuple[str, int, int]]:
        return self.found.pending_unknown

    @property
    def unconverted(self) -> Counter:
        return self.found.unconverted

    @property
    def facts(self) -> dict[str, int]:
        return self.found.facts

    @property
    def protected(self) -> list[tuple[int, int]]:
        return self.found.protected

    @property
    def scratch(self) -> dict:
        return self.found.scratch

    def drop_scan(self, scan: Scan) -> None:
        """Put `scan` in place of this context's scan, every other field kept: what the runner does
        once the passes are done with a file (its own context, read by nothing holding the old
        scan), without the copy `with_scan` makes."""
        self.__dict__["scan"] = scan

    def with_scan(self, scan: Scan) -> PassContext:
        """This context with another scan, every other field kept: `dataclasses.replace` without
        its per-field checks (tens of microseconds, asked once per file of a run)."""
        clone = object.__new__(PassContext)
        clone.__dict__.update(self.__dict__)
        clone.__dict__["scan"] = scan
        return clone

    def protect(self, start: int, end: int) -> None:
        """Keep text[start:end] exactly as written: edits inside it from any pass are dropped.

        Zero-width insertions at the span's edges are kept, so a shim include after a guard
        still lands."""
        self.found.protected.append((start, end))

    def warn(self, diag_id: str, offset: int, name: str = "", severity: str | None = None,
             end: int | None = None, origin: str = "", sites: tuple = (), **args: object) -> None:
        """Raise `diag_id` at `offset`; the span ends at `end` (default: the end of `name` when
        given, else the offset itself). The work is `_warn_python`'s, in one compiled call where
        it is built (11,650 diagnostics on the CUDA toolkit's headers)."""
        _warn(self, diag_id, offset, name, severity, end, origin, sites, args)


def _warn_python(ctx: PassContext, diag_id: str, offset: int, name: str, severity: str | None, end: int | None,
                 origin: str, sites: tuple, args: dict) -> None:
    """`PassContext.warn` in Python: the reference for the compiled `_cdiag.warn`."""
    line, col = ctx.lines.position(offset)
    if end is None:
        end = offset + len(name) if name and ctx.text.startswith(name, offset) else offset
    if end == offset:
        end_pos = (line, col)
    elif offset < end and ctx.text.find("\n", offset, end) < 0:
        end_pos = (line, col + end - offset)  # the same line (lines start after each '\n')
    else:
        end_pos = ctx.lines.position(end)
    found = ctx.found
    found.diagnostics.append(  # `args`, this call's own dict, handed over as it is
        _make_from(diag_id, ctx.display_path or ctx.path, line, col, name, severity, end_pos,
                   origin or "pass:" + found.current_pass, sites, args))


_warn = compiled_warn(_warn_python) or _warn_python


_SET_CONTEXT_DICT = PassContext.__dict__["__dict__"].__set__  # a context's instance dictionary, given whole
