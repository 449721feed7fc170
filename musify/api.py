"""The library entry point: `migrate(inputs, ...)` returns a RunRecord.

The CLI is a thin layer over this, so tests and other tools take exactly the path users take.
"""

from __future__ import annotations

import functools
import os
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timezone
from typing import TYPE_CHECKING, TypeVar

from musify import (
    __version__,
    cache,
    collector,
    diagnostics,
    file_tools,
    prefault,
    readahead,
    renames,
    runner,
    writers,
)
from musify.config import run_excludes
from musify.discover import SOURCE_KINDS, Discovery, Found, discover, join_rel, link_stays_inside, printable
from musify.finalise import finalise
from musify.options import Options
from musify.passes.includes import build_project_info
from musify.pool import Writes, run_jobs, write_port
from musify.records import FileResult, RunRecord
from musify.report.summary import Report
from musify.rules.reverse import file_direction
from musify.runner import FileJob
from musify.spool import open_spool

if TYPE_CHECKING:
    from musify.passes._base import ProjectInfo
    from musify.rules.model import RuleSet

MODES = ("out", "in-place", "stdout", "diff", "none")
T = TypeVar("T")


class UsageError(ValueError):
    """A request that cannot be carried out as asked (reported before anything is written)."""


class Outputs:
    """Where the migrated bytes went, for callers that want them (stdout, diff, tests). A plain
    class: the methods a dataclass adds were compiled at every start-up (1 M instructions) for
    an object a run makes once."""

    __slots__ = ("diff", "texts")

    def __init__(self, texts: dict[str, bytes], diff: str) -> None:
        self.texts = texts
        self.diff = diff


def migrate(inputs: list[str], options: Options | None = None, mode: str = "none",
            out_dir: str | None = None, ruleset: RuleSet | None = None,
            command: str = "musify migrate", collect: bool = False, fail_on: str = "error",
            fail_on_change: bool = False,
            progress: Callable[[FileResult, int, int], None] | None = None,
            found: Discovery | None = None, spool: str | None = None) -> tuple[RunRecord, Outputs]:
    """Migrate `inputs` (files and directories) and write results according to `mode`.

    `fail_on` is the lowest diagnostic severity that makes the run fail; `fail_on_change` makes a
    file that would change fail it too (`musify check`). The record's exit code comes from
    `Report`, the one place that decides it. `progress(result, done, total)` is called as each
    file is done. `found` is the inputs' discovery when the caller already made it (the run memo).
    `spool` is a folder (the record's) where each file's rendered record entry waits on disk until
    the record is written (`musify/spool.py`); without it they are held in memory."""
    options = options or Options()
    if mode not in MODES:
        raise UsageError(f"unknown output mode {mode!r}")
    if mode == "in-place":
        from musify import inplace  # only --in-place needs it (and the journal and swap it imports)

        if inplace.active() is None:  # hold the tree's lock for the whole run
            with inplace.session(inputs, options.lock_wait):
                return migrate(inputs, options, mode, out_dir, ruleset, command, collect, fail_on, fail_on_change,
                               progress, found, spool)
    t0 = time.perf_counter()
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")

    def listing() -> Discovery:
        # the stamps (each file's stat) are read by the in-place writer only
        return discover(inputs, run_excludes(inputs, options), options.respect_gitignore, stamps=mode == "in-place")

    with collector.settled():  # thousands of acyclic objects that live the whole run
        if found is None:
            found = listing()
        prefault.start_for_program(len(found.files))  # a big run's new memory faulted in on another core
        if mode == "in-place" and inplace.clean(found.owned):  # a killed run's link went: the stamps are stale
            found = listing()
        if mode == "out":
            _check_out_dir(out_dir, inputs)
        rules = cache.Rules(options, ruleset)  # loaded only if some file misses the incremental cache
        prefixes = _out_prefixes(inputs)
        migrated_kinds = file_direction(options.reverse)[2]
        # without the incremental cache every run loads the rules and the front ends its files
        # need: done while planning waits on the file system (the rename probe)
        warm = None if cache.stores(options, rules) else functools.partial(_warm, rules, options, migrated_kinds)
        plan = _plan(found.files, inputs, options, prefixes, found.unlisted, warm)
        results: list[FileResult | None] = [None] * len(plan)
        new_bytes: list[bytes | None] = [None] * len(plan)
        todo = [(i, job) for i, (f, job) in enumerate(plan) if job is not None and f.kind in migrated_kinds]
        project = _project(plan, options, prefixes)
    # -o writes each port as it arrives and the record needs no bytes, so a big tree's ports are
    # never all in memory; in place (which orders its writes), diff and stdout keep them
    stream = mode in ("out", "none") and not collect
    # with -o the runner (each worker, under -j) writes every port it makes; the loop below
    # writes the results the incremental cache replays
    writes = Writes(out_dir or "") if stream and mode == "out" else None
    early: dict[int, str | None] = writes.done if writes else {}  # index -> why its write failed (None: written)
    writers.forget_dirs()
    keeper = open_spool(spool)
    # a worker's new bytes travel back only for what reads them: the incremental cache, or a mode
    # that writes in the parent (in place, diff, stdout)
    run = functools.partial(run_jobs, writes=writes, keep_bytes=not stream or cache.stores(options, rules))
    for done, (i, result, data) in enumerate(cache.run_cached(todo, rules, options, project, run), 1):
        results[i] = result
        if keeper is not None:
            keeper.keep(result)
        if not stream:
            new_bytes[i] = data
        elif mode == "out" and i not in early:
            early[i] = write_port(plan[i][1], result, data, out_dir or "")
        if progress:
            progress(result, done, len(todo))
    # the run-level steps make thousands of acyclic objects (a copy of most results) and no
    # garbage cycle: young collections here only walked the results again, and the first one
    # after the block walked all it made (5 ms on 4,928 files): it leaves them old (`settled`)
    with collector.settled():
        for i, (f, job) in enumerate(plan):
            if results[i] is None:
                results[i] = _passthrough(f, job, mode, inputs, prefixes.get(f.root, ""))
        files = [r for r in results if r is not None]
        files = renames.report_collisions(plan, files, file_direction(options.reverse)[0], options.rename_files)
        files = finalise(files, options.suppress)
        files, outputs = _write(plan, files, new_bytes, mode, out_dir, collect, early)
        record = RunRecord(__version__, command, list(inputs), out_dir if mode == "out" else mode,
                           options.to_json(), rules.digest, started, time.perf_counter() - t0, files,
                           fail_on=fail_on, fail_on_change=fail_on_change)
        record.exit_code = Report(record).exit_code
    readahead.withdraw()  # what the rename probe read and no read-ahead took (a file not migrated)
    collector.outlive(found, plan, todo, results, new_bytes, project)  # not freed on the way out
    return record, outputs


def _check_out_dir(out_dir: str | None, inputs: list[str]) -> None:
    if not out_dir:
        raise UsageError("an output directory is required with -o")
    out = os.path.realpath(out_dir)
    for item in inputs:
        src = os.path.realpath(item)
        if os.path.isdir(src) and (out == src or out.startswith(src + os.sep)):
            raise UsageError(f"output directory {out_dir} is inside the input tree {item}; choose another")
        if os.path.isdir(src) and src.startswith(out + os.sep):
            raise UsageError(f"input {item} is inside the output directory {out_dir}; choose another")


def _display_roots(inputs: list[str]) -> dict[str, str]:
    """Input root (absolute) -> how the user wrote it, so messages show paths as given."""
    out = {}
    for item in inputs:
        if os.path.isdir(item):
            out.setdefault(os.path.abspath(item), "" if item in (".", "./") else item)
    return out


def _display(inputs: list[str], f: Found, roots: dict[str, str] | None = None) -> str:
    roots = roots if roots is not None else _display_roots(inputs)
    given = roots.get(f.root)
    if given is not None:
        return printable(f"{given.rstrip('/')}/{f.rel}" if given else f.rel)
    if f.root == os.getcwd():
        return printable(f.rel)
    return printable(os.path.join(os.path.relpath(f.root), *f.rel.split("/")))


def _out_prefixes(inputs: list[str]) -> dict[str, str]:
    """Where each input root lands in an output tree: one directory input is mirrored at the top;
    with several inputs each directory keeps its own name, and files land at the top."""
    dirs = [os.path.abspath(i) for i in inputs if os.path.isdir(i)]
    if len(inputs) == 1:
        return {d: "" for d in dirs}
    return {d: os.path.basename(d.rstrip(os.sep)) for d in dirs}


def _join(prefix: str, rel: str) -> str:
    return f"{prefix}/{rel}" if prefix else rel


def _plan(files: list[Found], inputs: list[str], options: Options, prefixes: dict[str, str],
          unlisted: dict[str, set[str]] | None = None,
          meanwhile: Callable[[list[Found]], None] | None = None) -> list[tuple[Found, FileJob | None]]:
    """Pair each found file with its job (None for links and missing files); decide renames
    (the file system asked about every renamed file at once, where the listing `unlisted`
    does not answer: `renames.keep_names`). `meanwhile(files)`, when given, is run while that
    question is out (only where there are enough files for it to be worth a thread; else the
    caller's later steps do the same work when they need it)."""
    new_exts, renamed_kinds, _ = file_direction(options.reverse)
    # the listed files a new name could be (what `renames.keep_names` looks up): only those that
    # end like one, not every file of the tree
    new_names = tuple(new_exts.values())
    existing = {(f.root, f.rel) for f in files if f.rel.endswith(new_names)}
    if not options.rename_files:
        renamed_kinds = frozenset()
    roots = _display_roots(inputs)
    # a new extension by what follows the dot of the old one (`_split_ext`, without its call)
    new_tails = {ext[1:]: new for ext, new in new_exts.items() if ext[:1] == "."}
    paths: list[str | None] = []  # each file's path; None for a link or a missing file (no job)
    asked = []  # (index, new relpath) of each file renamed unless it keeps its name
    for k, f in enumerate(files):
        kind = f.kind
        if f.symlink is not None or kind in ("missing", "special"):
            paths.append(None)
            continue
        rel = f.rel
        if kind in renamed_kinds:
            stem, _, tail = rel.rpartition(".")
            if stem and stem[-1] not in "./" and "/" not in tail:  # plainly the name's extension
                new = new_tails.get(tail)
                if new is not None:
                    asked.append((k, stem + new))
            else:
                stem, ext = _split_ext(rel)
                if ext in new_exts:
                    asked.append((k, stem + new_exts[ext]))
        paths.append(join_rel(f.root, rel))
    items = [(files[k], target, paths[k]) for k, target in asked]
    if meanwhile is not None and len(items) >= OVERLAP_MIN:
        probe = renames.NameProbe(items, existing, unlisted)
        beside(probe.run, functools.partial(meanwhile, files), then=probe.run)  # this thread helps once warm
        keeps = probe.keeps()
    else:
        keeps = renames.keep_names(items, existing, unlisted)
    targets = {k: target for (k, target), kept in zip(asked, keeps) if not kept}
    plan: list[tuple[Found, FileJob | None]] = []
    shown: dict[str, str | None] = {}  # input root -> what its files' shown paths start with (None: ask _display)
    last_root = head = prefix = None  # (the files of one root come together: its head and prefix asked once)
    for k, (f, abspath) in enumerate(zip(files, paths)):
        if abspath is None:
            plan.append((f, None))
            continue
        rel, root = f.rel, f.root
        if root is not last_root:
            last_root = root
            head = shown[root] if root in shown else shown.setdefault(root, _shown_head(roots.get(root)))
            prefix = prefixes.get(root, "")
        target = targets.get(k, rel)
        if head is not None:
            display = head + rel
            if not display.isprintable():
                display = printable(display)
        else:
            display = _display(inputs, f, roots)
        plan.append((f, FileJob(abspath, rel, root, f.kind, f"{prefix}/{target}" if prefix else target, display)))
    return plan


# renamed files from which planning overlaps its rename probe with `_warm` (a thread's start
# and join cost tens of microseconds; the probe about 5 us a file)
OVERLAP_MIN = 64


def beside(work: Callable[[], T], meanwhile: Callable[[], object], then: Callable[[], object] | None = None) -> T:
    """`work()` in a second thread while this one runs `meanwhile()`, then `then()` (a share of
    `work`'s own work, where it can be shared: the rename probe's `NameProbe.run`); `work`'s
    answer. The thread is always joined before this returns or raises; `work`'s exception is
    raised first, then `meanwhile`'s (or `then`'s). Worth it where `work` waits on the system
    without the interpreter's lock (the compiled rename probe)."""
    box: list = []

    def run() -> None:
        try:
            box.append((True, work()))
        except BaseException as exc:  # noqa: BLE001 -- raised again in the caller's thread
            box.append((False, exc))

    thread = threading.Thread(target=run, name="musify-plan", daemon=True)
    thread.start()
    try:
        meanwhile()
        if then is not None:
            then()
    finally:
        thread.join()
        ok, answer = box[0]
        if not ok:
            raise answer
    return answer


def _warm(rules: cache.Rules, options: Options, migrated: frozenset[str], files: list[Found]) -> None:
    """What migrating the first file of each kind would do first (`runner.prepare`), and the
    run's rules, loaded: for a run that loads them in any case (no incremental cache)."""
    kinds = {f.kind for f in files if f.kind in migrated and f.symlink is None}
    if kinds:
        runner.prepare(kinds, rules.get(), options)


def _shown_head(given: str | None) -> str | None:
    """What `_display` puts before the relpath of every file under an input root given as
    `given` (as the user wrote it), or None where it has no such head (a file given by name)."""
    if given is None:
        return None
    return f"{given.rstrip('/')}/" if given else ""


def _split_ext(rel: str) -> tuple[str, str]:
    """`os.path.splitext(rel)` for a listed relpath, cut at its last dot by string methods where
    that is plainly the name's extension (a character of the name before it); planning asks it of
    every file it may rename."""
    dot = rel.rfind(".")
    if dot > 0 and rel[dot - 1] not in "./" and "/" not in rel[dot:]:
        return rel[:dot], rel[dot:]
    return os.path.splitext(rel)


def _project(plan: list[tuple[Found, FileJob | None]], options: Options,
             prefixes: dict[str, str] | None = None) -> ProjectInfo:
    """The project's files and renames (old relpath -> new relpath). Names are cut at their last
    "/" with string methods (`posixpath` makes several calls per name, and this runs in the
    parent's serial part for every file): a listed relpath has no empty component, so this is
    what `posixpath.dirname`/`basename`/`join` give. With `prefixes` (`_out_prefixes`: what each
    root's ports' paths start with) all empty, a port's path is its file's new relpath in the
    same folder (`_plan` renames within the folder), so a file is renamed exactly where the two
    differ and its new relpath is the port's path (read off without cutting either)."""
    kinds = SOURCE_KINDS | {"musa"}
    relpaths = [f.rel for f, job in plan if job is not None and f.kind in kinds]
    if prefixes is not None and not any(prefixes.values()):
        return build_project_info(relpaths, {job.rel: job.output_rel for _f, job in plan
                                             if job is not None and job.output_rel != job.rel})
    renames = {}
    for _f, job in plan:
        if job is None:
            continue
        rel, out = job.rel, job.output_rel
        if out == rel:
            continue  # (the same name: most files of a tree given alone)
        new = out.rpartition("/")[2]
        old = rel.rpartition("/")[2]
        if new != old:
            renames[rel] = rel[:len(rel) - len(old)] + new
    return build_project_info(relpaths, renames)


def _passthrough(f: Found, job: FileJob | None, mode: str, inputs: list[str], prefix: str) -> FileResult:
    shown = job.display if job else _display(inputs, f)
    out_rel = job.output_rel if job else _join(prefix, f.rel)
    result = FileResult(shown, out_rel, f.kind, "copied" if mode == "out" else "untouched", rel=f.rel)
    if f.kind in ("missing", "special"):
        result.status = "failed"
        result.error = f.error or "no such file or directory"
        diag_id = "MU0012" if f.kind == "special" else "MU0013" if f.error else "MU0001"
        result.diagnostics.append(diagnostics.make(diag_id, shown, 1, 1, origin="discover", cause=result.error))
    elif f.symlink is not None and not link_stays_inside(f):
        result.status = "skipped"
        result.diagnostics.append(diagnostics.make("MU0010", shown, 1, 1, origin="discover",
                                                   target=printable(f.symlink)))
    return result


def _write(plan, files: list[FileResult], new_bytes: list[bytes | None], mode: str,
           out_dir: str | None, collect: bool,
           early: dict[int, str | None]) -> tuple[list[FileResult], Outputs]:
    """Write every result not written `early` (as it arrived: index -> the failure's cause or
    None); a file whose output cannot be written comes back as a failed result."""
    outputs = Outputs({}, "")
    diff_parts = []
    written = []
    if mode == "in-place":
        from musify import inplace

        files = inplace.write(plan, files, new_bytes)
    # what a link in the port must now name: resolved only when the output tree gets links
    links = mode == "out" and any(f.symlink is not None for f, _ in plan)
    renamed = renames.renamed_paths(plan, files) if links else {}
    for i, ((f, job), result, data) in enumerate(zip(plan, files, new_bytes)):
        written.append(result)
        try:
            if i in early:
                if early[i] is not None:
                    raise OSError(early[i])
            elif mode == "out":
                _write_out(f, result, data, out_dir, renamed)
            elif mode == "diff" and data is not None and result.status == "migrated":
                with open(f.abspath, "rb") as fh:
                    old = fh.read()
                new_rel = f.rel[: len(f.rel) - len(os.path.basename(f.rel))] + os.path.basename(result.output_path)
                diff_parts.append(file_tools.unified_diff(old, data, f.rel, new_rel))
            if collect and data is not None:
                outputs.texts[result.output_path] = data
        except OSError as exc:
            cause = exc.strerror or str(exc)
            written[-1] = replace(result, status="failed", error=f"cannot write output: {cause}",
                                  diagnostics=[*result.diagnostics,
                                               diagnostics.make("MU0009", result.path, 1, 1, origin="writer", cause=cause)])
    outputs.diff = "".join(diff_parts)
    return written, outputs


def _write_out(f: Found, result: FileResult, data: bytes | None, out_dir: str, renamed: dict[str, str]) -> None:
    if f.kind in ("missing", "special") or (result.status == "failed" and data is None and f.symlink is None):
        return
    dst = os.path.join(out_dir, *result.output_path.split("/"))
    if f.symlink is not None:
        if link_stays_inside(f):
            file_tools.copy_link(renames.link_text_in_port(f, renamed), dst)
        return
    writers.write_into(out_dir, result.output_path, data, f.abspath)
