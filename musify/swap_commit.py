"""The in-place run's staged-swap commit: when it applies, and the order of its steps.

musify/swap.py is the mechanism (mirror, exchange, taking the old tree apart); this module is
the policy, built on the checks of musify/inplace.py:

1. decide: the run renames files, one input root holds every change, no file-by-file run is
   being finished, and S (the deepest directory holding every changed file and every retargeted
   link) may be swapped (swap.blocker); else the caller commits file by file, noted as MU0020;
2. journal: S, the stage, the marker and the originals' stamps, written durably;
3. stage: made with its marker, then asked whether renameat2 exchanges work on its file system
   (`swap.probe_exchange`, inside the stage so that a kill there leaves nothing the journal does
   not name; where they do not, the stage goes and the caller commits file by file, MU0020);
   the mirror of S, with every port under its final name, then one flush;
4. last check: each original again (size, mtime, ctime, inode); a changed one is put back in the
   mirror as it is now (MU0014) and every rename that would then dangle is withheld (MU0016);
   names removed from S since it was listed are removed from the mirror;
5. exchange (renameat2 RENAME_EXCHANGE), fsync of S's parent;
6. the old tree is taken apart; the journal, then the marker, go.
"""

from __future__ import annotations

import os

from musify import file_tools, journal, swap
from musify.discover import printable
from musify.inplace import Session, _cascade, _check, _diag, _Item, _linked, _rel
from musify.records import FileResult


def commit(sess: Session | None, items: list[_Item], retargets: list, planned: dict[str, str],
           files: list[FileResult], plan) -> bool:
    """Commit the run's changes by a staged swap; False (and nothing changed) where it does not
    apply, for the caller to commit file by file."""
    todo = [it for it in items if it.state == "todo"]
    renamed = [it for it in todo if it.renamed]
    if not renamed:
        return False  # each file's replacement is atomic on its own: no both-names problem
    reason, lock = _blocker(sess, todo, retargets)
    s = ""
    if reason is None:
        s = swap.scope([it.src for it in todo] + [f.abspath for f, _r, _it, _new in retargets])
        reason = swap.blocker(s)
    if reason is None and lock is not None:
        reason = _swap(lock, s, items, todo, retargets, planned, files, plan)
    if reason is not None:
        _diag(renamed[0].result, "MU0020", cause=reason)
        return False
    return True


def _blocker(sess: Session | None, todo: list[_Item], retargets: list) -> tuple[str | None, journal.RootLock | None]:
    if sess is None:
        return "no lock is held on the tree", None
    roots = {it.found.root for it in todo} | {f.root for f, _r, _it, _new in retargets}
    if len(roots) != 1:
        return "the changes span several input roots", None
    lock = sess.locks.get(next(iter(roots)))
    if lock is None:
        return "no lock is held on the tree", None
    if lock.pairs:
        return "an interrupted file-by-file run is being finished", None
    return None, lock


def _swap(lock: journal.RootLock, s: str, items: list[_Item], todo: list[_Item], retargets: list,
          planned: dict[str, str], files: list[FileResult], plan) -> str | None:
    """Steps 2-6; returns why it fell back (the tree then holds exactly what it held before)."""
    root = lock.root
    stage_path = swap.new_name(os.path.dirname(s))
    marker = f".musify-swap_{os.urandom(6).hex()}.tmp"
    originals = {_rel(s, it.src): [it.found.stamp[0], it.found.stamp[1], it.found.stamp[3]]  # type: ignore[index]
                 for it in todo}
    link_texts = {_rel(s, f.abspath): f.symlink for f, _r, _it, _new in retargets}
    journal.write(lock, [(it.found.rel, _rel(root, it.dst)) for it in todo if it.renamed],
                  [it.found.rel for it in todo if it.data is not None], [f.rel for f, *_ in retargets],
                  swap={"dir": _rel(root, s), "stage": os.path.basename(stage_path), "marker": marker,
                        "originals": originals, "links": link_texts})
    try:
        st = swap.begin(s, stage_path, marker)
        swap.probe_exchange(st)
        swap.build(st, {it.src: (it.data, it.dst) for it in todo}, {f.abspath: new for f, _r, _it, new in retargets})
        _last_check(st, items, todo, retargets, planned, files, plan)
        swap.prune(st)
        swap.flush(st)
    except (swap.Unsafe, OSError) as exc:
        swap.discard_stage(stage_path)
        return str(exc) if isinstance(exc, swap.Unsafe) else f"cannot build the staged tree: {exc.strerror or exc}"
    try:
        swap.exchange(st.path, s)
    except OSError as exc:
        swap.discard_stage(stage_path)
        return f"renameat2(RENAME_EXCHANGE) failed: {exc.strerror or exc}"
    file_tools.sync_dirs([os.path.dirname(s)])
    for it in todo:
        if it.state == "todo":
            it.state = "done"
    for _f, result, it, new in retargets:
        if it.state == "done":
            _linked(result, new)
    _report(swap.take_apart(s, stage_path, originals, link_texts), s, stage_path, todo, files)
    journal.finish(lock, [])
    swap.drop_marker(s, marker)
    return None


def _last_check(st: swap.Stage, items: list[_Item], todo: list[_Item], retargets: list,
                planned: dict[str, str], files: list[FileResult], plan) -> None:
    """Step 4: what changed since it was read goes back into the mirror as the user left it,
    and so does every port or rename that would then leave an include dangling."""
    staged = list(todo)
    while staged:
        for it in staged:
            _check(it, None, first=False)
        _cascade(items, planned, files, plan)
        gone = [it for it in staged if it.state != "todo"]
        if not gone:
            return
        for it in gone:
            swap.unport(st, it.src, it.dst)
        for f, _r, it, _new in retargets:
            if it in gone:
                swap.unport(st, f.abspath, f.abspath)
        staged = [it for it in staged if it.state == "todo"]


def _report(left: swap.Leftovers, s: str, stage_path: str, todo: list[_Item], files: list[FileResult]) -> None:
    """Errors for what someone else changed in S while the run committed (nothing is lost)."""
    by_src = {it.src: it for it in todo}
    for path in left.moved:
        it = by_src.get(path)
        if it is not None:  # edited after the last check: the user's version is kept, beside the port
            it.result.status = "failed"
            it.result.error = "changed while the run committed"
            _diag(it.result, "MU0014", cause=f"changed while the run committed; your version is kept as "
                                             f"{printable(os.path.basename(path))} beside its port")
    for path in left.kept:
        it = by_src.get(os.path.join(s, os.path.relpath(path, stage_path)))
        result = it.result if it is not None else (todo[0].result if todo else files[0])
        _diag(result, "MU0021", kept=printable(path))
