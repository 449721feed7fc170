"""The staged swap: commit an in-place run's renames and rewrites in one atomic step.

Renaming a header and rewriting its includers are separate files; no sequence of per-file
operations can flip both at once, so the file-by-file method (musify/inplace.py) must let a file
exist under both names for a moment. A directory can flip as a whole: the new state of the
smallest directory S holding every change is built beside it (`.musify-stage-<id>` in S's
parent: directories recreated with their mode and owner, unchanged entries hard-linked, ports
written new), then Linux `renameat2(RENAME_EXCHANGE)` swaps the two paths in one step. The old
tree, now at the stage path, is then taken apart name by name: only entries known to be musify's
links or the originals it replaced are removed; anything else (created or changed by someone
during the run) is moved into the new tree, or kept and reported.

A marker file made in the stage before anything else tells a later run which side of the exchange
a killed run stopped on: under S, the exchange happened (finish the clean-up); under the stage,
it did not (remove the stage; S is untouched). docs/reliability.md states the guarantee.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import sys
from dataclasses import dataclass, field

from musify import file_tools
from musify.discover import is_owned_name

RENAME_EXCHANGE = 2
AT_FDCWD = -100
VCS_DIRS = (".git", ".hg", ".svn")
STAGE_PREFIX = ".musify-stage-"


class Unsafe(Exception):
    """The swap cannot be done safely here; the caller commits file by file instead."""


class Undecidable(RuntimeError):
    """A killed swap whose side of the exchange cannot be told (its marker is gone)."""


_RENAMEAT2: list = []


def exchange(a: str, b: str) -> None:
    """Swap the paths `a` and `b` atomically (both stay; each names the other's inode)."""
    if not _RENAMEAT2:
        fn = None
        if sys.platform.startswith("linux"):
            import ctypes

            fn = getattr(ctypes.CDLL(None, use_errno=True), "renameat2", None)
            if fn is not None:
                fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
        _RENAMEAT2.append(fn)
    fn = _RENAMEAT2[0]
    if fn is None:
        raise OSError(errno.ENOSYS, "renameat2 is not available on this system")
    if fn(AT_FDCWD, os.fsencode(a), AT_FDCWD, os.fsencode(b), RENAME_EXCHANGE) != 0:
        import ctypes

        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))


def scope(paths: list[str]) -> str:
    """S: the deepest directory holding every path (each a file's absolute path)."""
    return os.path.commonpath([os.path.dirname(p) for p in paths])


def blocker(s: str) -> str | None:
    """Why S cannot be swapped (checked before anything is written), or None. What can only be
    seen while walking S (a version-control directory, a mount, a refused link) raises Unsafe
    from build()."""
    parent = os.path.dirname(s)
    if parent == s:
        return "the directory to swap is the file system root"
    try:
        cwd = os.path.realpath(os.getcwd())
    except OSError:
        cwd = ""
    real = os.path.realpath(s)
    if cwd == real or cwd.startswith(real + os.sep):
        return f"{s} is the current directory or one of its ancestors"
    if os.path.ismount(s) or os.lstat(s).st_dev != os.lstat(parent).st_dev:
        return f"{s} is a mount point"
    if not os.access(parent, os.W_OK | os.X_OK):
        return f"{parent} is not writable"
    try:
        _walk_checked(s)
    except Unsafe as exc:
        return str(exc)
    return None  # (whether the exchange works here is asked inside the stage: `probe_exchange`)


def _walk_checked(s: str) -> None:
    """Look through S for what makes the swap unsafe, before anything is written (build()
    checks again as it goes: the tree may change in between)."""
    dev = os.lstat(s).st_dev
    todo = [s]
    while todo:
        d = todo.pop()
        _check_dir(d)
        with os.scandir(d) as it:
            for e in it:
                if _check_entry(e, dev):
                    todo.append(e.path)


def _check_dir(d: str) -> None:
    if not os.access(d, os.W_OK | os.X_OK):
        raise Unsafe(f"{d} is not writable (its old entries could not be removed after the exchange)")


def _check_entry(e: os.DirEntry, dev: int) -> bool:
    """Raise Unsafe for a version-control directory or a mount point; True for a directory."""
    if e.name in VCS_DIRS:
        raise Unsafe(f"{e.path} is a version-control directory (a running commit could be lost)")
    if not e.is_dir(follow_symlinks=False):
        return False
    if e.stat(follow_symlinks=False).st_dev != dev:
        raise Unsafe(f"{e.path} is a mount point")
    return True


def new_name(parent: str) -> str:
    return os.path.join(parent, STAGE_PREFIX + os.urandom(6).hex())


@dataclass
class Stage:
    s: str  # the directory swapped
    path: str  # the mirror built beside it
    marker: str  # basename of the marker file at the mirror's top
    listing: dict[str, dict[str, int]] = field(default_factory=dict)  # S's directories -> name: inode seen
    made: list[str] = field(default_factory=list)  # files written new (ports)

    def mirror(self, path: str) -> str:
        """Where `path` (under S) lives in the mirror."""
        return self.path + path[len(self.s):]


def begin(s: str, stage_path: str, marker: str) -> Stage:
    """Create the stage and its marker (before any other entry: a stage without a marker is
    one a killed run had only just made, and is empty)."""
    os.mkdir(stage_path, 0o700)
    st = Stage(s, stage_path, marker)
    os.close(os.open(os.path.join(stage_path, marker), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    return st


def probe_exchange(st: Stage) -> None:
    """Raise Unsafe where renameat2(RENAME_EXCHANGE) does not work on the stage's file system.
    Asked with two folders made inside the stage, just after its marker, not beside S: a run
    killed while they exist leaves them in a stage its journal names, which the next run removes
    (`recover`). Probed beside S, before the journal named anything, a kill there left two empty
    `.musify-stage-*` folders that no later run knew were musify's (seen once in about eight runs
    of tests/hardening/test_kill.py)."""
    probe_a, probe_b = (os.path.join(st.path, f"{st.marker}.probe-{side}") for side in "ab")
    try:
        os.mkdir(probe_a, 0o700)
        os.mkdir(probe_b, 0o700)
        exchange(probe_a, probe_b)
    except OSError as exc:
        raise Unsafe(f"renameat2(RENAME_EXCHANGE) is not supported here ({exc.strerror or exc})") from None
    finally:
        for p in (probe_a, probe_b):
            try:
                os.rmdir(p)
            except OSError:
                pass


def build(st: Stage, ports: dict[str, tuple[bytes | None, str]], links: dict[str, str]) -> None:
    """Fill the mirror: `ports` maps an original's path to (new bytes or None for the same
    inode, path under its new name); `links` maps a symbolic link's path to its new text; every
    other entry is hard-linked (same inode: content, mode, owner and links kept)."""
    targets = {dst for _data, dst in ports.values()}
    dev = os.lstat(st.s).st_dev
    dirs = [(st.s, st.path)]
    todo = [st.s]
    while todo:
        d = todo.pop()
        _check_dir(d)
        with os.scandir(d) as it:
            entries = list(it)
        st.listing[d] = {e.name: e.inode() for e in entries}
        for e in entries:
            src = e.path
            dst = st.mirror(src)
            if _check_entry(e, dev):
                os.mkdir(dst, 0o700)
                dirs.append((src, dst))
                todo.append(src)
            elif is_owned_name(e.name) and e.name.endswith(".tmp"):
                continue  # a killed run's temporary file: not carried over (clean-up removes it)
            elif src in ports:
                data, new = ports[src]
                _place(src, st.mirror(new), data)
                if data is not None:
                    st.made.append(st.mirror(new))
            elif src in targets:
                raise Unsafe(f"{src} appeared during the run")
            elif src in links:
                os.symlink(links[src], dst)
            else:
                _link(src, dst)
    for src, dst in reversed(dirs):  # deepest first; modes last, so a 0555 directory can be filled
        copy_dir_attributes(src, dst)


def _link(src: str, dst: str) -> None:
    try:
        os.link(src, dst, follow_symlinks=False)
    except OSError as exc:
        if exc.errno in (errno.EPERM, errno.EXDEV, errno.EMLINK, errno.EACCES, errno.ENOTSUP):
            raise Unsafe(f"cannot hard-link {src}: {exc.strerror}") from None
        raise


def _place(src: str, dst: str, data: bytes | None) -> None:
    if data is None:
        _link(src, dst)
        return
    fd = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    file_tools.keep_attributes(dst, src)


def copy_dir_attributes(src: str, dst: str) -> None:
    """Owner (where permitted), mode and extended attributes (ACLs included) of directory `src`
    onto `dst`. An extended attribute that cannot be copied makes the swap unsafe; the SELinux
    label is left to policy, as for any new directory."""
    file_tools.own_like(dst, os.lstat(src))
    if hasattr(os, "listxattr"):
        try:
            names = os.listxattr(src, follow_symlinks=False)
        except OSError:
            names = []
        for name in names:
            if name == "security.selinux":
                continue  # the new directory is labelled by policy, as any mkdir there would be
            try:
                os.setxattr(dst, name, os.getxattr(src, name, follow_symlinks=False), follow_symlinks=False)
            except OSError as exc:
                raise Unsafe(f"cannot copy extended attribute {name} of {src}: {exc.strerror}") from None


def unport(st: Stage, src: str, dst: str) -> None:
    """Undo one file's change in the mirror (withheld at the last check): its new entry goes,
    the original (as it is now) is linked back under its own name."""
    for path in {dst, src}:
        try:
            os.unlink(st.mirror(path))
        except FileNotFoundError:
            pass
    if os.path.lexists(src):
        _link(src, st.mirror(src))


def prune(st: Stage) -> None:
    """Bring the mirror up to date with S's listings, just before the exchange: what was removed
    from S since it was listed goes (the exchange would bring it back), a file or link added or
    replaced (an editor's save by rename) is linked in as it is now. Directories added are left
    to take_apart(), which moves them across whole."""
    for d, names in st.listing.items():
        try:
            with os.scandir(d) as it:
                now = {e.name: e for e in it}
        except FileNotFoundError:
            now = {}
        for name, ino in names.items():
            e = now.get(name)
            path = st.mirror(os.path.join(d, name))
            if e is None:
                if os.path.isdir(path) and not os.path.islink(path):
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    file_tools.discard(path)
            elif e.inode() != ino and not e.is_dir(follow_symlinks=False) and _is_inode(path, ino):
                file_tools.discard(path)  # our link to the file it replaced
                _link(e.path, path)
        for name, e in now.items():
            path = st.mirror(e.path)
            if name not in names and not e.is_dir(follow_symlinks=False) and not is_owned_name(name) \
                    and not os.path.lexists(path):
                _link(e.path, path)


def _is_inode(path: str, ino: int) -> bool:
    try:
        return os.lstat(path).st_ino == ino
    except FileNotFoundError:
        return False


def flush(st: Stage) -> None:
    """Make the mirror durable before the exchange: one syncfs covers every entry of it."""
    file_tools.sync_files([os.path.join(st.path, st.marker)])
    if file_tools.syncfs_missing():
        file_tools.sync_files(st.made)
        file_tools.sync_dirs([st.mirror(d) for d in st.listing])


def discard_stage(path: str) -> None:
    """Remove a stage that was never exchanged: only links to originals that are still in S,
    and ports, which are derived. Its marker goes last, so a stage half removed by a killed run
    is still known for what it is."""
    try:
        with os.scandir(path) as it:
            entries = sorted(it, key=lambda e: e.name.startswith(".musify-swap_"))
    except FileNotFoundError:
        return
    for e in entries:
        if e.is_dir(follow_symlinks=False):
            shutil.rmtree(e.path, ignore_errors=True)
        else:
            file_tools.discard(e.path)
    try:
        os.rmdir(path)
    except OSError:
        pass


@dataclass
class Leftovers:
    kept: list[str] = field(default_factory=list)  # kept in the old tree: the new one has that name
    moved: list[str] = field(default_factory=list)  # moved into the new tree (paths under S)


def take_apart(s: str, old: str, originals: dict[str, list[int]], links: dict[str, str]) -> Leftovers:
    """After the exchange: remove from the old tree (at `old`) what is known to be musify's — an
    entry that is the same inode as the new tree's entry of that name, an original the run
    replaced (`originals`: path relative to S -> [size, mtime_ns, inode] when read), a symbolic
    link it retargeted (`links`: relative path -> text it had), musify's own temporary files —
    and move anything else into the new tree where its name is free, or keep it and report it.
    The unlinks run on a few threads: freeing an inode whose data is on disk waits on the file
    system's journal, and those waits overlap."""
    out = Leftovers()
    if not os.path.lexists(old):
        return out  # a killed run had already finished taking it apart
    doomed: list[str] = []
    dirs: list[str] = []
    _take_dir(s, old, "", originals, links, out, doomed, dirs)
    from concurrent.futures import ThreadPoolExecutor  # here: imported (with logging) only when a swap runs

    with ThreadPoolExecutor(8) as pool:
        for _ in pool.map(_unlink_all, [doomed[i::8] for i in range(8)]):
            pass
    for d in dirs:  # deepest first
        try:
            os.rmdir(d)
        except OSError:
            pass  # something in it was kept
    return out


def _unlink_all(paths: list[str]) -> None:
    for path in paths:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass


def _take_dir(s: str, old: str, rel: str, originals, links, out: Leftovers, doomed: list[str],
              dirs: list[str]) -> None:
    here = os.path.join(old, rel) if rel else old
    with os.scandir(here) as it:
        entries = list(it)
    for e in entries:
        r = f"{rel}/{e.name}" if rel else e.name
        new = os.path.join(s, r)
        try:
            n = os.lstat(new)
        except FileNotFoundError:
            n = None
        if e.is_dir(follow_symlinks=False):
            if n is not None and stat.S_ISDIR(n.st_mode):
                _take_dir(s, old, r, originals, links, out, doomed, dirs)
                continue
        elif _known(e, r, n, originals, links):
            doomed.append(e.path)
            continue
        if n is None:
            os.rename(e.path, new)
            out.moved.append(new)
        else:
            out.kept.append(e.path)
    dirs.append(here)


def _known(e: os.DirEntry, rel: str, n: os.stat_result | None, originals, links) -> bool:
    o = e.stat(follow_symlinks=False)
    if n is not None and (o.st_ino, o.st_dev) == (n.st_ino, n.st_dev):
        return True
    if is_owned_name(e.name) and not e.is_dir(follow_symlinks=False):
        return True  # musify's lock, journal (both may have been made anew since) or a temporary file
    if rel in originals:
        return [o.st_size, o.st_mtime_ns, o.st_ino] == list(originals[rel])
    if rel in links and stat.S_ISLNK(o.st_mode):
        return os.readlink(e.path) == links[rel]
    return False


def side(s: str, stage_path: str, marker: str) -> str:
    """Which side of the exchange a killed run stopped on: 'after' (S holds the new tree),
    'before' (the stage holds an unfinished mirror), 'none' (no stage was made, or it is empty)."""
    if os.path.lexists(os.path.join(s, marker)):
        return "after"
    if os.path.lexists(os.path.join(stage_path, marker)):
        return "before"
    if not os.path.lexists(stage_path):
        return "none"
    try:
        os.rmdir(stage_path)  # made, killed before its marker: empty
        return "none"
    except OSError:
        raise Undecidable(f"{stage_path}: left by an interrupted --in-place run whose marker is gone "
                          f"(was {s} moved?); compare it with {s}, then remove it") from None


def recover(root: str, info: dict) -> Leftovers:
    """Resolve a killed run's swap (its journal's `swap` object): finish taking the old tree
    apart if the exchange happened, else remove the stage (S was never touched). The caller
    then drops the journal and calls drop_marker()."""
    s = os.path.normpath(os.path.join(root, info["dir"]))
    stage_path = os.path.join(os.path.dirname(s), info["stage"])
    where = side(s, stage_path, info["marker"])
    if where == "after":
        left = take_apart(s, stage_path, info.get("originals", {}), info.get("links", {}))
        file_tools.sync_files([s])
        return left
    if where == "before":
        discard_stage(stage_path)
    return Leftovers()


def drop_marker(s: str, marker: str) -> None:
    """The last step: once the journal is gone, the marker is a stray temporary file (a later
    run's clean-up would remove it too)."""
    file_tools.discard(os.path.join(s, marker))
    file_tools.sync_dirs([s, os.path.dirname(s)])
