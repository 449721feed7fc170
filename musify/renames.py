"""The file-rename decision (`.cu` -> `.mu`, `.cuh` -> `.muh`), made once, before any file is
migrated, so that `-o`, `--in-place` and `check` agree and includes are rewritten only for files
that really are renamed.

A file keeps its name when it is binary (a NUL byte in its first 8 KB and no UTF-16/32 byte-order
mark: it is copied, not migrated) or when the new name is taken (MU0011). An empty file is a
source file like any other and is renamed. During an in-place run that finishes an interrupted
one, a target listed in the journal is that run's own and does not count as taken.
"""

from __future__ import annotations

import os
import posixpath
import sys
import threading
from dataclasses import replace

from musify import diagnostics, readahead
from musify.discover import READ_FLAGS, Found, join_rel, printable
from musify.frontend import compiled
from musify.records import FileResult
from musify.textcodec import wide_codec

SNIFF = 8192  # the same window the runner uses to call a file binary (and `_cport.probe`)
# `keep_names`'s look-ups in one call (musify/_cport.c), or None: `target_taken` and `keeps_name`
_NATIVE = compiled.load("_cport", "musify") if os.name == "posix" else None


def keeps_name(f: Found, abspath: str = "") -> bool:
    """True for a binary file (copied under its own name in every mode). Read by the file's
    descriptor (three system calls, not the six of a buffered file), without blocking: a FIFO
    that replaced the file after it was listed is not waited on (the runner reports it).
    `abspath`: the file's path when the caller has it."""
    try:
        fd = os.open(abspath or f.abspath, READ_FLAGS)
        try:
            head = os.read(fd, SNIFF)
        finally:
            os.close(fd)
    except OSError:
        return False  # the runner reports why it cannot be read
    return b"\0" in head and wide_codec(head) is None


def target_taken(f: Found, target: str, existing: set[tuple[str, str]]) -> bool:
    """Is the new name already someone else's file?"""
    return _taken(f, target, existing)


def _taken(f: Found, target: str, existing: set[tuple[str, str]], unlisted: dict[str, set[str]] | None = None) -> bool:
    known = _taken_as_listed(f, target, existing, _session(), unlisted)
    return known if known is not None else os.path.lexists(join_rel(f.root, target))


def _session():
    """The in-place session this run finishes, or None."""
    inplace = sys.modules.get("musify.inplace")  # no in-place session without it (not imported otherwise)
    return inplace.active() if inplace is not None else None


def _taken_as_listed(f: Found, target: str, existing: set[tuple[str, str]], sess,
                     unlisted: dict[str, set[str]] | None = None) -> bool | None:
    """What `target_taken` knows without asking the file system: not taken when the in-place run
    it finishes made it, taken when discovery listed it; with `unlisted` (`Discovery.unlisted`:
    the rest of each walked folder's listing), taken or not as that listing says where the file
    was listed by a walk of its root (the new name is in the file's own folder, listed whole);
    None: look."""
    if sess is not None and sess.own(f.root, f.rel, target):
        return False
    if (f.root, target) in existing:
        return True
    seen = unlisted.get(f.root) if unlisted else None
    return None if seen is None else target in seen


def keep_names(items: list[tuple[Found, str, str]], existing: set[tuple[str, str]],
               unlisted: dict[str, set[str]] | None = None) -> list[bool]:
    """For each (file, its new relpath, its path) whether the file keeps its name: its new name
    is taken or it is binary (`target_taken`, then `keeps_name`, as for one file). `NameProbe`
    asked by this thread alone."""
    probe = NameProbe(items, existing, unlisted)
    probe.run()
    return probe.keeps()


class NameProbe:
    """`keep_names`' look-ups (an lstat of each new name, the first 8 KB of each file), made by
    whichever threads call `run`: the run's planning starts it in a thread while it loads the
    rules, then helps (`api.beside`), so both cores make the system calls once the rules are in.
    Where it is built they are made by the compiled `_cport.Probe` (through `os`, one call at a
    time, they were about 15 us a file of the parent's serial part of a run, of which the system
    calls are under half), whose threads share the items; else the reference runs in the first
    thread to ask. With `unlisted` (the discovery's), a new name in a walked folder is answered
    by its listing: the lstat of a name that is not there was about 40% of the probe. (A name
    made in the milliseconds between the listing and this look is not seen, as one made just
    after it.)"""

    def __init__(self, items: list[tuple[Found, str, str]], existing: set[tuple[str, str]],
                 unlisted: dict[str, set[str]] | None = None) -> None:
        self.items, self.existing, self.unlisted = items, existing, unlisted
        self._answer: list[bool] | None = None
        if _NATIVE is None:
            self._claim = threading.Lock()  # the reference is computed once, by the first thread to ask
            return
        sess = _session()
        self._known = [_taken_as_listed(f, target, existing, sess, unlisted) for f, target, _ in items]
        self._asked = [(None if taken is False else join_rel(f.root, target), path)
                       for (f, target, path), taken in zip(items, self._known) if taken is not True]
        # the files it reads whole are kept for the read-ahead (within this many bytes)
        self._budget = readahead.offer_budget()
        self._probe = _NATIVE.Probe(self._asked, self._budget)

    def run(self) -> None:
        """Answer what no thread has taken yet; any number of threads may call this at once."""
        if _NATIVE is not None:
            self._probe.run()
        elif self._claim.acquire(blocking=False):
            self._answer = [_taken(f, target, self.existing, self.unlisted) or keeps_name(f, path)
                            for f, target, path in self.items]

    def keeps(self) -> list[bool]:
        """The answers, in the items' order: once every `run` has returned."""
        if _NATIVE is None:
            assert self._answer is not None, "NameProbe.keeps() before run()"
            return self._answer
        # the reads as views of the probe's own copy: each is copied into bytes only as the
        # read-ahead hands its file over (a copy of them all here was 8 MB and 9 ms of the run's
        # serial start on the replicated corpus)
        got = self._probe.result(views=True)
        if self._budget:
            answers, reads = got
            readahead.offer({path: read for (_, path), read in zip(self._asked, reads) if read is not None})
        else:
            answers = got
        items = self.items
        if len(answers) == len(items) and 3 not in answers:  # every file asked, every one answered
            return [code != 0 for code in answers]
        codes = iter(answers)
        out = []
        for (f, target, path), taken in zip(items, self._known):
            if taken is True:
                out.append(True)
                continue
            code = next(codes)
            if code == 3:  # a path the system cannot be asked about: the reference answers
                out.append((taken is None and target_taken(f, target, self.existing)) or keeps_name(f, path))
            else:
                out.append(code != 0)
        return out


def report_collisions(plan, files: list[FileResult], renames: dict[str, str], rename_files: bool) -> list[FileResult]:
    """The results, with MU0011 (an error) on each file that keeps its old name because the new
    one is taken."""
    if not rename_files:
        return files
    out = []
    ends = tuple(renames)
    for (f, job), result in zip(plan, files):
        # the cheap tests first: most files either have another extension or were renamed (a
        # renamed file's output path ends in another extension: its name is not the old one)
        if job is None or not f.rel.endswith(ends) or not job.output_rel.endswith(ends) \
                or result.status in ("skipped", "failed") \
                or job.output_rel.rsplit("/", 1)[-1] != f.rel.rsplit("/", 1)[-1]:
            out.append(result)
            continue
        stem, ext = posixpath.splitext(f.rel)
        if ext in renames:
            target = posixpath.basename(stem + renames[ext])
            clash = diagnostics.make("MU0011", result.path, 1, 1, origin="plan", target=printable(target))
            result = replace(result, diagnostics=[*result.diagnostics, clash])
        out.append(result)
    return out


def renamed_paths(plan, files: list[FileResult]) -> dict[str, str]:
    """Real path of each file renamed by this run -> its new basename (for links that name it)."""
    out = {}
    for (f, job), result in zip(plan, files):
        if job is not None and result.status not in ("failed", "skipped"):
            new = posixpath.basename(result.output_path)
            if new != posixpath.basename(f.rel):
                out[os.path.realpath(f.abspath)] = new
    return out


def link_names(f: Found) -> str:
    """The file a symbolic link names directly: its directories resolved, its last component
    not (a link to a link is retargeted hop by hop, each hop by its own link)."""
    text = f.symlink or ""
    where = os.path.join(os.path.dirname(f.abspath), text)
    return os.path.join(os.path.realpath(os.path.dirname(where)), os.path.basename(where))


def link_text_in_port(f: Found, renamed: dict[str, str]) -> str:
    """A symbolic link's text in the output tree: retargeted when it names a renamed file."""
    new = renamed.get(link_names(f))
    if new is None or f.symlink is None:
        return f.symlink or ""
    from musify.file_tools import retarget_link

    return retarget_link(f.symlink, os.path.basename(link_names(f)), new) or f.symlink
