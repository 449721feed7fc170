"""The compiled discovery walk (`_cwalk.walk`) lists what the Python walk lists, or declines.

Generated trees with odd names (undecodable bytes, non-ASCII, backslashes, newlines, names that
sort around "/"), `.git` folders and files, empty and deep folders are discovered with the
compiled walk and without it (`discover._NATIVE = None`, the reference), and the two discoveries
must be equal; trees holding what only the Python walk decides about (links, FIFOs, musify's own
names, a .gitignore to honour) must be declined, and still come out equal.
"""

from __future__ import annotations

import os
import pickle
import random

import pytest

from musify import discover

pytestmark = pytest.mark.skipif(discover._NATIVE is None, reason="the compiled walk is not built (or pure Python)")

ODD = [b"a", b"a-b", b"a.b", b"a0", b"A", b"_", b"x.cu", b"x.cuh", b"y.CU", b"CMakeLists.txt", b"Makefile",
       b"sp ace.h", b"back\\slash.cu", b"new\nline.cu", b"caf\xc3\xa9.cu", b"\xff\xfe.cu", b"\xc3.cu", b"..cu",
       b".hidden", b"\xe2\x82\xac", b"req-requirements.txt", b".git", b".gitx", b"z" * 200]


def _walk(root: str, gitignore: bool):
    return discover._NATIVE.walk(root, gitignore, discover.Found, discover._BY_EXT, discover.classify)


def _tree(base: bytes, rng: random.Random, depth: int) -> None:
    """Files and folders under `base`, named from ODD and at random."""
    for _ in range(rng.randrange(0, 7)):
        name = rng.choice(ODD) if rng.random() < 0.6 else bytes(rng.choice(b"ab.-_\xc3\xa9") for _ in range(rng.randrange(1, 5)))
        if name in (b".", b".."):
            continue
        path = os.path.join(base, name)
        if os.path.lexists(path):
            continue
        if depth and rng.random() < 0.4:
            os.mkdir(path)
            _tree(path, rng, depth - 1)
        else:
            with open(path, "wb") as fh:
                fh.write(b"int x;\n")


def _both(root: str, respect_gitignore: bool = True) -> tuple[discover.Discovery, discover.Discovery]:
    compiled = discover.discover([root], (), respect_gitignore, stamps=False)
    native, discover._NATIVE = discover._NATIVE, None
    try:
        reference = discover.discover([root], (), respect_gitignore, stamps=False)
    finally:
        discover._NATIVE = native
    return compiled, reference


def _assert_same(root: str, respect_gitignore: bool = True) -> None:
    got, want = _both(root, respect_gitignore)
    assert got.files == want.files
    # each Found made as its __init__ makes it: the same instance dictionary, in the same order
    assert [list(vars(f).items()) for f in got.files] == [list(vars(f).items()) for f in want.files]
    assert pickle.dumps(got.files) == pickle.dumps(want.files)  # what a worker process is sent
    assert got.unlisted == want.unlisted
    assert got.owned == want.owned


@pytest.mark.parametrize("seed", range(6))
def test_compiled_walk_agrees_with_the_python_walk(tmp_path, seed):
    root = os.fsencode(tmp_path / "t")
    os.mkdir(root)
    _tree(root, random.Random(seed), 4)
    os.makedirs(os.path.join(root, b".git", b"objects"))  # listed as a folder, never entered
    with open(os.path.join(root, b".git", b"objects", b"k.cu"), "wb") as fh:
        fh.write(b"int x;\n")
    os.makedirs(os.path.join(root, b"empty", b"deeper", b"still"))
    walked = _walk(os.fsdecode(root), True)
    assert walked is not None  # walked, not declined
    rels = [f.rel for f in walked[0]]
    assert rels == sorted(rels)  # listed in order: the caller sorts nothing
    _assert_same(os.fsdecode(root))
    other = os.fsencode(tmp_path / "s")  # a second input: the two lists sorted as one
    os.mkdir(other)
    _tree(other, random.Random(seed + 100), 2)
    got = discover.discover([os.fsdecode(other), os.fsdecode(root)], (), True, stamps=False)
    assert got.files == sorted(got.files, key=lambda f: (f.root, f.rel))


def test_a_git_file_is_listed(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / ".git").write_text("gitdir: ../.git/modules/sub\n")
    (tmp_path / "sub" / "a.cu").write_text("int x;")
    assert _walk(str(tmp_path), True) is not None
    _assert_same(str(tmp_path))


@pytest.mark.parametrize("odd", ["file link", "folder link", "dangling link", "fifo", "musify temp", "musify other",
                                 "gitignore"])
def test_what_the_python_walk_decides_is_declined(tmp_path, odd):
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    (deep / "k.cu").write_text("int x;")
    (tmp_path / "top.cu").write_text("int x;")
    if odd == "file link":
        (deep / "l.cu").symlink_to("k.cu")
    elif odd == "folder link":
        (deep / "l").symlink_to(tmp_path / "a")
    elif odd == "dangling link":
        (deep / "l.cu").symlink_to("nowhere.cu")
    elif odd == "fifo":
        os.mkfifo(deep / "f.cu")
    elif odd == "musify temp":
        (deep / ".musify-abc.tmp").write_text("")
    elif odd == "musify other":
        (deep / ".musifyrc").write_text("")
    elif odd == "gitignore":
        (deep / ".gitignore").write_text("k.cu\n")
    assert _walk(str(tmp_path), True) is None
    _assert_same(str(tmp_path))
    if odd == "gitignore":  # not honoured: the file is listed like any other, by the compiled walk
        assert _walk(str(tmp_path), False) is not None
        _assert_same(str(tmp_path), respect_gitignore=False)


def test_roots_it_declines(tmp_path):
    assert _walk("/", True) is None  # relpaths would start differently
    assert _walk(str(tmp_path / "missing"), True) is None
    with pytest.raises(ValueError):
        _walk("a\0b", True)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any folder")
def test_an_unreadable_folder_is_declined(tmp_path):
    (tmp_path / "shut").mkdir()
    (tmp_path / "shut" / "a.cu").write_text("int x;")
    os.chmod(tmp_path / "shut", 0)
    try:
        assert _walk(str(tmp_path), True) is None
        _assert_same(str(tmp_path))
    finally:
        os.chmod(tmp_path / "shut", 0o755)


def _walk_prefetched(root: str, gitignore: bool, pre):
    return discover._NATIVE.walk(root, gitignore, discover.Found, discover._BY_EXT, discover.classify, pre)


def _same_walk(a, b) -> bool:
    return (a is None) == (b is None) and (a is None or (
        [list(vars(f).items()) for f in a[0]] == [list(vars(f).items()) for f in b[0]] and a[1] == b[1]))


@pytest.mark.parametrize("seed", range(4))
def test_a_walk_from_a_prefetch_is_the_walk(tmp_path, seed):
    """The folders listed ahead by the prefetch thread give the walk's own answer: the same
    files in the same order and the same folders, odd names, `.git`, empty and deep folders
    included; what the walk declines it still declines."""
    root = os.fsencode(tmp_path / "t")
    os.mkdir(root)
    _tree(root, random.Random(seed), 4)
    os.makedirs(os.path.join(root, b".git", b"objects"))
    os.makedirs(os.path.join(root, b"empty", b"deeper", b"still"))
    path = os.fsdecode(root)
    want = _walk(path, True)
    assert want is not None and _same_walk(_walk_prefetched(path, True, discover._NATIVE.prefetch(path)), want)
    os.symlink("t", os.path.join(os.fsencode(tmp_path), b"t", b"link"))  # only the Python walk decides about it
    assert _walk_prefetched(path, True, discover._NATIVE.prefetch(path)) is None


def test_a_prefetch_of_another_root_or_not_taken_changes_nothing(tmp_path, monkeypatch):
    for name in ("a", "b"):
        (tmp_path / name / "sub").mkdir(parents=True)
        (tmp_path / name / "sub" / "k.cu").write_text("int x;\n")
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    assert _same_walk(_walk_prefetched(a, True, discover._NATIVE.prefetch(b)), _walk(a, True))
    unused = discover._NATIVE.prefetch(a)
    del unused  # dropped before any walk took it: its thread stopped and joined
    monkeypatch.setattr(discover, "_PREFETCHED", {})
    discover.prefetch([a, str(tmp_path / "missing"), str(tmp_path / "a" / "sub" / "k.cu")])
    assert list(discover._PREFETCHED) == [a]  # folders only
    got = discover.discover([a], (), True, stamps=False)
    assert not discover._PREFETCHED  # taken by the walk of its root
    assert [f.rel for f in got.files] == ["sub/k.cu"]


def test_a_forked_child_leaves_the_parent_s_prefetch_alone(tmp_path):
    (tmp_path / "d").mkdir()
    pre = discover._NATIVE.prefetch(str(tmp_path))
    pid = os.fork()
    if pid == 0:  # the child: dropping its copy must neither join nor free the parent's thread
        del pre
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert _walk_prefetched(str(tmp_path), True, pre) is not None


def test_the_command_line_keeps_no_listing_it_read_ahead(tmp_path):
    """A run started from the command line in this process leaves no listing read ahead behind,
    taken by its walk or not (an excluded tree walks in Python)."""
    from click.testing import CliRunner

    from musify import cli

    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "k.cu").write_text("int x;\n")
    for extra in ([], ["--exclude", "nothing*"]):
        got = CliRunner().invoke(cli.main, ["migrate", str(tmp_path / "t"), "-o", str(tmp_path / "o"), "-q",
                                            "--no-cache", *extra])
        assert got.exit_code == 0, got.output
        assert not discover._PREFETCHED
