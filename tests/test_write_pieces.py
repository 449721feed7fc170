"""`file_tools.write_pieces`: a record's pieces written by a second thread while the next ones are
made, in order, with every failure raised in the caller and no partial file left."""

from __future__ import annotations

import io
import os

import pytest

from musify import file_tools


def test_pieces_are_written_in_order(tmp_path):
    pieces = [bytes([65 + k % 26]) * (1000 + k) for k in range(40)]
    target = tmp_path / "record.json"
    file_tools.atomic_write(str(target), iter(pieces))
    assert target.read_bytes() == b"".join(pieces)
    for few in ([], [b"one"], [b"one", b"two"]):
        file_tools.atomic_write(str(target), iter(few))
        assert target.read_bytes() == b"".join(few)


def test_a_failing_iterator_leaves_no_file_and_raises(tmp_path):
    def pieces():
        yield b"a" * 10
        yield b"b" * 10
        yield b"c" * 10
        raise OSError("spool read failed")

    target = tmp_path / "record.json"
    target.write_bytes(b"old")
    with pytest.raises(OSError, match="spool read failed"):
        file_tools.atomic_write(str(target), pieces())
    assert target.read_bytes() == b"old"
    assert sorted(os.listdir(tmp_path)) == ["record.json"]  # the temporary went


def test_a_failing_write_is_raised_in_the_caller():
    class Full(io.RawIOBase):
        def __init__(self):
            self.got = []

        def writable(self):
            return True

        def write(self, b):
            if len(self.got) == 2:
                raise OSError(28, "No space left on device")
            self.got.append(bytes(b))
            return len(b)

    made = []

    def pieces():
        for k in range(50):
            made.append(k)
            yield b"%d" % k

    sink = Full()
    with pytest.raises(OSError, match="No space left"):
        file_tools.write_pieces(sink, pieces())
    assert sink.got == [b"0", b"1"]  # nothing written after the failed write
