"""The read-ahead (musify/readahead.py, musify/_cread.c) gives exactly what the reference gives:
`read_regular_stated`'s bytes and stat for a plain file, None (so the runner reads it through the
reference, and reports what it always reported) for everything else; and a run with it makes
the same results and ports as a run without it, at -j1 and -j2."""

from __future__ import annotations

import os
import stat
import threading
import time

import pytest

from musify import readahead
from musify.api import migrate
from musify.discover import read_regular_stated
from musify.options import Options
from musify.passes._base import ProjectInfo
from musify.pool import Writes, run_jobs
from musify.runner import FileJob

needs_native = pytest.mark.skipif(readahead._native() is None, reason="musify._cread not built (or MUSIFY_PURE_PYTHON set)")

KERNEL = "#include <cuda_runtime.h>\n__global__ void k{i}(float* x) {{ x[threadIdx.x] = {i}; }}\n" \
         "void run{i}(float* d) {{ cudaMalloc(&d, 4); k{i}<<<1, 1>>>(d); cudaFree(d); }}\n"


def _odd_tree(root):
    """Plain files and every kind of file the reader must leave to the reference; the names, in
    the order they are read (some are removed or replaced after this returns: see `_spoil`)."""
    root.mkdir(parents=True, exist_ok=True)
    names = []

    def put(name: str, data: bytes) -> None:
        (root / name).write_bytes(data)
        names.append(name)

    for i in range(6):
        put(f"k{i}.cu", KERNEL.format(i=i).encode())
    put("empty.cu", b"")
    put("binary.cu", b"cudaMalloc\0\1\2" * 50)
    put("wide.h", "\ufeffint cudaMalloc;\n".encode("utf-16-le"))  # NUL bytes but a byte-order mark
    put("bad_utf8.cu", b"int x; // \xff\xfe cudaFree\n")
    put("crlf.cu", b"cudaFree(p);\r\n" * 3)
    put("big.cu", b"int cudaMalloc_big;\n" * 4000)  # over the (lowered) MAX_FILE: the runner reads it
    put("locked.cu", b"cudaMalloc(&p, 1);\n")
    os.chmod(root / "locked.cu", 0)
    os.mkfifo(root / "fifo.cu")
    names.append("fifo.cu")
    put("became_dir.cu", b"int x;\n")
    put("gone.cu", b"int gone;\n")
    names.append("k0.cu/under_a_file.cu")  # cannot be opened: ENOTDIR (root or not)
    os.symlink("loop.cu", root / "loop.cu")  # nor this: ELOOP
    names.append("loop.cu")
    put("late.cu", b"cudaFree(q);\n")
    return names


def _spoil(root) -> None:
    """What changes between discovery and the reads: a file removed, a folder in place of a file."""
    os.unlink(root / "gone.cu")
    os.unlink(root / "became_dir.cu")
    (root / "became_dir.cu").mkdir()


def _jobs(root, names):
    return [(i, FileJob(str(root / n), n, str(root), "cuda-source" if n.endswith(".cu") else "cpp",
                        n[:-3] + ".mu" if n.endswith(".cu") else n)) for i, n in enumerate(names)]


def _reference(path: str):
    try:
        return read_regular_stated(path)
    except OSError as exc:
        return type(exc), exc.errno, exc.strerror


def _kept(read):
    """A (bytes, stat) read with the stat's access times left out: the read that made it, or a
    later one, may move them (relatime updates the access time at the first read after a write),
    so two reads of an unchanged file can differ there and only there."""
    if not isinstance(read, tuple) or len(read) != 2 or not isinstance(read[1], os.stat_result):
        return read
    st = read[1]
    return bytes(read[0]), (st.st_mode, st.st_ino, st.st_dev, st.st_nlink, st.st_uid, st.st_gid, st.st_size,
                            st.st_mtime_ns, st.st_ctime_ns)


def _same_stat(a: os.stat_result, b: os.stat_result) -> None:
    assert tuple(a) == tuple(b)
    for name in dir(b):
        if name.startswith("st_"):
            assert getattr(a, name) == getattr(b, name), name


@needs_native
def test_take_gives_the_reference_bytes_and_stat_or_none(tmp_path, monkeypatch):
    monkeypatch.setattr(readahead, "MAX_FILE", 50_000)
    root = tmp_path / "tree"
    names = _odd_tree(root)
    _spoil(root)
    paths = [str(root / n) for n in names]
    # the stat as the reference's fstat sees it, before any read (a read may move the access time)
    before = {p: os.stat(p) for p in paths if os.path.isfile(p)}
    served = set()
    with readahead.reading(paths):
        for name, path in zip(names, paths):
            got = readahead.take(path)
            want = _reference(path)
            if got is not None:
                served.add(name)
                assert isinstance(want, tuple) and not isinstance(want[0], type), name
                assert got[0] == want[0], name
                _same_stat(got[1], before[path])
    plain = {n for n in names if n not in ("big.cu", "fifo.cu", "became_dir.cu", "gone.cu", "loop.cu",
                                           "k0.cu/under_a_file.cu")}
    if os.geteuid() != 0:
        plain.discard("locked.cu")  # unreadable (root reads it, as the reference does)
    assert served == plain


def _numbered(tmp_path, n: int, pattern: bytes):
    """n files f0.cu... holding `pattern % i`, and their paths in order."""
    root = tmp_path / "numbered"
    root.mkdir()
    for i in range(n):
        (root / f"f{i}.cu").write_bytes(pattern % i)
    return root, [str(root / f"f{i}.cu") for i in range(n)]


@needs_native
def test_the_reader_stays_within_its_window(tmp_path):
    """A file beyond the window is not read yet: it is read as it is when its turn comes."""
    root, paths = _numbered(tmp_path, 40, b"old %02d\n")
    ahead = readahead.ReadAhead(paths, max_files=4)
    try:
        time.sleep(0.05)  # the thread has read what it may
        (root / "f30.cu").write_bytes(b"new 30\n")
        for i, path in enumerate(paths):
            got = ahead.take(path)
            assert got is not None and got[0] == (b"new 30\n" if i == 30 else b"old %02d\n" % i)
    finally:
        ahead.close()


@needs_native
def test_a_file_changed_after_it_was_read_ahead_is_read_again(tmp_path):
    """Removed, replaced (by a FIFO, by a folder) or rewritten once the reader had read it: the
    runner reads it itself when its turn comes, and reports what the reference reports then."""
    _, paths = _numbered(tmp_path, 6, b"old %d\n")
    ahead = readahead.ReadAhead(paths)
    try:
        time.sleep(0.05)  # everything read ahead
        os.unlink(paths[1])
        os.unlink(paths[2])
        os.mkfifo(paths[2])
        os.unlink(paths[3])
        os.mkdir(paths[3])
        with open(paths[4], "wb") as fh:  # same size, new bytes
            fh.write(b"new 4\n")
        assert ahead.take(paths[0])[0] == b"old 0\n"
        assert [ahead.take(p) for p in paths[1:5]] == [None] * 4
        assert ahead.take(paths[5])[0] == b"old 5\n"
    finally:
        ahead.close()


@needs_native
def test_take_out_of_order_drops_what_it_passes(tmp_path):
    root, paths = _numbered(tmp_path, 10, b"x%d")
    ahead = readahead.ReadAhead(paths, max_files=3, max_bytes=1)
    try:
        assert ahead.take(paths[5])[0] == b"x5"
        assert ahead.take(paths[2]) is None  # passed: the runner reads it itself
        assert ahead.take(paths[5]) is None  # taken once
        assert ahead.take(str(root / "unknown.cu")) is None
        assert [ahead.take(p)[0] for p in paths[6:]] == [b"x6", b"x7", b"x8", b"x9"]
    finally:
        ahead.close()
    assert ahead.take(paths[9]) is None  # closed


@needs_native
def test_a_forked_child_reads_for_itself(tmp_path):
    (tmp_path / "a").write_bytes(b"a")
    (tmp_path / "b").write_bytes(b"b")
    ahead = readahead.ReadAhead([str(tmp_path / "a"), str(tmp_path / "b")])
    try:
        pid = os.fork()
        if pid == 0:  # pragma: no cover -- the child's exit status says it
            os._exit(0 if ahead.take(str(tmp_path / "a")) is None else 1)
        assert os.waitpid(pid, 0)[1] == 0
        assert ahead.take(str(tmp_path / "a"))[0] == b"a"
    finally:
        ahead.close()


def test_pure_python_reads_nothing_ahead(tmp_path, monkeypatch):
    monkeypatch.setenv("MUSIFY_PURE_PYTHON", "1")
    monkeypatch.setattr(readahead, "_LOADED", [])
    (tmp_path / "a").write_bytes(b"a")
    with readahead.reading([str(tmp_path / "a"), str(tmp_path / "a")]) as ahead:
        assert ahead is None and readahead.take(str(tmp_path / "a")) is None


def _run(root, names, rules, monkeypatch, native: bool, out=None):
    monkeypatch.setattr(readahead, "_LOADED", [] if native else [None])
    writes = Writes(str(out)) if out else None
    got = []
    for i, result, data in run_jobs(_jobs(root, names), rules, Options(cache=False), ProjectInfo(), writes):
        entry = result.to_json()
        entry.pop("seconds")
        got.append((i, entry, data))
    return got, (dict(writes.done) if writes else None)


def _tree_bytes(root):
    return {p.relative_to(root).as_posix(): (p.read_bytes(), stat.S_IMODE(p.stat().st_mode))
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads an unreadable file")
@needs_native
def test_an_unreadable_file_is_reported_as_before(tmp_path, rules, monkeypatch):
    root = tmp_path / "u"
    root.mkdir()
    for i in range(3):
        (root / f"k{i}.cu").write_text(KERNEL.format(i=i))
    os.chmod(root / "k1.cu", 0)
    names = ["k0.cu", "k1.cu", "k2.cu"]
    new, _ = _run(root, names, rules, monkeypatch, native=True)
    ref, _ = _run(root, names, rules, monkeypatch, native=False)
    assert new == ref and new[1][1]["status"] == "failed"


@needs_native
def test_a_run_with_the_read_ahead_matches_one_without(tmp_path, rules, monkeypatch):
    monkeypatch.setattr(readahead, "MAX_FILE", 50_000)
    root = tmp_path / "tree"
    names = _odd_tree(root)
    _spoil(root)
    taken = []
    real_take = readahead.take
    monkeypatch.setattr(readahead, "take", lambda path: taken.append(path) or real_take(path))
    new, new_done = _run(root, names, rules, monkeypatch, native=True, out=tmp_path / "new")
    assert len(taken) == len(names)
    ref, ref_done = _run(root, names, rules, monkeypatch, native=False, out=tmp_path / "ref")
    assert new == ref and new_done == ref_done
    assert _tree_bytes(tmp_path / "new") == _tree_bytes(tmp_path / "ref")
    statuses = {names[i]: entry["status"] for i, entry, _ in new}
    assert statuses["gone.cu"] == statuses["became_dir.cu"] == statuses["fifo.cu"] == "failed"
    assert statuses["loop.cu"] == statuses["k0.cu/under_a_file.cu"] == "failed"
    assert statuses["binary.cu"] == "skipped" and statuses["k0.cu"] == "migrated"


@needs_native
@pytest.mark.parametrize("jobs", [1, 2])
def test_a_whole_run_matches_the_pure_reader(tmp_path, monkeypatch, jobs):
    """The CLI's path (discovery, plan, run_jobs, writes), with and without the read-ahead."""
    root = tmp_path / "tree"
    for i in range(70):
        sub = root / f"d{i % 4}"
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"k{i}.cu").write_text(KERNEL.format(i=i))
    (root / "d1" / "empty.h").write_bytes(b"")
    (root / "d2" / "blob.cu").write_bytes(b"\0\1cudaMalloc")
    seen = []
    for native in (True, False):
        monkeypatch.setattr(readahead, "_LOADED", [] if native else [None])
        out = tmp_path / f"out{native}"
        record, _ = migrate([str(root)], Options(cache=False, jobs=jobs), "out", str(out))
        d = record.to_json(deterministic=True)
        d.pop("output")
        seen.append((_tree_bytes(out), d))
    assert seen[0] == seen[1]


def _probe_reads(paths, budget):
    from musify import renames

    return renames._NATIVE.probe_read([(None, p) for p in paths], budget)


@needs_native
def test_the_probe_reads_what_the_reader_reads(tmp_path):
    """`_cport.probe_read` answers `probe`'s codes, and keeps a file only when it read it whole as
    the reader would (a regular file under 8 KB, one read that met its end): offered to a Reader,
    each is handed over as the reference reads it (bytes and stat), within the budget only."""
    from musify import renames

    root = tmp_path / "p"
    root.mkdir()
    sizes = {"a.cu": 10, "empty.cu": 0, "edge.cu": 8191, "big.cu": 8192, "bin.cu": 40, "huge.cu": 20000}
    for name, size in sizes.items():
        (root / name).write_bytes((b"\0" if name == "bin.cu" else b"x") * size)
    os.mkfifo(root / "fifo.cu")
    (root / "dir.cu").mkdir()
    paths = [str(root / n) for n in [*sizes, "fifo.cu", "dir.cu", "gone.cu"]]
    codes, reads = _probe_reads(paths, 1 << 20)
    assert codes == renames._NATIVE.probe([(None, p) for p in paths])
    kept = {os.path.basename(p): got for p, got in zip(paths, reads) if got is not None}
    assert sorted(kept) == ["a.cu", "bin.cu", "edge.cu", "empty.cu"]
    ahead = readahead.ReadAhead(paths, offered={p: got for p, got in zip(paths, reads) if got is not None})
    try:
        for path in paths:
            got, ref = ahead.take(path), None
            try:
                ref = read_regular_stated(path)
            except OSError:
                pass
            if got is not None:
                assert _kept(got) == _kept(ref), path
            else:
                assert ref is None or len(ref[0]) > readahead.MAX_FILE, path
    finally:
        ahead.close()
    _, few = _probe_reads(paths, 8200)  # the budget: a file kept (in order) while its bytes fit what is left
    assert [os.path.basename(p) for p, got in zip(paths, few) if got is not None] == ["a.cu", "empty.cu", "bin.cu"]


@needs_native
def test_an_offered_file_changed_since_is_read_again(tmp_path):
    """A file the probe read and that was rewritten, replaced or removed before its turn is not
    handed over (the runner reads it through the reference); an unchanged one is, unread again."""
    _, paths = _numbered(tmp_path, 5, b"old %d\n")
    _, reads = _probe_reads(paths, 1 << 20)
    offered = dict(zip(paths, reads))
    with open(paths[1], "wb") as fh:
        fh.write(b"new 1\n")  # same size, new bytes
    os.unlink(paths[2])
    os.unlink(paths[3])
    with open(paths[3], "wb") as fh:
        fh.write(b"old 3\n")  # the same bytes in another file
    ahead = readahead.ReadAhead(paths, offered=offered)
    try:
        assert _kept(ahead.take(paths[0])) == _kept(read_regular_stated(paths[0]))
        assert [ahead.take(p) for p in paths[1:4]] == [None, None, None]
        assert _kept(ahead.take(paths[4])) == _kept(read_regular_stated(paths[4]))
    finally:
        ahead.close()


@needs_native
def test_a_run_takes_the_probe_s_reads_and_matches_one_without(tmp_path, monkeypatch):
    """A whole run whose read-ahead takes the rename probe's reads (the default) against one
    whose probe keeps nothing: the same record and ports; nothing offered is left after it."""
    root = tmp_path / "tree"
    for i in range(40):
        (root / f"d{i % 4}").mkdir(parents=True, exist_ok=True)
        (root / f"d{i % 4}" / f"k{i}.cu").write_text(KERNEL.format(i=i))
    (root / "d0" / "bin.cu").write_bytes(b"\0binary")
    offered = []
    real_offer = readahead.offer
    monkeypatch.setattr(readahead, "offer", lambda reads: offered.append(len(reads)) or real_offer(reads))
    records = []
    for budget in (readahead.OFFER_BYTES, 0):
        monkeypatch.setattr(readahead, "OFFER_BYTES", budget)
        record, _ = migrate([str(root)], Options(cache=False), "out", str(tmp_path / f"out{budget}"))
        entries = [f.to_json() for f in record.files]
        for entry in entries:
            entry.pop("seconds")
        records.append(entries)
        assert not readahead._OFFERED
    assert offered == [41]
    assert records[0] == records[1]
    assert _tree_bytes(tmp_path / f"out{readahead.OFFER_BYTES}") == _tree_bytes(tmp_path / "out0")


@needs_native
def test_threads_sharing_one_probe_answer_as_one_probe(tmp_path):
    """`_cport.Probe` run by several threads at once (each claims the items left): the codes of
    `probe`, every file within the budget kept as `probe_read` keeps it, and its result given once."""
    from musify import _cport

    root = tmp_path / "s"
    root.mkdir()
    paths = []
    for k in range(600):
        p = root / f"f{k}.cu"
        p.write_bytes((b"\0" if k % 97 == 0 else b"x%d\n" % k) * (1 + k % 50))
        paths.append(str(p))
    paths.append(str(root / "gone.cu"))
    items = [(str(root / "f3.cu") if k == 5 else None, p) for k, p in enumerate(paths)]
    codes, reads = _cport.probe_read(items, 1 << 30)
    probe = _cport.Probe(items, 1 << 30)
    workers = [threading.Thread(target=probe.run) for _ in range(3)]
    for t in workers:
        t.start()
    probe.run()
    for t in workers:
        t.join()
    shared_codes, shared_reads = probe.result()
    assert shared_codes == codes == _cport.probe(items)
    assert [None if r is None else r[0] for r in shared_reads] == [None if r is None else r[0] for r in reads]
    assert {codes[5], codes[0], codes[-1]} == {1, 2, 0}  # a taken name, a binary file, a file gone
    with pytest.raises(RuntimeError, match="already"):
        probe.result()
    probe.run()  # nothing left to do once answered
    small = _cport.Probe(items, 100)  # a budget that few files fit: only what fits is kept
    small.run()
    kept = [r for r in small.result()[1] if r is not None]
    assert kept and sum(len(r[0]) for r in kept) <= 100


@needs_native
def test_a_reading_takes_its_files_offers_with_it(tmp_path):
    """`reading(paths)` takes the offers of its own files out of what was offered (a -j worker's
    next chunk finds its own still there), so each file's bytes go once it is migrated."""
    _, paths = _numbered(tmp_path, 4, b"old %d\n")
    _, reads = _probe_reads(paths, 1 << 20)
    readahead.offer(dict(zip(paths, reads)))
    try:
        with readahead.reading(paths[:2]) as ahead:
            assert sorted(readahead._OFFERED) == paths[2:]
            assert _kept(ahead.take(paths[0])) == _kept(read_regular_stated(paths[0]))
        with readahead.reading(paths[2:]) as ahead:
            assert not readahead._OFFERED
            assert _kept(ahead.take(paths[3])) == _kept(read_regular_stated(paths[3]))
    finally:
        readahead.withdraw()


@needs_native
def test_the_probe_s_views_are_handed_over_as_bytes(tmp_path):
    """`Probe.result(views=True)`: each kept read a memoryview of the probe's one copy (no second
    copy made while the run waits), which a Reader hands over as the same bytes as the reference."""
    from musify import _cport

    _, paths = _numbered(tmp_path, 6, b"line %d\n" + b"more\n" * 3)
    probe = _cport.Probe([(None, p) for p in paths], 1 << 20)
    probe.run()
    codes, reads = probe.result(views=True)
    assert codes == bytes(len(paths)) and all(type(r[0]) is memoryview for r in reads)
    assert [bytes(r[0]) for r in reads] == [_cport.probe_read([(None, p)], 1 << 20)[1][0][0] for p in paths]
    del probe  # the copies live as long as a view of them
    ahead = readahead.ReadAhead(paths, offered=dict(zip(paths, reads)))
    try:
        got = [ahead.take(p) for p in paths]
    finally:
        ahead.close()
    assert all(type(g[0]) is bytes for g in got)
    assert [_kept(g) for g in got] == [_kept(read_regular_stated(p)) for p in paths]
