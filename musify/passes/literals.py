"""Which of the passes' literal words a file's text holds, found in one pass over it.

Most passes open with "does the text hold this at all?" (`<<<`, `asm`, `__global__`, the
exclusion marker, a PyTorch method name, the digits of a warp-size trigger): on a file where the
answer is no, that test is all the pass costs, and each such `in` reads the whole text (about a
nanosecond a character: eight of them were more than all the rest those passes did on a corpus
of small files). The words are registered once (`register`, at import or when a pass first
derives them from the rules); the first question about a file answers every registered word in
one compiled pass (`_claunch.literals_in`), kept in the file's scratch facts. A word not
registered, a text not stored one byte a character, or no compiled module: the plain `in` test,
which is the reference (tests/test_literals.py checks the compiled answers against it).

The same answer gates whole passes: a pass whose module declares `triggers(ruleset)` (words one
of which its file's text holds wherever it finds anything) is not called on a file holding none
of them (`languages.plan` makes each such pass's `mask_of`, `runner.edit_text` tests it against
`file_bits`), which saves the call and its own opening test on most files.
"""

from __future__ import annotations

from musify.frontend import compiled
from musify.passes._base import PassContext

_NATIVE = compiled.load("_claunch")
_MAX = 64  # the compiled pass answers at most 64 words (one bit each)
_KEY = "literals.found"
_words: list[str] = []
_index: dict[str, int] = {}
_asked: tuple[str, ...] = ()  # the registered words as the compiled pass is handed them
_masks: dict[tuple[str, ...], int] = {}  # `holds_any`'s tuples, each with its words' bits (0: not all registered)


def register(*words: str) -> None:
    """Words `holds` will be asked about: answered together, one pass per file."""
    global _asked
    added = False
    for word in words:
        if word not in _index and len(_words) < _MAX:
            _index[word] = len(_words)
            _words.append(word)
            added = True
    if added:
        _asked = tuple(_words)
        _masks.clear()  # a tuple with a word not registered before may now have all its bits


def holds(ctx: PassContext, word: str) -> bool:
    """`word in ctx.text`, for a registered word from the file's one pass over its text."""
    bit = _index.get(word)
    if bit is not None:
        made = ctx.found.scratch.get(_KEY)
        if made is None or bit >= made[0]:  # not asked of this file yet, or registered since
            made = _answer(ctx)
        if made[1] is not None:  # None: no compiled module, or a text of wider characters
            return made[1] >> bit & 1 == 1
    return word in ctx.text


def holds_any(ctx: PassContext, words: tuple[str, ...]) -> bool:
    """`any(holds(ctx, word) for word in words)` in one test of the file's answer: the words'
    bits are gathered once per tuple (a pass asks the same tuple of every file), not looked up
    one by one. A tuple with a word not registered: the words one by one."""
    mask = _masks.get(words)
    if mask is None:
        mask = _masks[words] = _mask(words)
    if mask:
        made = ctx.found.scratch.get(_KEY)
        if made is None or mask >> made[0]:  # not asked yet, or some bit registered since
            made = _answer(ctx)
        if made[1] is not None:
            return made[1] & mask != 0
    return any(holds(ctx, word) for word in words)


def mask_of(words: tuple[str, ...]) -> int:
    """The bits of `words` in `file_bits`' answers, registering them (0: not all could be, so
    no gate can be built on them): a pass's `triggers`, made once per plan."""
    register(*words)
    return _mask(tuple(words))


def file_bits(ctx: PassContext) -> int:
    """The registered words the file's text holds, one bit each (the answer `holds` reads, made
    now if not yet); -1, every bit, where no compiled answer can be given (a text of wider
    characters, no compiled module): then no pass is skipped for its words."""
    made = ctx.found.scratch.get(_KEY)
    if made is None or made[0] != len(_asked):
        made = _answer(ctx)
    return made[1] if made[1] is not None else -1


def _answer(ctx: PassContext) -> tuple[int, int | None]:
    """The file's answer for every registered word (how many were asked, their bits), kept."""
    found = _NATIVE.literals_in(ctx.text, _asked) if _NATIVE is not None else None
    made = ctx.found.scratch[_KEY] = (len(_asked), found)
    return made


def _mask(words: tuple[str, ...]) -> int:
    """The bits of `words`, or 0 where one is not registered (or there is none)."""
    bits = [_index.get(word) for word in words]
    if not bits or None in bits:
        return 0
    return sum(1 << bit for bit in set(bits))
