"""Migrate one file: read, decode losslessly, scan, run the passes, merge edits, count.

This module sits above `musify.passes` (it runs them) and below `musify.api` (which plans the run,
finalises the results across files and writes).

`migrate_file` never raises: every problem becomes a diagnostic on a `FileResult`, so a process
pool can collect results and one bad file cannot stop the run. Text is decoded as UTF-8 with
`surrogateescape`, so undecodable bytes round-trip untouched; a BOM and CRLF line ends are just
characters outside every edit, so they come out as they went in.
"""

from __future__ import annotations

import io
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from musify import diagnostics, packed_edits, readahead
from musify.classes import dataclass
from musify.discover import classify, read_regular_stated
from musify.engine.edits import EditList, apply, apply_pieces, merge
from musify.frontend import compiled
from musify.packed_edits import PackedEdits, summarise, tail_json, tails
from musify.passes._base import PassContext, ProjectInfo
from musify.records import FileResult
from musify.routes import routes_for
from musify.rules.status import is_converted
from musify.textcodec import decode_wide, encode_wide, wide_codec

if TYPE_CHECKING:
    from musify.frontend.scanner import LineIndex, Scan
    from musify.options import Options
    from musify.rules.model import RuleSet

BINARY_SNIFF = 8192
# from this size on, a file's bytes are not held while it is migrated (its text is): on a 50 MB
# file they were a sixth of the peak; below it, keeping them costs less than deriving them again
LARGE = 4 << 20


@dataclass(frozen=True, init=False)  # __init__ below: the generated one is slow
class FileJob:
    """One file to migrate, as planned: where it is, what it is, where its port goes."""

    abspath: str
    rel: str
    root: str
    kind: str
    output_rel: str  # relative to the output tree
    display: str = ""  # the path as the user should see it in messages

    def __init__(self, abspath: str, rel: str, root: str, kind: str, output_rel: str, display: str = "") -> None:
        """What the dataclass would generate, the fields given as the instance dictionary (a
        frozen one sets each through `object.__setattr__`: planning makes one job per file, and
        this is a third of the generated one's cost; a dictionary made whole and set, rather
        than keywords copied into it)."""
        _SET_DICT(self, {"abspath": abspath, "rel": rel, "root": root, "kind": kind, "output_rel": output_rel,
                         "display": display})


_SET_DICT = FileJob.__dict__["__dict__"].__set__  # a job's instance dictionary, given whole


def migrate_text(text: str, path: str, ruleset: RuleSet, options: Options,
                 project: ProjectInfo | None = None, display: str = "",
                 abspath: str = "", kind: str = "") -> tuple[str, PassContext, EditList]:
    """Run the passes of the file's kind (default: classified from `path`) over `text`; return the
    new text, the context (diagnostics) and the edits."""
    ctx, merged = edit_text(text, path, ruleset, options, project, display, abspath, kind)
    return apply(text, merged), ctx, merged


def edit_text(text: str, path: str, ruleset: RuleSet, options: Options,
              project: ProjectInfo | None = None, display: str = "",
              abspath: str = "", kind: str = "") -> tuple[PassContext, EditList]:
    """`migrate_text` without applying the edits: the context and the merged edits (`_edit`'s,
    an empty list where it has none)."""
    ctx, merged = _edit(text, path, ruleset, options, project, display, abspath, kind)
    return ctx, EditList() if merged is None else merged


def _edit(text: str, path: str, ruleset: RuleSet, options: Options, project: ProjectInfo | None,
          display: str, abspath: str, kind: str) -> tuple[PassContext, EditList | None]:
    """The context and the merged edits, None where there are none (most files of a big tree: the
    runner's own migration of a file reads no empty list; `edit_text` makes one for its callers). The context
    comes back without the scan and the passes' shared scratch facts (a huge file's tokens and
    function lists are most of what its migration holds, and nothing after the passes reads them)."""
    NO_SCAN, LineIndex, language_for, plan, file_bits = _FRONT or _front()
    kind = kind or classify(path)
    made = _STEADY[2].get(kind) if _STEADY[0] is ruleset and _STEADY[1] is options else None
    if made is not None and made[2] is not plan:
        made = None  # (another `plan` put in `_FRONT` since)
    language = made[0] if made is not None else language_for(kind)
    sc = language.front_end(text, ruleset)
    ctx = PassContext(path, text, sc, ruleset, options, project or ProjectInfo(), LineIndex(text),
                      display or path, abspath)
    found = ctx.found
    found.current_pass = "scanner"
    if sc.problems:
        _report_problems(ctx, sc)
    edits = None  # an EditList once a pass makes one: compact, a huge file has a million of them
    if made is not None:
        (passes, prefixes), routes = made[1], made[3]
    else:
        passes, prefixes = made_plan = plan(language, ruleset, options)
        routes = routes_for(passes)
        if _STEADY[0] is ruleset and _STEADY[1] is options:
            _STEADY[2][kind] = (language, made_plan, plan, routes)
    present = sc.idents.names if prefixes and sc.prefixes is prefixes else None  # the scan's candidate names
    # the passes its gates let through (`musify/routes.py`), and each skipped one's idle facts
    for name, run, idle in routes.of(present, file_bits(ctx) if routes.triggers else None):
        if run is None:
            found.facts.update(idle)  # a pass it would find nothing in: the facts it writes then
            continue
        found.current_pass = name
        made = run(ctx)
        if not (made._a if type(made) is EditList else made):  # (an EditList's array: no `__len__` call)
            continue
        if edits is None and type(made) is EditList:
            edits = made  # the identifier pass's own list, handed over rather than copied
        else:
            if edits is None:
                edits = EditList()
            edits.extend(made)
    del sc
    found.scratch.clear()  # facts the passes shared (device functions...): read by nothing after them
    ctx.drop_scan(NO_SCAN)
    if edits is None:
        return ctx, None
    if found.protected:
        edits = drop_protected(edits, found.protected)
        if not edits:
            return ctx, None
    return ctx, merge(edits)  # (edits made by a pass: never empty here, nor once merged)


def _front() -> tuple:
    """(the shared empty scan, `LineIndex`, `language_for`, `plan`, `file_bits`), imported when
    the first file is migrated rather than with this module (a fully cached run loads no front
    end and no pass) and kept, not imported again for each file."""
    from musify.frontend.scanner import NO_SCAN, LineIndex
    from musify.passes.languages import language_for, plan
    from musify.passes.literals import file_bits

    _FRONT[:] = [NO_SCAN, LineIndex, language_for, plan, file_bits]
    return _FRONT


_FRONT: list = []
# while a run migrates its files (`steady`): its RuleSet and Options, and by file kind the
# language, its plan and the `plan` that made it, asked once a run rather than once a file (the
# run changes neither; `languages.plan` checks the rule tables' sizes on every call, which a
# caller migrating text with rules it changes between calls still gets)
_STEADY: list = [None, None, {}]


@contextmanager
def steady(ruleset: RuleSet, options: Options) -> Iterator[None]:
    """While the block runs, `_edit` remembers each kind's language and plan for `ruleset` and
    `options` (a run's files: neither changes meanwhile), forgotten on the way out."""
    before = _STEADY[:]
    _STEADY[:] = [ruleset, options, {}]
    try:
        yield
    finally:
        _STEADY[:] = before


def prepare(kinds: set[str], ruleset: RuleSet, options: Options) -> None:
    """Do now what the first file of each kind would do before its scan: import the front end
    and the passes, and make the plan of passes for these rules and options (about 80 ms of
    a run, done by the caller while it waits on the file system). What fails here is left to
    fail again, the same way, for the file that needs it, which reports it as it always has."""
    _, _, language_for, plan, _ = _FRONT or _front()
    for kind in sorted(kinds):
        try:
            plan(language_for(kind), ruleset, options)
        except Exception:  # noqa: BLE001, S112 -- the file's own migration raises it and reports it
            continue


def _report_problems(ctx: PassContext, sc: Scan) -> None:
    """MU0004/MU0005 for the scanner's unterminated comments and literals. A literal in a group
    `#if 0` turns off is a warning: compilers only warn there, and headers keep prose or other
    languages in such groups (an unterminated comment stays an error: compilers reject it anywhere)."""
    from musify.frontend.skipped import inside, skipped_groups

    groups = None
    for problem in sc.problems:
        if problem.what == "comment":
            ctx.warn("MU0004", problem.offset)
            continue
        if groups is None:
            groups = skipped_groups(ctx.text, sc.directives)
        if inside(groups, problem.offset):
            ctx.warn("MU0005", problem.offset, what=f"{problem.what} in a group '#if 0' turns off",
                     severity="warning")
        else:
            ctx.warn("MU0005", problem.offset, what=problem.what)


def drop_protected(edits: EditList, spans: list[tuple[int, int]]) -> EditList:
    """Edits that touch no protected span (an insertion strictly inside one is dropped too)."""
    spans = sorted(spans)
    keep = EditList()
    for e in edits:
        hit = any(s < e.end and e.start < end or (e.start == e.end and s < e.start < end) for s, end in spans)
        if not hit:
            keep.append(e)
    return keep


def migrate_file(job: FileJob, ruleset: RuleSet, options: Options, project: ProjectInfo) -> tuple[FileResult, bytes | None]:
    """Migrate one source file; returns its result and the new bytes (None when nothing to write)."""
    result, new, _ = migrate_file_stated(job, ruleset, options, project)
    return result, new


def migrate_file_stated(job: FileJob, ruleset: RuleSet, options: Options,
                        project: ProjectInfo) -> tuple[FileResult, bytes | None, os.stat_result | None]:
    """`migrate_file`, and the source's stat as it was read (None when it was not): its port
    gets that mode and owner without looking at the source again."""
    t0 = time.perf_counter()
    shown = job.display or job.rel
    result = FileResult(shown, job.output_rel, job.kind, "unchanged", job.rel)
    st = None
    try:
        data, st = _read(job, result, shown)
        if data is None:
            return result, None, st
        codec = wide_codec(data)  # UTF-16/32 with a byte-order mark: kept in that encoding
        if codec is not None:
            text, bad = decode_wide(data, codec), 0
        else:
            try:  # (`_decode`'s common case without its call)
                text, bad = data.decode("utf-8"), 0
            except UnicodeDecodeError:
                text, bad = _decode(data)
        size = len(data)
        if codec is None and size >= LARGE:
            data = None  # the text gives them back exactly (surrogateescape round-trips every byte)
        ctx, edits = _edit(text, job.rel, ruleset, options, project, job.display, job.abspath, job.kind)
        if bad:
            ctx.warn("MU0003", 0, origin="decoder", count=bad)
        if edits is None:  # (`_edit` gives None or a non-empty list: no `__len__` call)
            new = data if data is not None else text.encode("utf-8", "surrogateescape")
        elif codec:
            new = encode_wide(apply(text, edits), codec)
        elif size < LARGE:
            new = apply(text, edits).encode("utf-8", "surrogateescape")  # (a small file: one string at once)
        else:
            new = _encoded(apply_pieces(text, edits))
        _fill(result, ctx, edits, text, size, ruleset)
        if edits is not None and (new != data if data is not None else not _encodes_to(text, new)):
            result.status = "migrated"
        elif job.output_rel != job.rel and job.output_rel.rpartition("/")[2] != job.rel.rpartition("/")[2]:
            result.status = "migrated"  # renamed
        return result, new, st
    except UnicodeDecodeError as exc:  # only a wide codec decodes strictly: its mark lied
        result.status = "failed"
        result.error = f"not valid {exc.encoding}: {exc.reason} at byte {exc.start}"
        result.diagnostics.append(diagnostics.make("MU0019", shown, 1, 1, codec=exc.encoding,
                                                   cause=f"{exc.reason} at byte {exc.start}"))
        return result, None, st
    except Exception as exc:  # a bug in a pass: report it, keep the file, keep going
        if os.environ.get("MUSIFY_DEBUG") == "1":
            raise  # --debug: the traceback, not the report (`failures.GuardedGroup`)
        result.status = "failed"
        result.error = f"internal error: {exc.__class__.__name__}: {exc}"
        result.diagnostics.append(diagnostics.make("MU0022", shown, 1, 1, origin="runner", cause=result.error))
        import traceback

        result.facts["traceback_lines"] = len(traceback.format_exc().splitlines())
        return result, None, st
    finally:
        result.seconds = time.perf_counter() - t0


def _encoded(pieces: Iterator[str]) -> bytes:
    """The pieces' UTF-8 bytes (lone surrogates back to the bytes they stand for), encoded one by
    one: a huge file's new text and its new bytes are never both held (`getvalue` hands over the
    buffer without copying it)."""
    buf = io.BytesIO()
    for piece in pieces:
        buf.write(piece.encode("utf-8", "surrogateescape"))
    return buf.getvalue()


def _encodes_to(text: str, data: bytes) -> bool:
    """Whether `text` encodes to exactly `data`, compared a megabyte at a time (never a second
    copy of a big file's bytes)."""
    view = memoryview(data)
    pos = 0
    for lo in range(0, len(text), 1 << 20):
        piece = text[lo:lo + (1 << 20)].encode("utf-8", "surrogateescape")
        if view[pos:pos + len(piece)] != piece:
            return False
        pos += len(piece)
    return pos == len(data)


def _decode(data: bytes) -> tuple[str, int]:
    """The text and how many bytes were not UTF-8: one strict decode in the common case, the
    lossless `surrogateescape` one (each bad byte a lone surrogate) only when that fails."""
    try:
        return data.decode("utf-8"), 0
    except UnicodeDecodeError:
        text = data.decode("utf-8", "surrogateescape")
        return text, sum(1 for ch in text if "\udc80" <= ch <= "\udcff")


def _read(job: FileJob, result: FileResult, shown: str) -> tuple[bytes | None, os.stat_result | None]:
    """The file's bytes (None, with the reason on `result`, when there are none to migrate) and
    its stat as it was read (None when it could not be read)."""
    try:
        # read ahead by the run's reader thread where it could (else read here: the reference,
        # which never blocks on a FIFO that replaced a listed file)
        data, st = readahead.take(job.abspath) or read_regular_stated(job.abspath)
    except FileNotFoundError as exc:
        result.status = "failed"
        result.error = f"file disappeared: {exc.strerror}"
        result.diagnostics.append(diagnostics.make("MU0008", shown, 1, 1, origin="reader", cause=exc.strerror))
        return None, None
    except OSError as exc:
        result.status = "failed"
        result.error = f"cannot read: {exc.strerror or exc}"
        result.diagnostics.append(diagnostics.make("MU0001", shown, 1, 1, origin="reader", cause=exc.strerror or str(exc)))
        return None, None
    result.bytes_total = len(data)
    if not data:
        if job.rel.rpartition("/")[2] != "__init__.py":
            # (an empty __init__.py is a Python package's marker, empty by convention: vLLM has 293)
            result.diagnostics.append(diagnostics.make("MU0006", shown, 1, 1, origin="reader"))
        return None, st
    if data.find(b"\0", 0, BINARY_SNIFF) >= 0 and wide_codec(data) is None:  # (no copy of the head)
        result.status = "skipped"
        head = job.output_rel.rsplit("/", 1)[0] + "/" if "/" in job.output_rel else ""
        result.output_path = head + job.rel.rsplit("/", 1)[-1]  # a binary keeps its name
        result.diagnostics.append(diagnostics.make("MU0002", shown, 1, 1, origin="reader", cause="contains NUL bytes"))
        return None, st
    return data, st


def _fill(result: FileResult, ctx: PassContext, edits: EditList | None, text: str, size: int,
          ruleset: RuleSet) -> None:
    """The file's record entry from its merged edits: counted per distinct field tuple, the
    edits themselves packed (for most files, as the record's JSON: `musify/packed_edits.py`)
    here, where the file was migrated (in a worker under -j), not in the run's serial part. A
    file without edits (most headers of a big tree) keeps the result's zero counts and empty
    dicts, and its list is one shared empty one: what `_figures` makes of no edits
    (tests/test_per_file_path.py). The figures go straight to the result's fields, and the edit
    count is read off the list's array (`len(edits)`, a Python call, was asked twice a file)."""
    found = ctx.found
    n = len(edits._a) // 3 if edits is not None else 0
    if n:
        (result.edits, result.lines_changed, result.bytes_changed, result.edits_by_library, result.edits_by_kind,
         result.renamed, result.include_rewrites, result.shim_includes, result.inferred_edits, converted,
         result.lines_total) = _figures(edits, text, ctx.lines, size == len(text), not ctx.options.json_lite, ruleset)
        result.edit_count = n
    else:
        result.edits = None if ctx.options.json_lite else NO_EDITS
        converted = 0
        result.lines_total = ctx.lines.line_count if text else 0
    unconverted = found.unconverted
    if unconverted or converted:
        references = result.references  # (the result's own, made with it: written, not made again)
        references["converted"] = converted
        references["unconverted"] = sum(unconverted.values())
        if unconverted:
            result.unconverted = _sorted(unconverted)
    if found.facts:
        result.facts = _sorted(found.facts)
    if found.diagnostics:
        result.diagnostics.extend(found.diagnostics)
    if found.declared:
        result.declared = sorted(found.declared)
    if found.pending_unknown:
        result.pending_unknown = found.pending_unknown  # handed over: nothing adds to it after the passes
    if found.warp_aliases:
        result.warp_aliases = sorted(found.warp_aliases)
    if found.pending_warp:
        result.pending_warp = found.pending_warp
    if found.pasting:
        result.pasting = sorted(found.pasting)
    if found.unknown_args:
        result.unknown_args = found.unknown_args


NO_EDITS = PackedEdits.of_json(0, "[]")  # every file's empty edit list (immutable): one for the run


def _figures(edits: EditList, text: str, lines: LineIndex, ascii: bool, render: bool, ruleset: RuleSet) -> tuple:
    """(packed edits or None, lines touched, bytes changed, edits by library, by kind, references
    converted per name, include rewrites, shim includes, inferred edits, converted references,
    the file's line count) of `edits`, merged edits of `text` (`ascii`: a character is a byte of
    the file); the packed edits only when `render`. One pass in C where it is built (the field
    tuples the run has not counted yet counted first), which counts the file's lines on from the
    walk that found the edits' lines; `summarise`, `_tally` and `LineIndex.line_count` in Python
    (the reference) for the rest."""
    fields, memo = edits._fields.values, _COUNTED[1] if _COUNTED[0] is ruleset else _counted_fields(ruleset)
    if _NATIVE is not None:
        n = len(edits._a) // 3
        small = render and n <= packed_edits.RENDER_MAX  # a bigger file's list is kept as arrays, not rendered
        starts = lines.made  # (None when not made yet: the C counts the newlines)
        got = _NATIVE.record(text, edits._a, starts, fields, memo, small, ascii)
        if got is None and None in map(memo.get, fields):  # tuples not counted yet: counted, then again
            _count_new(memo, fields, ruleset)
            got = _NATIVE.record(text, edits._a, starts, fields, memo, small, ascii)
        if got is not None:
            json_text = got[0]
            if json_text is not None:
                return (PackedEdits.of_json(n, json_text), *got[1:])
            return (PackedEdits(edits, text, lines.position) if render else None, *got[1:])
    summary = summarise(edits, text, lines, ascii, render)
    return (summary.edits, summary.lines_touched, summary.bytes_changed,
            *_tally(fields, summary.counts, memo, ruleset), lines.line_count)


def _tally(fields: list[tuple], counts: list[int], counted: dict[tuple, tuple],
           ruleset: RuleSet) -> tuple[dict, dict, dict, int, int, int, int]:
    """The file's counts from how many edits have each field tuple (`counts[i]`: `fields[i]`):
    edits by library, by kind, references converted per name (each dict in key order), include
    rewrites, shim includes, inferred edits and converted references. Summed per distinct
    (replacement, rule, library, kind, inferred, category), not per edit: the counting of
    `_crecord.record` in Python (the reference)."""
    by_lib: dict[str, int] = {}
    by_kind: dict[str, int] = {}
    renamed: dict[str, int] = {}
    includes = shims = inferred = 0
    for key, count in zip(fields, counts):
        if not count:
            continue
        library, kind, category, renames, is_inferred, _ = counted.get(key) or _count_fields(counted, key, ruleset)
        by_lib[library] = by_lib.get(library, 0) + count
        by_kind[kind] = by_kind.get(kind, 0) + count
        if category == "include":
            includes += count
        elif category == "shim-include":
            shims += count
        if renames is not None:
            renamed[renames] = renamed.get(renames, 0) + count
        if is_inferred:
            inferred += count
    return _sorted(by_lib), _sorted(by_kind), _sorted(renamed), includes, shims, inferred, sum(renamed.values())


def _sorted_python(counts: dict) -> dict:
    """A plain dict of `counts` in key order (an empty one, of a file without any, made directly):
    `_sorted`, the reference of `_crecord.sorted_counts` (one C call, asked of every file's facts)."""
    return dict(sorted(counts.items())) if len(counts) > 1 else dict(counts)


def _counted_fields(ruleset: RuleSet) -> dict[tuple, tuple]:
    """The run's memo of `_count_fields`, for `ruleset` (made again when the RuleSet changes)."""
    if _COUNTED[0] is not ruleset:
        _COUNTED[:] = [ruleset, {}]
    return _COUNTED[1]


def _count_fields(counted: dict[tuple, tuple], fields: tuple, ruleset: RuleSet) -> tuple:
    """What an edit with these fields adds to the record: (library, kind, category, the rule it
    counts as a converted reference of or None, inferred, its JSON after "old"), remembered in
    `counted` (a run's renames repeat the same few hundred field tuples in file after file)."""
    if len(counted) >= _REMEMBER:
        counted.clear()
    answer = counted[fields] = _counts(fields, tail_json(fields), _converted_names(ruleset))
    return answer


def _count_new(counted: dict[tuple, tuple], fields: list[tuple], ruleset: RuleSet) -> None:
    """`_count_fields` of each of `fields` that `counted` lacks, in one loop (the tails made by
    one call): a big tree's files bring thousands of new tuples, one per renamed name, and one
    by one each cost half a dozen calls. `_count_fields` is the reference
    (tests/test_per_file_path.py)."""
    new = [key for key in fields if key not in counted]
    converted = _converted_names(ruleset)
    for key, tail in zip(new, tails(new)):
        if len(counted) >= _REMEMBER:
            counted.clear()
        counted[key] = _counts(key, tail, converted)


def _counts(fields: tuple, tail: str, converted: Callable[[str], bool]) -> tuple:
    """The memo's entry for one field tuple, its JSON tail made: what `_count_fields` and
    `_count_new` remember."""
    _, rule, library, kind, is_inferred, category = fields
    return (library or "unknown", kind or "unknown", category,
            rule if category == "reference" and converted(rule) else None, bool(is_inferred), tail)


_COUNTED: list = [None, {}]  # the RuleSet the counts are for, field tuple -> its counts
_REMEMBER = 1 << 16


def _converted_names(ruleset: RuleSet) -> Callable[[str], bool]:
    """Whether a reference edit of a rule counts as converted, by the rule status predicate
    (names a user table added and the reverse direction's records are all renames); answered
    once per rule name for the run's RuleSet, not once per file."""
    if _CONVERTED[0] is not ruleset:
        _CONVERTED[:] = [ruleset, _converted_of(ruleset)]  # made once: 10,750 new field tuples on the headers
    return _CONVERTED[1]


def _converted_of(ruleset: RuleSet) -> Callable[[str], bool]:
    known: dict[str, bool] = {}
    from musify.passes.identifiers import plainly_renamed  # (loaded: a file with edits was migrated)

    def converted(rule_name: str) -> bool:
        answer = known.get(rule_name)
        if answer is None:
            # a plain rename is renamed or shimmed: converted without making its Rule (10,600
            # Rules on the CUDA toolkit's headers); the table as filled until now
            if rule_name in plainly_renamed(ruleset):
                answer = known[rule_name] = True
            else:
                rule = ruleset.lookup(rule_name)
                answer = known[rule_name] = rule is None or is_converted(rule)
        return answer

    return converted


_CONVERTED: list = [None, None]  # the RuleSet the answers are for, and its `converted` (which remembers them)
# `_figures` in C (_crecord.c), or None: the Python above is the reference
_NATIVE = compiled.load("_crecord", "musify")
_sorted = getattr(_NATIVE, "sorted_counts", None) or _sorted_python
