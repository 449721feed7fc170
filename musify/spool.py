"""A run's rendered record entries kept on disk until the record is written, not in the parent.

Every file's edit list is rendered to the record's JSON where the file was migrated
(`musify/packed_edits.py`). Held as text until the record was written, those renderings were most
of the parent's memory on a big tree (about 180 bytes an edit: 100 MB on a 100 MB tree), so, as
each result arrives, `Spool.keep` appends them to one temporary file beside the record, together
with the rest of the file's entry rendered there and then (`render_entry`: the diagnostics, and
the other fields around holes for those the run-level finalisers may still change), and leaves
in the result views that read them back (`SpooledEdits`, `Rendered`). Under `-j` that rendering
happens while the workers still run, not in the serial dump after them. (Rendering the entry in
the workers instead was measured and does not pay: sending the text through the pipe costs the
parent's receiving thread about what rendering it costs the parent.) The record dump then copies
the texts from the file; every other reader (reports, `to_json`, pickling) reads them back as
before, so nothing else changes and every byte of the record stays what it was.

The file is created already unlinked (`tempfile.TemporaryFile`): a killed run leaves nothing
behind, and it disappears with the last result that refers to it. A spool that cannot be
created or written (a read-only folder, a full disk) is not an error: from then on the entries
stay in memory as before. A read that fails while the record is written fails that write, which
is atomic, so no partial record is ever left.

Diagnostics may still change after they arrive (run-level MU1001, `--suppress`, MU0011, a failed
write's MU0009), so `Rendered` keeps the `Diagnostic` objects it rendered (frozen, so an object
seen again has the same JSON) and renders only the ones it has not seen; likewise it keeps the
values of the entry's other fields, and an entry one of whose fields was replaced since (a failed
write's status) is rendered afresh.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from operator import is_

from musify.packed_edits import PackedEdits
from musify.records import FIXED, FIXED_VALUES, diagnostic_json, entry_template

FLUSH = 1 << 20  # bytes gathered before one write to the file


class Spool:
    """Texts appended to one unlinked temporary file and read back by offset."""

    def __init__(self, directory: str) -> None:
        self._fh = tempfile.TemporaryFile(prefix=".musify-spool-", dir=directory)  # noqa: SIM115 -- held for the run
        self._fd = self._fh.fileno()
        self._buf = bytearray()
        self._flushed = 0  # bytes in the file; the rest of the spool is in `_buf`
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
            data = os.pread(self._fd, size, at)
            if len(data) == size:
                return data.decode("ascii")
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
        """Move `result`'s rendered edits and the rest of its entry, rendered here, into the spool."""
        if self.broken:
            return
        edits = result.edits
        if type(edits) is PackedEdits and edits._json is not None:  # a big file's arrays stay: 40 B an edit
            text = edits._json
            at = self.put(text)
            if at is None:
                return
            result.edits = SpooledEdits(self, edits._n, at, len(text))
        rendered = result.rendered or render_entry(result)
        if rendered.text is not None:
            at = self.put(rendered.text)
            if at is not None:
                rendered.spool, rendered.at, rendered.text = self, at, None
        result.rendered = rendered

    def close(self) -> None:
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

    def _text(self) -> str:
        return self._spool.read(self._at, self._size)

    def iter_json(self, chunk: int = 0, lo: int = 0, hi: int | None = None) -> Iterator[str]:
        hi = self._n if hi is None else hi
        if lo == 0 and hi == self._n:
            yield self._text()
        else:
            yield json.dumps(json.loads(self._text())[lo:hi], separators=(",", ":"))

    def __iter__(self) -> Iterator[dict]:
        yield from json.loads(self._text())

    def __reduce__(self):  # pickled (the incremental cache, a report) as the plain packed list
        return _packed, (self._n, self._text())


def _packed(n: int, text: str) -> PackedEdits:
    edits = PackedEdits.__new__(PackedEdits)
    edits.__setstate__((n, text))
    return edits


class Rendered:
    """A file's record entry as rendered when it arrived: the entry's text with null in the fields
    that may still change (`records.HOLES`), then the diagnostics' JSON array (`tsize` is where it
    starts), in memory or at `at` in the spool; and the `Diagnostic` objects and the values of the
    other fields it was rendered from."""

    __slots__ = ("at", "diags", "fixed", "size", "spool", "text", "tsize")

    def __init__(self, diags: tuple, fixed: tuple, text: str, tsize: int) -> None:
        self.diags, self.fixed, self.text, self.tsize = diags, fixed, text, tsize
        self.size = len(text)
        self.spool: Spool | None = None
        self.at = 0

    def read(self) -> str:
        """The rendered text (the template, then the diagnostics' array)."""
        if self.text is not None:
            return self.text
        return self.spool.read(self.at, self.size)

    def template_for(self, result) -> bool:
        """Whether the template still holds: every field outside its holes still holds what it
        was rendered from (a field replaced since, say a failed write's status, renders afresh)."""
        now, then, n = tuple(map(result.__getattribute__, FIXED)), self.fixed, len(FIXED_VALUES)
        return now[:n] == then[:n] and tuple(map(type, now[:n])) == tuple(map(type, then[:n])) \
            and all(map(is_, now[n:], then[n:]))

    def json_for(self, diags: list, render, whole: str) -> str:
        """The JSON array of `diags`, the file's diagnostics now: the text as rendered when they
        are the objects rendered, in order; else rendered afresh by `render(d)`."""
        mine = self.diags
        if len(diags) == len(mine) and all(map(is_, diags, mine)):
            return whole[self.tsize:]
        return "[" + ",".join(map(render, diags)) + "]"

    def __getstate__(self):  # pickled with its text, never with the spool
        return self.diags, self.fixed, self.read(), self.tsize

    def __setstate__(self, state) -> None:
        self.diags, self.fixed, self.text, self.tsize = state
        self.size, self.spool, self.at = len(self.text), None, 0


def render_entry(result) -> Rendered:
    """`result`'s record entry rendered as the record writes it, but for the fields that may
    still change."""
    template = entry_template(result)
    diags = "[" + ",".join(map(diagnostic_json, result.diagnostics)) + "]"
    return Rendered(tuple(result.diagnostics), tuple(map(result.__getattribute__, FIXED)), template + diags,
                    len(template))
