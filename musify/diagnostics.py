"""The diagnostic catalogue: every ID musify can raise, in one place.

IDs are stable: once published an ID keeps its meaning forever (retired IDs stay listed with
`retired=True`). Each ID has a page `docs/diagnostics/<ID>.md` (what, why, how to fix, example);
a test fails when a page is missing.

Ranges: MU0xxx input and output problems, MU1xxx name mapping, MU2xxx semantic hazards,
MU3xxx precise (libclang) mode, MU4xxx musify-text compatibility, MU5xxx verify and emulator.
"""

from __future__ import annotations

import sys
from _string import formatter_parser
from collections.abc import Callable
from dataclasses import field, replace

from musify.classes import dataclass, named_tuple
from musify.frontend import compiled

SEVERITIES = ("note", "warning", "error")
SEVERITY_RANK = {s: i for i, s in enumerate(SEVERITIES)}
_NATIVE = compiled.load("_cdiag", "musify")  # the compiled `make_from`, `warn` and console lines, or None


_NEW_DICT: dict = {}  # the marker of an `args` not given (each diagnostic then gets its own dict)


@named_tuple
class DiagSpec:  # not a dataclass: defining one costs ~0.5 ms of every run's start-up
    id: str
    severity: str
    effort: str  # none | low | medium | high: the work a user needs to resolve it
    title: str
    template: str  # str.format template over the diagnostic's `args`
    retired: bool = False
    sites_in: str = "function"  # what a grouped diagnostic's `sites` share: "+N more in this function"


@dataclass(frozen=True, slots=True, init=False)  # __init__ below: the generated one is slow
class Diagnostic:
    """One raised diagnostic; picklable and JSON-ready (run record `musify-run/2`).

    `line`/`column` start the span and `end_line`/`end_column` end it (1-based, end exclusive);
    `args` are the message template's arguments, so a renderer can rebuild or translate the text;
    `origin` is the rule or pass that raised it; `sites` lists further places with the same cause
    when findings are grouped (one diagnostic per cause per function); `verify` is set by
    `musify verify` ("confirmed" or "cleared")."""

    id: str
    severity: str
    path: str
    line: int
    column: int
    message: str
    name: str = ""  # the identifier or construct it is about, for statistics
    end_line: int = 0  # 0: same as line
    end_column: int = 0  # 0: same as column
    args: dict = field(default_factory=dict, hash=False, compare=False)
    origin: str = ""  # "pass:warp_size", "rule:cudaBindTexture", ...
    sites: tuple = ()  # ((line, column), ...) of the other sites of a grouped finding
    verify: str = ""  # "", "confirmed" or "cleared"

    def __init__(self, id: str, severity: str, path: str, line: int, column: int, message: str,
                 name: str = "", end_line: int = 0, end_column: int = 0, args: dict = _NEW_DICT,
                 origin: str = "", sites: tuple = (), verify: str = "") -> None:
        """What the dataclass would generate (a frozen one sets each field by
        `object.__setattr__`, looked up again for every field), each field set by its slot's own
        setter (`_PUT`, looked up once)."""
        (put_id, put_severity, put_path, put_line, put_column, put_message, put_name, put_end_line,
         put_end_column, put_args, put_origin, put_sites, put_verify) = _PUT
        put_id(self, id)
        put_severity(self, severity)
        put_path(self, path)
        put_line(self, line)
        put_column(self, column)
        put_message(self, message)
        put_name(self, name)
        put_end_line(self, end_line)
        put_end_column(self, end_column)
        put_args(self, {} if args is _NEW_DICT else args)
        put_origin(self, origin)
        put_sites(self, sites)
        put_verify(self, verify)

    def console(self) -> str:
        more = f" (+{len(self.sites)} more in this {_sites_in(self.id)})" if self.sites else ""
        return f"{self.path}:{self.line}:{self.column}: {self.severity}: {self.id}: {self.message}{more}"

    def to_json(self) -> dict:
        return {"id": self.id, "severity": self.severity, "path": self.path, "line": self.line,
                "column": self.column, "end_line": self.end_line or self.line,
                "end_column": self.end_column or self.column, "message": self.message, "name": self.name,
                "args": self.args, "origin": self.origin, "sites": [list(s) for s in self.sites],
                "verify": self.verify}

    @classmethod
    def from_json(cls, d: dict) -> Diagnostic:
        d = dict(d)
        d["sites"] = tuple(tuple(s) for s in d.get("sites", ()))
        return cls(**d)

    # pickled as a tuple of the fields: results cross the -j pipe by the thousand, and the
    # dataclass default looks the fields up again for every object (about twice as slow)
    def __getstate__(self) -> tuple:
        return tuple(map(self.__getattribute__, _FIELDS))

    def __setstate__(self, state) -> None:
        if isinstance(state, dict):  # an older pickle
            state = tuple(state[name] for name in _FIELDS)
        for name, value in zip(_FIELDS, state):
            object.__setattr__(self, name, value)


_FIELDS = Diagnostic.__slots__
# each field's slot setter: a frozen class refuses `setattr`, its slots' descriptors do not (a
# diagnostic set up this way costs half what `object.__setattr__` per field did; 12,600 are
# raised on the CUDA toolkit's headers)
_PUT = tuple(Diagnostic.__dict__[name].__set__ for name in _FIELDS)


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
    DiagSpec("MU0012", "error", "low", "not a regular file",
             "{cause}: only regular files are read; left as is"),
    DiagSpec("MU0013", "error", "medium", "directory cannot be listed",
             "{cause}; nothing under it was migrated"),
    DiagSpec("MU0014", "error", "low", "file changed during the run", "{cause}"),
    DiagSpec("MU0015", "error", "low", "hard-linked file",
             "{cause}; left as is (migrate it with -o, or break the links first)"),
    DiagSpec("MU0016", "error", "low", "rename withheld",
             "left as is: {cause}; the next run retries it"),
    DiagSpec("MU0017", "note", "none", "symbolic link retargeted",
             "symbolic link now points at {target}, the file's new name"),
    DiagSpec("MU0018", "warning", "low", "symbolic link to a renamed file",
             "symbolic link points at {target}, which is renamed to {new}; not retargeted because the "
             "link does not end in that file's name: point it at the new name by hand"),
    DiagSpec("MU0019", "error", "low", "malformed UTF-16/UTF-32 file",
             "the byte-order mark says {codec} but {cause}; left as is"),
    DiagSpec("MU0020", "note", "none", "renames committed file by file",
             "renames committed file by file, not by a staged swap: {cause}; until the run ends a renamed "
             "file may exist under both names (listed in the journal)"),
    DiagSpec("MU0021", "error", "low", "file kept in the staging directory",
             "{kept} was created or changed by someone else during the run and the migrated tree already "
             "has a file of that name; it is kept there: compare the two and move it by hand"),
    DiagSpec("MU0022", "error", "low", "internal error",
             "left as is: {cause} (a bug in musify, not in this file: please report it with the file; "
             "--debug shows where it failed)"),
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
    # --- MU4xxx: musify-text compatibility (exclusion markers) ---------------------------------
    DiagSpec("MU4001", "warning", "low", "exclusion stop without start",
             "MUSIFY_EXCL_STOP closes no open MUSIFY_EXCL_START block; ignored"),
    DiagSpec("MU4002", "warning", "medium", "exclusion block never closed",
             "MUSIFY_EXCL_START is never closed by MUSIFY_EXCL_STOP; everything from here to the end "
             "of the file is left unmigrated"),
    DiagSpec("MU4003", "warning", "low", "exclusion start inside a block",
             "MUSIFY_EXCL_START inside the block opened at line {opened}; ignored, the block still ends "
             "at the next MUSIFY_EXCL_STOP"),
    DiagSpec("MU4004", "note", "none", "line exclusion inside a block",
             "MUSIFY_EXCL_LINE inside the block opened at line {opened}; the whole block is already "
             "left as written"),
    # --- MU2xxx: semantic hazards (musify/passes/hazards/) ------------------------------------
    DiagSpec("MU2001", "warning", "low", "arch guard threshold rewritten",
             "'{expr}' rewritten to compare with {musa_value}: {policy}; "
             "change the policy with --arch-map or arch_map in the configuration"),
    DiagSpec("MU2002", "warning", "medium", "arch guard not rewritten",
             "'{expr}' uses __CUDA_ARCH__ in a way the threshold policy cannot translate ({why}); "
             "__MUSA_ARCH__ is 210, 220 or 310, so rewrite this test by hand"),
    DiagSpec("MU2003", "note", "low", "arch value used in code",
             "'{name}' is used as a value here; __MUSA_ARCH__ counts 210/220/310, not NVIDIA's 700/800/900"),
    DiagSpec("MU2010", "warning", "medium", "CUDA version comparison",
             "'{expr}' compares {name} with a CUDA version number ({decoded}){renamed}; MUSA numbers its "
             "versions on its own scale (SDK 5.2 is MUSA_VERSION 50200), so decide by hand which MUSA "
             "version this code needs"),
    DiagSpec("MU2020", "note", "none", "32-bit full lane mask",
             "full 32-bit mask '{expr}' for {call} in {func}(): MUSA takes it as the whole warp ({width} lanes on "
             "{arch}), so it works as written; write __activemask() (taken where every lane is active) "
             "if the code should not depend on that reading"),
    DiagSpec("MU2021", "warning", "low", "lane or warp arithmetic assumes 32 lanes",
             "'{expr}' assumes 32-lane warps (a warp on {arch} has {width} lanes); write {fix}"),
    DiagSpec("MU2022", "warning", "low", "shuffle width 32",
             "width 32 in {call}() in {func}() covers a 32-lane warp only (a warp on {arch} has {width} lanes); "
             "pass warpSize"),
    DiagSpec("MU2023", "warning", "low", "shuffle loop sized for 32 lanes",
             "'{expr}' walks the offsets of a 32-lane warp (a warp on {arch} has {width} lanes); "
             "start at warpSize / 2 (or loop while offset < warpSize)"),
    DiagSpec("MU2024", "warning", "low", "warp-synchronous tail sized for 32 lanes",
             "'{expr}' selects the first 32 threads as 'one warp' (a warp on {arch} has {width} lanes); "
             "compare with warpSize"),
    DiagSpec("MU2025", "warning", "low", "warpSize compared with 32",
             "'{expr}' compares warpSize with 32; on {arch} warpSize is {width}: test the property "
             "the code needs instead"),
    DiagSpec("MU2026", "warning", "low", "project warp-size constant is 32",
             "'{expr}' fixes the warp size at 32 for every use of {name} (a warp on {arch} has {width} "
             "lanes); use warpSize where a run-time value will do, define {name} as {width} for {arch} "
             "where a constant is needed, and check the code built on it"),
    DiagSpec("MU2041", "warning", "medium", "lane mask treated as 32 bits wide",
             "'{expr}' in {func}(): a lane mask {how}, which covers 32 lanes, but a warp on {arch} has "
             "{width}; keep per-lane results in shared memory or count them with a warp reduction "
             "(e.g. __syncthreads_count, or a shuffle sum over warpSize lanes)"),
    DiagSpec("MU2030", "warning", "high", "cuDNN call needs a muDNN port",
             "'{name}' is cuDNN: muDNN is a C++ API (::musa::dnn::Handle, ...), so cuDNN's C calls are "
             "not renamed; port this use to muDNN by hand (effort: high)"),
    DiagSpec("MU2031", "warning", "medium", "texture or surface reference",
             "{what} '{name}': texture and surface references were removed in CUDA 12 and have no "
             "MUSA counterpart; use a texture object (cudaTextureObject_t, renamed to musaTextureObject_t) "
             "or plain global loads (effort: medium)"),
    DiagSpec("MU2032", "warning", "high", "dynamic parallelism",
             "{what} in device code ({func}()): dynamic parallelism has no documented MUSA "
             "counterpart; move the launch or the synchronisation to the host (effort: high)"),
    DiagSpec("MU2033", "warning", "low", "Hopper programmatic dependent launch",
             "'{name}' is Hopper programmatic dependent launch, which MUSA lacks; remove it: without "
             "programmatic launch, stream order already makes a kernel wait for the previous one "
             "(effort: low)"),
    DiagSpec("MU2034", "warning", "high", "Hopper tensor memory accelerator",
             "'{name}' is the Hopper tensor memory accelerator (TMA), which MUSA lacks; load tiles "
             "with ordinary (vectorised) loads into shared memory (effort: high)"),
    DiagSpec("MU2035", "warning", "high", "Hopper warpgroup or fp8 MMA",
             "{what}: an NVIDIA tensor-core instruction (Hopper's warpgroup MMA, or fp8 MMA of sm_89 and "
             "later) with no MUSA counterpart; use mutlass/muBLAS or a plain-arithmetic kernel (effort: high)"),
    DiagSpec("MU2036", "warning", "high", "thread block clusters",
             "'{name}' uses thread block clusters (Hopper), which MUSA lacks; restructure to one block "
             "per cluster or exchange data through global memory (effort: high)"),
    DiagSpec("MU2040", "error", "high", "inline assembly",
             "inline assembly ({name}) is PTX and does not assemble on MUSA; rewrite it with "
             "builtins or plain code; musify leaves it in place, since disabling it would compile but "
             "compute wrong results"),
    DiagSpec("MU2050", "warning", "low", "self-referential define kept",
             "'#define {name}' would become '#define {musa} {musa}' after renaming, which breaks every "
             "use of {musa}; kept as written (the project already maps the name to MUSA)", sites_in="file"),
    DiagSpec("MU2060", "note", "low", "call rewritten to a compatibility shim",
             "'{name}' rewritten to '{musa}' from \"{header}\" (musify's shims/compat): put shims/compat "
             "on the include path"),
    DiagSpec("MU2061", "warning", "medium", "no MUSA counterpart, shims disabled",
             "'{name}' has no MUSA counterpart and --no-shims is set; left unchanged ({header} would "
             "provide '{musa}')"),
    # --- MU50xx: verify (musify/verify/hazards.py raises them) ---------------------------------
    DiagSpec("MU5001", "error", "medium", "port does not compile",
             "the port does not compile {where} ({arch}): {error}"),
    DiagSpec("MU5002", "error", "high", "port computes something else",
             "verify ({arch}): the port's run differs from the original's: {difference}"),
    DiagSpec("MU5003", "error", "medium", "port does not finish",
             "verify ({arch}): {reason}"),
    DiagSpec("MU5004", "note", "none", "kernel not harnessed",
             "kernel '{name}' has no main to run it and no harness could be generated: {reason}"),
    DiagSpec("MU5005", "note", "none", "original not verifiable here",
             "verify: the original cannot be verified {where} ({reason}); the port is not judged"),
    DiagSpec("MU5010", "warning", "medium", "shared-memory race (implicit warp-synchronous code)",
             "verify ({arch}): a thread reads shared memory another thread wrote with no barrier between "
             "({race}); this relies on warp-synchronous execution, which a {width}-lane warp does not give "
             "the same way: add __syncwarp() or __syncthreads() between the write and the read"),
    # --- MU3xxx: precise mode (musify/semantic/) -----------------------------------------------
    DiagSpec("MU3001", "note", "none", "precise mode unavailable for this file",
             "precise mode skipped for this file ({cause}); the lexical engine migrated it"),
    DiagSpec("MU3002", "note", "none", "user declaration kept",
             "'{name}' refers to the project's own declaration ({where}), not the CUDA SDK; not renamed"),
    DiagSpec("MU3003", "note", "low", "macro expands to CUDA calls",
             "macro '{name}' (defined at {where}) expands to CUDA API calls ({calls}); they are migrated "
             "where the macro is defined, if that file is part of the migration"),
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


def _fast_entry(diag_id: str) -> tuple | None:
    """What the compiled `make_from` reads for `diag_id`: (spec, severity, `_pieces` of its
    template), made when the ID is first raised (most runs raise few of the IDs) and again when
    its spec was replaced; None, for the reference to answer, for an ID not catalogued or a
    template `_pieces` cannot split."""
    spec = CATALOGUE.get(diag_id)
    pieces = _pieces(spec.template) if spec is not None else None
    entry = (spec, spec.severity, pieces) if pieces is not None else None
    _FAST[diag_id] = entry
    return entry


def _pieces(template: str) -> tuple[str, ...] | None:
    """`template` as (literal, argument name, literal, ..., literal), the text `format_map` writes
    between and around each argument's `format(value, "")`; None when it holds anything else (a
    conversion, a format spec, an index or attribute, a positional field): such a template is
    formatted by the reference only."""
    pieces: list[str] = []
    literal = ""
    try:
        parsed = list(formatter_parser(template))  # what string.Formatter().parse answers
    except ValueError:
        return None
    for text, field_name, spec, conversion in parsed:
        literal += text  # `parse` splits a literal at each "{{" or "}}"
        if field_name is None:
            continue
        if spec or conversion or not field_name.isidentifier():
            return None
        pieces += (literal, sys.intern(field_name))  # interned: the compiled lookups compare identities first
        literal = ""
    pieces.append(literal)
    return tuple(pieces)


_FAST: dict[str, tuple | None] = {}  # ID -> `_fast_entry(ID)`, as the compiled path made them


register(*_SPECS)


def make(diag_id: str, path: str, line: int, column: int, name: str = "",
         severity: str | None = None, *, end: tuple[int, int] | None = None, origin: str = "",
         sites: tuple = (), **args: object) -> Diagnostic:
    """Build a diagnostic from the catalogue; `severity` overrides the default (e.g. by --arch),
    `end` is the (line, column) just past the construct (default: the start)."""
    return make_from(diag_id, path, line, column, name, severity, end, origin, sites, args)


def _make_from_python(diag_id: str, path: str, line: int, column: int, name: str, severity: str | None,
                      end: tuple[int, int] | None, origin: str, sites: tuple, args: dict) -> Diagnostic:
    """`make` with the template arguments as a dict the diagnostic may keep (the caller's own:
    `PassContext.warn` hands over its keyword arguments rather than unpacking them again).
    The reference for the compiled `make_from` (musify/_cdiag.c), which answers the same."""
    spec = CATALOGUE[diag_id]
    fields = _Args(args)  # (`args` never holds `name`: it is a parameter of every caller)
    fields["name"] = name
    message = spec.template.format_map(fields)
    end_line, end_column = end or (line, column)
    plain = _PLAIN
    for value in args.values():
        if value.__class__ not in plain:  # rare: made plain in a copy (most arguments are strings)
            args = {k: v if v.__class__ in plain else _plain(v) for k, v in args.items()}
            break
    return Diagnostic(diag_id, severity or spec.severity, path, line, column, message, name,
                      end_line, end_column, args, origin, sites if sites.__class__ is tuple else tuple(sites))


def with_changes(diag: Diagnostic, **changes: object) -> Diagnostic:
    """A copy of a (frozen) diagnostic with some fields changed, e.g. severity or verify status."""
    return replace(diag, **changes)


_PLAIN = frozenset({str, int, float, bool, type(None)})  # kept as they are (others: `_plain`)


def _plain(value: object) -> object:
    """Template arguments as JSON values (they land in the run record)."""
    return value if isinstance(value, (str, int, float, bool)) or value is None else str(value)


class _Args(dict):
    """Template arguments. A rule may name any catalogued diagnostic in its `diag`, so a template
    can meet a use site that lacks one of its fields: say "use" rather than crash on the file."""

    def __missing__(self, key: str) -> str:
        return _MISSING.get(key, "?")


_MISSING = {"what": "use of", "note": "", "func": "a device function"}  # what a missing argument reads


def console_text(lists: list[list[Diagnostic]], least: int) -> str | None:
    """`d.console()` and a newline for each diagnostic of each list of `lists` in turn whose
    severity ranks at least `least`, joined, in one compiled call; None without the compiled
    module, or for anything it leaves to the reference (musify/console.py `_print_python`)."""
    if _NATIVE is None:
        return None
    return _NATIVE.console(lists, least, SEVERITY_RANK,
                           {i: spec.sites_in for i, spec in CATALOGUE.items() if spec.sites_in != "function"})


def _sites_in(diag_id: str) -> str:
    """What the sites of a grouped `diag_id` share ("function" unless its spec says "file")."""
    spec = CATALOGUE.get(diag_id)
    return spec.sites_in if spec is not None else "function"


def compiled_warn(reference: Callable[..., None]) -> Callable[..., None] | None:
    """The compiled `PassContext.warn` work (`_cdiag.warn`), answering as `reference` (the Python
    function it falls back to for anything it was not written for); None without the module."""
    if _NATIVE is None:
        return None
    _NATIVE.setup_warn(reference)
    return _NATIVE.warn


def at_least(severity: str, threshold: str) -> bool:
    return SEVERITY_RANK[severity] >= SEVERITY_RANK[threshold]

from musify import diagnostics_pytorch  # noqa: F401 -- registers MU6000-MU6199

make_from = _make_from_python  # a diagnostic made from the catalogue: the compiled one where built
if _NATIVE is not None:
    _NATIVE.setup(Diagnostic, _FIELDS, _FAST, _fast_entry, _MISSING, _make_from_python, CATALOGUE)
    make_from = _NATIVE.make_from
