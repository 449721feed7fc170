"""UTF-16 and UTF-32 files with a byte-order mark: decoded, migrated and written back in the
same encoding and byte order (the mark kept as the text's first character, so it round-trips
like every other byte outside an edit). Without a mark a wide file is indistinguishable from
binary and is left as such.
"""

from __future__ import annotations

_BOMS = (  # longest first: the UTF-32 LE mark begins with the UTF-16 LE one
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
)


# the first byte of every mark: any other first byte answers at once (every file is asked)
_MARK_STARTS = (b"\xff", b"\x00", b"\xfe")


def wide_codec(data: bytes) -> str | None:
    """The codec of a UTF-16/32 file with a byte-order mark, else None."""
    return None if data[:1] not in _MARK_STARTS else marked_codec(data)


def marked_codec(data: bytes) -> str | None:
    """`wide_codec` by trying each mark in turn (its reference, and its answer where the first
    byte could start one)."""
    for bom, codec in _BOMS:
        if data.startswith(bom):
            if codec.startswith("utf-16") and len(data) % 2 == 0:
                return codec
            if codec.startswith("utf-32") and len(data) % 4 == 0:
                return codec
    return None


def decode_wide(data: bytes, codec: str) -> str:
    """The text, mark included; raises UnicodeDecodeError on a malformed file."""
    return data.decode(codec)


def encode_wide(text: str, codec: str) -> bytes:
    return text.encode(codec)
