"""A run's rendered edit lists kept on disk until the record is written, not in the parent.

Every file's edit list is rendered to the record's JSON where the file was migrated
(`musify/packed_edits.py`). Held as text until the record was written, those renderings were most
of the parent's memory on a big tree (about 180 bytes an edit: 100 MB on a 100 MB tree), so, as
each result arrives, `Spool.keep` appends its list to one temporary file beside the record and
leaves in the result a view that reads it back (`SpooledEdits`). The record dump then copies the
texts from the file into each entry, which it renders in one call (musify/records.py); every other
reader (reports, `to_json`, pickling) reads them back as before, so nothing else changes and
every byte of the record stays what it was. (The rest of each entry is not spooled: rendered
when the record is written, it always shows the fields as the run-level finalisers left them,
and rendering it costs less than keeping and checking an early rendering did.)

The file is created already unlinked (`tempfile.TemporaryFile`): a killed run leaves nothing
behind, and it disappears with the last result that refers to it. A spool that cannot be
created or written (a read-only folder, a full disk) is not an error: from then on the lists
stay in memory as before. A read that fails while the record is written fails that write, which
is atomic, so no partial record is ever left. The record reads the lists in about the order they
were kept, so a read takes a window of the file at once and the next lists are sliced from it.

The first `HOLD` characters of lists stay in memory, where they already are: writing a list and
reading it back costs a few microseconds a file (15 ms of a 5,000-file run whose lists are 2.5 MB
in all), and memory is what the spool saves only on a big tree. Past that, every list is spooled,
so what the parent holds stays bounded however big the tree. 16 M characters keep every list of a
10 MB tree (10.6 M characters on the replicated corpus: 8 M spooled a fifth of them, 14 M
instructions) and cost a 100 MB tree 8 MB of peak RSS (315 -> 323 MB at -j1).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator

from musify.packed_edits import PackedEdits

FLUSH = 1 << 20  # bytes gathered before one write to the file
HOLD = 16 << 20  # characters of lists left in memory (the first ones kept) before any is spooled
WINDOW = 1 << 20  # bytes read at once when the record reads the lists back


class Spool:
    """Texts appended to one unlinked temporary file and read back by offset."""

    def __init__(self, directory: str, hold: int | None = None) -> None:
        """A spool in `directory` that leaves the first `hold` characters of lists in memory
        (default `HOLD`)."""
        self._hold = HOLD if hold is None else hold  # characters of lists still to leave in memory
        self._fh = tempfile.TemporaryFile(prefix=".musify-spool-", dir=directory)  # noqa: SIM115 -- held for the run
        self._fd = self._fh.fileno()
        self._buf = bytearray()
        self._flushed = 0  # bytes in the file; the rest of the spool is in `_buf`
        self._window = memoryview(b"")  # the file's bytes from `_window_at` on, as last read
        self._window_at = 0
        self.broken = False

    def put(self, text: str) -> int | None:
        """Append `text`; its offset, or None when the spool takes nothing more (it could not be
        written, or the text is not ASCII, as the record's JSON always is): the caller keeps it."""
        if self.broken or not text.isascii():
            return None
        at = self._flushed + len(self._buf)
        self._buf += text.encode("ascii")
        if len(self._buf) >= FLUSH:
            self._flush()
        return at

    def _flush(self) -> None:
        """Write the gathered texts; what a full disk refuses stays in memory, readable as before,
        and the spool takes nothing more."""
        done = 0
        try:
            with memoryview(self._buf) as view:
                while done < len(view):
                    done += os.pwrite(self._fd, view[done:], self._flushed + done)
        except OSError:
            self.broken = True
        self._flushed += done
        del self._buf[:done]

    def read(self, at: int, size: int) -> str:
        """The text put at `at` (`size` bytes: its length, the texts being ASCII)."""
        end = at + size
        if end <= self._flushed:  # the common case: all of it in the file
            lo = at - self._window_at
            if 0 <= lo and end - self._window_at <= len(self._window):
                return str(self._window[lo:lo + size], "ascii")
            data = os.pread(self._fd, max(size, min(WINDOW, self._flushed - at)), at)
            if len(data) >= size:
                self._window, self._window_at = memoryview(data), at
                return str(self._window[:size], "ascii")
        parts, pos = [], at
        while pos < min(end, self._flushed):
            part = os.pread(self._fd, min(end, self._flushed) - pos, pos)
            if not part:
                raise OSError(f"the run's spool file ended early (offset {pos})")
            parts.append(part)
            pos += len(part)
        if pos < end:
            parts.append(self._buf[pos - self._flushed:end - self._flushed])
        return b"".join(parts).decode("ascii")

    def keep(self, result) -> None:
        """Move `result`'s rendered edit list into the spool (a big file's arrays stay: 40 B an
        edit), once the lists left in memory have used up the spool's hold."""
        edits = result.edits
        if type(edits) is PackedEdits and edits._n and edits._json is not None and not self.broken:  # (none: "[]" stays)
            text = edits._json
            if len(text) <= self._hold:
                self._hold -= len(text)
                return
            at = self.put(text)
            if at is not None:
                result.edits = SpooledEdits(self, edits._n, at, len(text))

    def close(self) -> None:
        self._window = memoryview(b"")
        self._fh.close()


def open_spool(directory: str | None) -> Spool | None:
    """A spool in `directory`, or None (no directory, or none can be made there: entries are
    then held in memory)."""
    if not directory:
        return None
    try:
        return Spool(directory)
    except OSError:
        return None


class SpooledEdits(PackedEdits):
    """A file's rendered edit list, read back from the spool whenever it is read."""

    __slots__ = ("_at", "_size", "_spool")

    def __init__(self, spool: Spool, n: int, at: int, size: int) -> None:
        self._n, self._spool, self._at, self._size = n, spool, at, size
        self._json = self._pos = self._old = self._fid = self._olds = self._fields = None

    def text(self) -> str:
        return self._spool.read(self._at, self._size)

    def iter_json(self, chunk: int = 0, lo: int = 0, hi: int | None = None) -> Iterator[str]:
        hi = self._n if hi is None else hi
        if lo == 0 and hi == self._n:
            yield self.text()
        else:
            yield json.dumps(json.loads(self.text())[lo:hi], separators=(",", ":"))

    def __iter__(self) -> Iterator[dict]:
        yield from json.loads(self.text())

    def __reduce__(self):  # pickled (the incremental cache, a report) as the plain packed list
        return PackedEdits.of_json, (self._n, self.text())
