"""`-j N`: migrate files in worker processes, and with `-o` let the workers write the ports too.

What a `-j2` run can gain is bounded by what the parent does alone (Amdahl), so the parent is
kept to the work that needs every file: discovery, planning, the run-level finalisers and the
record. Everything per file happens in the workers:
  * workers are forked (where the platform can) after the parent has imported the engine, the
    front ends and passes the files need, and loaded the RuleSet, so they start without
    importing or loading anything; the parent's heap
    is frozen out of the cyclic collector first (`gc.freeze`), so a worker's collections do not
    touch, and so copy, the pages it shares with the parent;
  * files go out in chunks (a task per file costs a round trip through the queues);
  * with `-o` each worker writes the ports of its own files (creating thousands of files is
    mostly system time: done in the parent it was the largest serial part of a run) and the
    parent only learns whether the write failed;
  * results come back in plan order (`Executor.map`), so nothing the parent does with them, and
    so neither the output tree nor the record, depends on which worker finished first.
With `-j1 -o` there are no workers: the ports are written by one thread beside the migration
(`musify/writer_thread.py`), so the system time of creating them overlaps the next files' work.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import field
from typing import TYPE_CHECKING

from musify import collector, lifeline, readahead, writers
from musify.classes import dataclass
from musify.runner import FileJob, migrate_file_stated, steady
from musify.writer_thread import port_writer

if TYPE_CHECKING:
    from musify.options import Options
    from musify.passes._base import ProjectInfo
    from musify.records import FileResult
    from musify.rules.model import RuleSet


@dataclass(init="fields")  # made once a run: no __init__ compiled at every start-up
class Writes:
    """Where the runner writes each port as soon as it is made (`-o`); `done` is filled with
    index -> None (written, or nothing to write) or the cause of the failed write."""

    out_dir: str
    done: dict[int, str | None] = field(default_factory=dict)


_WORKER: dict = {}
THREAD = os.environ.get("MUSIFY_WRITER_THREAD", "1") != "0"  # -j1 -o: ports written by a thread beside the migration


def _init_worker(options: Options, project: ProjectInfo, out_dir: str | None, keep_bytes: bool = True,
                 parent: int | None = None, results: str | None = None) -> None:
    """Worker set-up. With the fork start method the parent's RuleSet is inherited (no reload);
    elsewhere each worker loads it from the on-disk cache. `parent`: the pid of the process that
    made the pool, where its workers are forked from it (they die with it). `results`: the
    folder the chunks' results go to (`musify/worker_results.py`), or None."""
    if parent is not None:
        lifeline.die_with_parent(parent)
    if "ruleset" not in _WORKER:
        from musify.rules.reverse import load_for

        _WORKER["ruleset"] = load_for(options)
    _WORKER["options"] = options
    _WORKER["project"] = project
    _WORKER["out_dir"] = out_dir
    _WORKER["keep_bytes"] = keep_bytes
    _WORKER["results"] = results


def _work(item: tuple[int, FileJob]) -> tuple[int, FileResult, bytes | None, str | None]:
    i, job = item
    result, data, st = migrate_file_stated(job, _WORKER["ruleset"], _WORKER["options"], _WORKER["project"])
    out_dir = _WORKER["out_dir"]
    failed = write_port(job, result, data, out_dir, st) if out_dir is not None else None
    if not _WORKER["keep_bytes"]:  # nothing reads them (the port is written): not sent through the pipe
        data = None
    return i, result, data, failed


def _work_chunk(items: tuple[tuple[int, FileJob], ...]) -> list[tuple[int, FileResult, bytes | None, str | None]] | str:
    """`_work` for a chunk of jobs, as `Executor.map` would run them, the chunk's files read
    ahead meanwhile by this worker's reader thread (each worker reads only its own files); the
    results, or the file that holds them (`worker_results.hand_over`)."""
    with readahead.reading([job.abspath for _, job in items]), steady(_WORKER["ruleset"], _WORKER["options"]):
        done = [_work(item) for item in items]
    from musify import worker_results  # (imported by the pool's maker: its workers inherit it)

    return worker_results.hand_over(done, _WORKER["results"], items[0][0])


def _chunks(todo: list[tuple[int, FileJob]], size: int) -> Iterator[tuple[tuple[int, FileJob], ...]]:
    for lo in range(0, len(todo), size):
        yield tuple(todo[lo:lo + size])


def _flattened(parts: Iterator[list | str]) -> Iterator:
    """The chunks' results one by one, none kept once yielded (as `Executor.map` hands them),
    each chunk's read from its worker's file where it went to one."""
    from musify import worker_results

    for handed in parts:
        part = worker_results.receive(handed)
        part.reverse()
        while part:
            yield part.pop()


def has_port(result: FileResult, data: bytes | None) -> bool:
    """Whether the output tree gets a file for this result (a failed file without new bytes gets
    none: the result says why)."""
    return not (result.status == "failed" and data is None)


def write_port(job: FileJob, result: FileResult, data: bytes | None, out_dir: str,
               st: os.stat_result | None = None) -> str | None:
    """Write one migrated file's port (or a copy of an unmigrated one) into the output tree;
    None, or the cause when the write failed (reported with the record, like any write). `st`:
    the source's stat as the runner read it (else the source is stat'ed now)."""
    if not has_port(result, data):
        return None
    try:
        if st is not None and data is not None:
            writers.write_stated(out_dir, result.output_path, data, job.abspath, st)
        else:
            writers.write_into(out_dir, result.output_path, data, job.abspath)
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


# how long the workers of a finished (or failed) run may take to leave once told to
CLOSE_GRACE = 5.0


def _close(pool) -> None:
    """Shut the pool down, pending chunks cancelled, and wait for its workers to leave, killing
    any still there after `CLOSE_GRACE`. An idle worker waits for its next chunk holding the task
    queue's lock; killed there (the out-of-memory killer, `kill -9`) once the last result was in,
    it left that lock taken, the other workers never read the note to leave, and the executor's
    own shutdown waited for them forever (tests/hardening/test_kill.py, under load). Every result
    was in by then: the run completes."""
    import time

    # its workers, from the executor's own table while it still has one (`active_children` would
    # also hold processes another part of the program started, not ours to kill)
    workers = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    deadline = time.monotonic() + CLOSE_GRACE
    for p in workers:
        p.join(max(0.0, deadline - time.monotonic()))
    for p in workers:
        if p.is_alive():
            p.kill()
            p.join()
    pool.shutdown(wait=True)  # its thread, free to finish now that no worker is left to wait for


def _preload(kinds: set[str], ruleset: RuleSet) -> None:
    """Import, once in the parent, what the first file of each kind would make every worker
    import (front ends, passes, the syntax library) and derive the scanner's prefixes, so that
    forked workers inherit them."""
    from musify.passes.languages import language_for, scanner_prefixes

    for kind in sorted(kinds):
        language_for(kind)
    scanner_prefixes(ruleset)
    try:
        import tree_sitter  # noqa: F401 -- imported for the workers to inherit
        import tree_sitter_cuda  # noqa: F401
    except ImportError:  # the structural checks say so themselves when a file needs them
        pass


def run_jobs(todo: list[tuple[int, FileJob]], ruleset: RuleSet, options: Options, project: ProjectInfo,
             writes: Writes | None = None, keep_bytes: bool = True) -> Iterator[tuple[int, FileResult, bytes | None]]:
    """(index, result, new bytes) for every job, in `todo`'s order; with `writes`, each port is
    already written when its result is yielded; without `keep_bytes`, workers send no new bytes
    back (None in their place: the caller needs none)."""
    if options.jobs <= 1 or len(todo) < 2:
        # the run's long-lived objects (modules, rules, plan) out of every collection meanwhile
        with collector.frozen(), port_writer(writes if len(todo) > 1 and THREAD else None) as writer, \
                readahead.reading([job.abspath for _, job in todo]), steady(ruleset, options):
            for i, job in todo:
                result, data, st = migrate_file_stated(job, ruleset, options, project)
                if writer is not None:
                    if has_port(result, data):
                        writer.put(i, result.output_path, data, job.abspath, st)
                elif writes is not None:
                    writes.done[i] = write_port(job, result, data, writes.out_dir, st)
                yield i, result, data
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else None
    context = multiprocessing.get_context(method)
    if method == "fork":
        _WORKER["ruleset"] = ruleset  # inherited by the forked workers
        with collector.settled():  # modules and tables: nothing for a young collection to find
            _preload({job.kind for _, job in todo}, ruleset)
    from musify import worker_results  # (only a -j run: its pickle is no import of a -j1 run)

    folder = worker_results.make_folder()
    pool = None
    # the parent's objects as they are now are shared with the workers, untouched
    try:
        with collector.frozen():
            pool = ProcessPoolExecutor(max_workers=options.jobs, mp_context=context, initializer=_init_worker,
                                       initargs=(options, project, writes.out_dir if writes else None, keep_bytes,
                                                 os.getpid() if method == "fork" else None, folder))
            # chunks of at most 64 files: each worker (and the parent, for chunks done early)
            # holds a whole chunk of results and bytes before handing it over
            chunk = max(1, min(64, len(todo) // (options.jobs * 8)))
            arriving = _flattened(pool.map(_work_chunk, _chunks(todo, chunk)))
            # the results are acyclic (a result, its dicts, diagnostics and packed edits): the
            # cyclic collector would only walk them again and again as they come in
            with collector.paused():
                for i, result, data, failed in arriving:
                    if writes is not None:
                        writes.done[i] = failed
                    yield i, result, data
    finally:
        if pool is not None:
            _close(pool)
        _WORKER.clear()
        worker_results.remove_folder(folder)
