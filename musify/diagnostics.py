"""The diagnostic catalogue: every ID musify can raise, in one place.

IDs are stable: once published an ID keeps its meaning forever (retired IDs stay listed with
`retired=True`). Each ID has a page `docs/diagnostics/<ID>.md` (what, why, how to fix, example);
a test fails when a page is missing.

Ranges: MU0xxx input and output problems, MU1xxx name mapping, MU2xxx semantic hazards,
MU3xxx precise (libclang) mode, MU4xxx musify-text compatibility, MU5xxx verify and emulator.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

SEVERITIES = ("note", "warning", "error")
SEVERITY_RANK = {s: i for i, s in enumerate(SEVERITIES)}


@dataclass(frozen=True, slots=True)
class DiagSpec:
    id: str
    severity: str
    effort: str  # none | low | medium | high: the work a user needs to resolve it
    title: str
    template: str  # str.format template over the diagnostic's `args`
    retired: bool = False


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One raised diagnostic; picklable and JSON-ready."""

    id: str
    severity: str
    path: str
    line: int
    column: int
    message: str
    name: str = ""  # the identifier or construct it is about, for statistics

    def console(self) -> str:
        return f"{self.path}:{self.line}:{self.column}: {self.severity}: {self.id}: {self.message}"

    def to_json(self) -> dict:
        return asdict(self)


_SPECS = [
    # --- MU0xxx: input and output -------------------------------------------------------------
    DiagSpec("MU0001", "error", "low", "unreadable file", "cannot read file: {cause}"),
    DiagSpec("MU0002", "note", "none", "binary file skipped", "binary file left as is: {cause}"),
    DiagSpec("MU0003", "warning", "low", "undecodable bytes",
             "{count} byte(s) are not valid UTF-8; they are kept as they are and never rewritten"),
    DiagSpec("MU0004", "error", "medium", "unterminated comment",
             "unterminated /* comment starting here; the rest of the file is treated as comment"),
    DiagSpec("MU0005", "error", "medium", "unterminated literal",
             "unterminated {what} starting here; the rest of the line is treated as a literal"),
    DiagSpec("MU0006", "note", "none", "empty file", "empty file: nothing to migrate"),
    DiagSpec("MU0007", "warning", "low", "syntax not understood",
             "tree-sitter could not parse {construct} here; structural facts for it are skipped, "
             "name migration still applies"),
    DiagSpec("MU0008", "error", "low", "file vanished", "file disappeared during the run: {cause}"),
    DiagSpec("MU0009", "error", "low", "cannot write output", "cannot write output: {cause}"),
    DiagSpec("MU0010", "note", "none", "symlink not followed",
             "symbolic link points outside the input tree ({target}); not followed"),
    DiagSpec("MU0011", "error", "low", "rename collision",
             "renaming to {target} would overwrite another input file; file left under its old name"),
    # --- MU1xxx: name mapping ---------------------------------------------------------------
    DiagSpec("MU1001", "warning", "medium", "unrecognised vendor name",
             "'{name}' looks like a CUDA name but no rule knows it and the project does not declare it; "
             "left unchanged"),
    DiagSpec("MU1002", "warning", "high", "no MUSA counterpart",
             "'{name}' ({library}) has no MUSA counterpart; left unchanged{note}"),
    DiagSpec("MU1003", "warning", "low", "ambiguous reverse mapping",
             "'{name}' is the MUSA name of several CUDA names ({choices}); chose '{chosen}'"),
    DiagSpec("MU1004", "note", "low", "inferred MUSA name",
             "'{name}' renamed to '{musa}' by the naming pattern; no public MUSA source spells it, "
             "check it against your SDK"),
    DiagSpec("MU1005", "note", "low", "unsupported header",
             "header <{name}> ({library}) has no MUSA counterpart; left unchanged{note}"),
    DiagSpec("MU1006", "note", "none", "include of a renamed project header",
             "include of project header '{name}' rewritten to '{musa}'"),
]

CATALOGUE: dict[str, DiagSpec] = {}


def register(*specs: DiagSpec) -> None:
    """Add catalogue entries; a module owning a range of IDs registers them at import time."""
    for spec in specs:
        if spec.id in CATALOGUE and CATALOGUE[spec.id] != spec:
            raise ValueError(f"diagnostic {spec.id} registered twice with different specs")
        if spec.severity not in SEVERITIES:
            raise ValueError(f"diagnostic {spec.id}: bad severity {spec.severity}")
        CATALOGUE[spec.id] = spec


register(*_SPECS)


def make(diag_id: str, path: str, line: int, column: int, name: str = "",
         severity: str | None = None, **args: object) -> Diagnostic:
    """Build a diagnostic from the catalogue; `severity` overrides the default (e.g. by --arch)."""
    spec = CATALOGUE[diag_id]
    message = spec.template.format(name=name, **args)
    return Diagnostic(diag_id, severity or spec.severity, path, line, column, message, name)


def at_least(severity: str, threshold: str) -> bool:
    return SEVERITY_RANK[severity] >= SEVERITY_RANK[threshold]
