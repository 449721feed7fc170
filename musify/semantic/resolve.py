"""Ask libclang what each candidate name in a file refers to, and which macros produce CUDA calls."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from musify.semantic.toolchain import Toolchain, Unavailable

_FATAL = 4


@dataclass
class Resolution:
    user_decls: dict[int, str] = field(default_factory=dict)  # char offset -> "file:line" of the declaration
    macro_calls: list[tuple[int, str, str, list[str]]] = field(default_factory=list)  # (offset, macro, where, calls)


def resolve(tc: Toolchain, abs_path: str, text: str, flags: list[str],
            candidates: list[tuple[int, str]], cuda_names: set[str]) -> Resolution:
    """Classify `candidates` ((char offset, name) pairs) by the declaration each refers to."""
    ci = tc.cindex
    options = ci.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD
    try:
        tu = tc.index.parse(abs_path, args=tc.args(flags), unsaved_files=[(abs_path, text)], options=options)
    except ci.TranslationUnitLoadError as exc:
        raise Unavailable(f"libclang could not parse the file: {exc}") from None
    fatal = [d for d in tu.diagnostics if d.severity >= _FATAL]
    if fatal:
        raise Unavailable(f"libclang parse failed: {fatal[0].spelling}")
    main = tu.get_file(abs_path)
    to_byte = _byte_offsets(text)
    sdk = os.path.realpath(tc.cuda_path) + os.sep
    out = Resolution()
    for offset, _name in candidates:
        cursor = ci.Cursor.from_location(tu, ci.SourceLocation.from_offset(tu, main, to_byte(offset)))
        ref = cursor.referenced if cursor is not None else None
        where = ref.location.file.name if ref is not None and ref.location.file is not None else None
        if where is None:
            continue
        real = os.path.realpath(where)
        if not real.startswith(sdk) and not real.startswith(os.path.realpath(tc.resource_dir) + os.sep) \
                and not real.startswith("/usr/"):
            out.user_decls[offset] = f"{os.path.basename(where)}:{ref.location.line}"
    seen: set[str] = set()
    for cursor in tu.cursor.get_children():
        if cursor.kind != ci.CursorKind.MACRO_INSTANTIATION or cursor.spelling in seen:
            continue
        loc = cursor.location
        if loc.file is None or os.path.realpath(loc.file.name) != os.path.realpath(abs_path):
            continue
        definition = cursor.referenced
        if definition is None:
            continue
        calls = sorted({t.spelling for t in definition.get_tokens()} & cuda_names)
        if calls:
            seen.add(cursor.spelling)
            dloc = definition.location
            where = f"{os.path.basename(dloc.file.name)}:{dloc.line}" if dloc.file else "?"
            out.macro_calls.append((_char_offset(text, loc.offset), cursor.spelling, where, calls))
    return out


def _byte_offsets(text: str):
    if text.isascii():
        return lambda c: c
    return lambda c: len(text[:c].encode("utf-8", "surrogateescape"))


def _char_offset(text: str, byte: int) -> int:
    if text.isascii():
        return byte
    return len(text.encode("utf-8", "surrogateescape")[:byte].decode("utf-8", "surrogateescape"))
