"""`--in-place`: replace a user's only copy of a tree without losing or half-renaming anything.

Every run checks first: each file is still the one that was read (size, mtime, ctime, inode); a
changed, vanished or hard-linked file is left alone with an error, and so is every rename that
would leave an include dangling because of it. Then it commits in one of two ways
(docs/reliability.md says when each applies and what each guarantees):

- a **staged swap** (musify/swap.py) when the run renames files: the new state of the smallest
  directory holding every change is built beside it and exchanged with it in one atomic step, so
  no file ever exists under both names;
- **file by file** otherwise (no renames, or the swap is unsafe here, noted as MU0020):
  1. journal: the planned renames, written durably before the first change;
  2. link: every renamed file gets its new name as a second link (old and new name both resolve);
  3. contents: all ports are written to temporary files, flushed in one batch per file system,
     then renamed over their targets (re-checked just before);
  4. symbolic links that named a renamed file are pointed at its new name;
  5. old names: each becomes a link to the port (so no original is left that names an old
     header), then all old names are removed; each directory is fsynced once per step;
  6. the journal is removed.
  A run killed anywhere leaves pairs under both names only as listed in the journal; the next
  in-place run on the tree takes them as its own and finishes them.
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace

from musify import diagnostics, file_tools, journal, swap
from musify.discover import Found, printable
from musify.records import FileResult

_SESSION: list[Session] = []


@dataclass
class Session:
    locks: dict[str, journal.RootLock]
    kept: list[str]  # what finishing a killed run's swap had to keep in its stage (reported)

    def own(self, root: str, rel: str, target: str) -> bool:
        lock = self.locks.get(root)
        return lock is not None and (rel, target) in lock.pairs


def active() -> Session | None:
    return _SESSION[-1] if _SESSION else None


def roots_of(inputs: list[str]) -> list[str]:
    out = set()
    for item in inputs:
        path = os.path.abspath(item)
        out.add(path if os.path.isdir(path) and not os.path.islink(path) else os.path.dirname(path))
    return sorted(out)


@contextlib.contextmanager
def session(inputs: list[str], wait_s: float) -> Iterator[Session]:
    """Hold every input root's lock for the whole run (discovery included)."""
    locks: dict[str, journal.RootLock] = {}
    kept: list[str] = []
    try:
        for root in roots_of(inputs):
            ancestor = journal.interrupted_ancestor(root)
            if ancestor is not None:
                raise journal.TreeBusy(f"{ancestor}: an interrupted --in-place run must be finished first: "
                                       f"run musify migrate --in-place {ancestor}")
            locks[root] = lock = journal.acquire(root, wait_s)
            if lock.swap is not None:
                kept += _resume_swap(lock)
        _SESSION.append(Session(locks, kept))
        yield _SESSION[-1]
    finally:
        if _SESSION and _SESSION[-1].locks is locks:
            _SESSION.pop()
        for lock in locks.values():
            journal.release(lock)


def _resume_swap(lock: journal.RootLock) -> list[str]:
    """Finish a killed run's staged swap before anything else reads the tree."""
    info = lock.swap or {}
    try:
        left = swap.recover(lock.root, info)
    except swap.Undecidable as exc:
        raise journal.TreeBusy(str(exc)) from None
    journal.finish(lock, [])
    swap.drop_marker(os.path.normpath(os.path.join(lock.root, info["dir"])), info["marker"])
    lock.pairs, lock.swap = set(), None
    return left.kept


def clean(owned: list[str]) -> bool:
    """Remove temporary files left by killed runs (only musify's own `.musify-*.tmp`); True when
    one was a second name of another file. A run killed inside `_link_over` leaves such a link to
    the file it was renaming: removing it changes that file's link count and change time, so the
    stamps discovery took are stale and the caller must list the tree again (else the re-check
    takes musify's own clean-up for the user's edit: MU0014, and MU0016 on what it includes)."""
    linked = False
    for path in owned:
        if path.endswith(".tmp"):
            try:
                linked = linked or os.lstat(path).st_nlink > 1
            except OSError:
                continue
            file_tools.discard(path)
    return linked


@dataclass
class _Item:
    found: Found
    result: FileResult
    dst: str  # absolute path after any rename
    data: bytes | None  # new contents; None: same bytes under a new name
    tmp: str | None = None
    state: str = "todo"  # todo | linked | written | done | dropped | unfinished
    src: str = ""  # the original's absolute path (found.abspath, joined once: it is asked often)
    renamed: bool = False

    def __post_init__(self) -> None:
        self.src = self.found.abspath
        self.renamed = self.dst != self.src


def write(plan: list[tuple[Found, object]], files: list[FileResult],
          new_bytes: list[bytes | None]) -> list[FileResult]:
    """Carry out an in-place run's writes (see the module docstring for the order); returns the
    results, those of files the writes touched or refused replaced by updated copies."""
    sess = active()
    items: list[_Item] = []
    planned: dict[str, str] = {}  # every rename the plan announced: old abspath -> new abspath
    links: list[Found] = []
    files = list(files)
    for i, ((f, job), data) in enumerate(zip(plan, new_bytes)):
        if f.symlink is not None:
            links.append(f)
            files[i] = _copy(files[i])
        if job is None:
            continue
        result = files[i]
        dst = os.path.join(os.path.dirname(f.abspath), posixpath.basename(job.output_rel))  # type: ignore[attr-defined]
        if dst != f.abspath:
            planned[f.abspath] = dst
        if result.status in ("failed", "skipped"):
            continue
        dst = os.path.join(os.path.dirname(f.abspath), posixpath.basename(result.output_path))
        content = data if (data is not None and result.status == "migrated" and result.edit_count) else None
        if dst == f.abspath and content is None:
            continue
        files[i] = result = _copy(result)
        items.append(_Item(f, result, dst, content))
    for it in items:
        _check(it, sess, first=True)
    _cascade(items, planned, files, plan)
    retargets = _link_targets(links, items, files, plan)
    if sess is not None and sess.kept and files:
        files[0] = _copy(files[0])
        for path in sess.kept:
            _diag(files[0], "MU0021", kept=printable(path))
    from musify import swap_commit

    if not swap_commit.commit(sess, items, retargets, planned, files, plan):
        _commit_file_by_file(sess, items, links, retargets, planned, files, plan)
    if sess is not None:
        for root, lock in sess.locks.items():
            pairs = {(it.found.rel, _rel(root, it.dst)) for it in items
                     if it.found.root == root and it.renamed and it.state == "unfinished"}
            pairs |= {p for p in lock.pairs if _both_exist(root, *p)}
            journal.finish(lock, sorted(pairs))
    return files


def _commit_file_by_file(sess: Session | None, items: list[_Item], links: list[Found], retargets,
                         planned: dict[str, str], files: list[FileResult], plan) -> None:
    """Steps 1-5 of the file-by-file commit (module docstring)."""
    by_root: dict[str, list[_Item]] = {}
    for it in items:
        if it.state == "todo":
            by_root.setdefault(it.found.root, []).append(it)
    if sess is not None:
        for root, lock in sess.locks.items():
            mine = by_root.get(root, [])
            if not mine and not lock.pairs:
                continue  # nothing to change under this root
            journal.write(lock, [(it.found.rel, _rel(root, it.dst)) for it in mine if it.renamed] + sorted(lock.pairs),
                          [it.found.rel for it in mine if it.data is not None], [f.rel for f in links if f.root == root])
    _link_new_names(items, sess)
    _cascade(items, planned, files, plan)
    _write_contents(items)
    for f, result, it, new in retargets:
        if it.state in ("linked", "written"):
            _point_link(f, result, new)
    _retire_old_names(items)


def _diag(result: FileResult, diag_id: str, **args) -> None:
    result.diagnostics.append(diagnostics.make(diag_id, result.path, 1, 1, origin="writer:in-place", **args))


def _copy(result: FileResult) -> FileResult:
    """A result of our own to update (the runner's stays as it returned it)."""
    return replace(result, diagnostics=list(result.diagnostics))


def _rel(root: str, path: str) -> str:
    if path.startswith(root) and path[len(root):len(root) + 1] == os.sep:  # the common case, cheaply
        return path[len(root) + 1:].replace(os.sep, "/")
    return os.path.relpath(path, root).replace(os.sep, "/")


def _both_exist(root: str, old: str, new: str) -> bool:
    return all(os.path.lexists(os.path.join(root, *p.split("/"))) for p in (old, new))


def _fail(it: _Item, diag_id: str, cause: str, state: str = "dropped", **args) -> None:
    it.state = state
    it.result.status = "failed"
    it.result.error = cause
    it.result.output_path = posixpath.join(posixpath.dirname(it.result.output_path), posixpath.basename(it.found.rel))
    _diag(it.result, diag_id, cause=cause, **args)


def _same(it: _Item, st: os.stat_result, with_ctime: bool) -> bool:
    size, mtime, ctime, ino, dev, _nlink = it.found.stamp or (None,) * 6
    now = (st.st_size, st.st_mtime_ns, st.st_ctime_ns if with_ctime else ctime, st.st_ino, st.st_dev)
    return now == (size, mtime, ctime, ino, dev)


def _check(it: _Item, sess: Session | None, first: bool) -> bool:
    """Is the file still the one that was read? Fails the item (left as the user's) if not."""
    if it.state in ("dropped", "unfinished"):
        return False
    try:
        st = os.lstat(it.src)
    except FileNotFoundError:
        it.state = "dropped"
        it.result.status = "failed"
        it.result.error = "file disappeared during the run"
        _diag(it.result, "MU0008", cause="removed by someone else")
        return False
    if not _same(it, st, with_ctime=first or not it.renamed):  # step 3's link changes an old name's ctime
        _fail(it, "MU0014", "changed since it was read; not overwritten, your version is kept")
        return False
    if not first:
        return True
    own = sess is not None and sess.own(it.found.root, it.found.rel, _rel(it.found.root, it.dst))
    links = st.st_nlink - (1 if own and _same_inode(it.src, it.dst) else 0)
    if links > 1:
        _fail(it, "MU0015", f"has {links} hard links; replacing it would split them", links=links)
        return False
    if it.renamed and os.path.lexists(it.dst) and not own:
        _fail(it, "MU0011", f"{os.path.basename(it.dst)} appeared during the run", target=printable(os.path.basename(it.dst)))
        return False
    return True


def _same_inode(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


_INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*[<"]([^>"\n]*)[>"]', re.MULTILINE)


def _include_names(data: bytes) -> set[str]:
    return {posixpath.basename(m.group(1).decode("utf-8", "surrogateescape")) for m in _INCLUDE.finditer(data)}


def _cascade(items: list[_Item], planned: dict[str, str], files: list[FileResult], plan) -> None:
    """Drop what a missing rename would break: a port that includes the new name of a file that
    is not renamed after all, and the rename of a header that a file left unwritten includes.
    Names are compared by their last component (conservative: a same-named header elsewhere
    also counts)."""
    while True:
        going = {it.src: it for it in items if it.renamed and it.state not in ("dropped",)}
        missing_new = {os.path.basename(dst) for src, dst in planned.items() if src not in going}
        stale_old: set[str] = set()
        written = {it.src for it in items if it.state != "dropped"}
        for (f, job), result in zip(plan, files):
            if job is not None and result.status == "failed" and f.abspath not in written:
                stale_old |= _current_includes(f.abspath)
        changed = False
        for it in items:
            if it.state not in ("todo", "linked"):
                continue
            was_linked = it.state == "linked"
            if it.data is not None and missing_new and missing_new & _include_names(it.data):
                name = min(missing_new & _include_names(it.data))
                _fail(it, "MU0016", f"its port includes {name}, which could not be renamed", name=printable(name))
                changed = True
            elif it.renamed and os.path.basename(it.src) in stale_old:
                _fail(it, "MU0016", "a file that could not be migrated includes it by this name",
                      name=printable(os.path.basename(it.src)))
                changed = True
            if was_linked and it.state == "dropped" and _same_inode(it.src, it.dst):
                os.unlink(it.dst)  # the second name made in step 3, for a rename now dropped
        if not changed:
            return


def _current_includes(path: str) -> set[str]:
    try:
        with open(path, "rb") as fh:
            return _include_names(fh.read(1 << 22))
    except OSError:
        return set()


def _tmp_name(directory: str) -> str:
    return os.path.join(directory, f".musify-{os.getpid()}_{os.urandom(6).hex()}.tmp")


def _link_over(existing: str, name: str) -> None:
    """Make `name` a hard link to `existing`, atomically replacing whatever `name` was."""
    if _same_inode(existing, name):
        return  # already so (a resumed run); renaming a link onto itself would do nothing
    tmp = _tmp_name(os.path.dirname(name))
    try:
        os.link(existing, tmp)
        os.replace(tmp, name)
    except BaseException:
        file_tools.discard(tmp)
        raise


def _link_new_names(items: list[_Item], sess: Session | None) -> None:
    """Step 2: the new name appears as a second link to the original."""
    dirs = []
    for it in items:
        if it.state != "todo" or not it.renamed or not _check(it, sess, first=False):
            continue
        try:
            _link_over(it.src, it.dst)
        except OSError as exc:
            _fail(it, "MU0009", f"cannot create {printable(os.path.basename(it.dst))}: {exc.strerror or exc}")
            continue
        it.state = "linked"
        dirs.append(os.path.dirname(it.dst))
    file_tools.sync_dirs(dirs)


def _write_contents(items: list[_Item]) -> None:
    """Step 3: temporary files, one flush per file system, re-check, rename over the target."""
    todo = [it for it in items if it.data is not None and it.state in ("todo", "linked")]
    for it in todo:
        try:
            it.tmp = file_tools.write_temp(it.dst, it.data, mode_from=it.src)
        except OSError as exc:
            _fail(it, "MU0009", f"cannot write: {exc.strerror or exc}", "unfinished" if it.renamed else "dropped")
    todo = [it for it in todo if it.tmp is not None and it.state in ("todo", "linked")]
    file_tools.sync_files([it.tmp for it in todo if it.tmp])
    dirs = []
    for it in todo:
        assert it.tmp is not None
        if not _check(it, None, first=False):
            file_tools.discard(it.tmp)
            if it.renamed:
                it.state = "unfinished"
            continue
        os.replace(it.tmp, it.dst)
        it.state = "written"
        dirs.append(os.path.dirname(it.dst))
    file_tools.sync_dirs(dirs)


def _link_targets(links: list[Found], items: list[_Item], files: list[FileResult], plan) -> list:
    """The symbolic links naming a file this run renames, as (link, its result, the renamed
    item, the link's new text); a link that cannot be retargeted is reported (MU0018)."""
    from musify.renames import link_names

    if not links:
        return []
    moved = {os.path.realpath(it.src): it for it in items if it.renamed and it.state == "todo"}
    results = {id(f): r for (f, _job), r in zip(plan, files)}
    out = []
    for f in links:
        it = moved.get(link_names(f))
        if it is None:
            continue
        result = results[id(f)]
        new = file_tools.retarget_link(f.symlink or "", os.path.basename(it.src), os.path.basename(it.dst))
        if new is None:
            _diag(result, "MU0018", target=printable(f.symlink or ""), new=printable(os.path.basename(it.dst)))
            continue
        out.append((f, result, it, new))
    return out


def _point_link(f: Found, result: FileResult, new: str) -> None:
    """Step 4: a symbolic link naming a renamed file follows it."""
    try:
        file_tools.replace_link(f.abspath, new)
    except OSError as exc:
        _diag(result, "MU0009", cause=exc.strerror or str(exc))
        return
    _linked(result, new)


def _linked(result: FileResult, new: str) -> None:
    result.status = "migrated"
    _diag(result, "MU0017", target=printable(new))


def _retire_old_names(items: list[_Item]) -> None:
    """Step 5: each old name becomes a link to the port, then all old names go."""
    going = []
    dirs = []
    for it in items:
        if not it.renamed or it.state not in ("linked", "written"):
            continue
        if not _check(it, None, first=False):  # edited by the user since step 3: keep both
            it.state = "unfinished"
            continue
        try:
            _link_over(it.dst, it.src)
        except OSError as exc:
            _fail(it, "MU0009", f"cannot retire the old name: {exc.strerror or exc}", "unfinished")
            continue
        going.append(it)
        dirs.append(os.path.dirname(it.src))
    file_tools.sync_dirs(dirs)
    for it in going:
        os.unlink(it.src)
        it.state = "done"
    file_tools.sync_dirs(dirs)
