"""Reduced-precision float rules: fp16, bf16, fp8 (and fp4/fp6) types, functions and headers.

MUSA_FACTS section 1: `half`/`__half`/`half2` and their functions keep their names; bf16 and fp8
types are renamed with NVIDIA's `nv` becoming Moore Threads' `mt` (`__nv_bfloat16` ->
`__mt_bfloat16`, `__nv_fp8_e4m3` -> `__mt_fp8_e4m3`, `__NV_E4M3` -> `__MT_E4M3`), which is the
naming pattern.  fp8 conversion functions are the exception: torchada maps
`__nv_cvt_float_to_fp8` to `__musa_cvt_float_to_fp8`, so every `__nv_cvt_*` takes the
`__musa_cvt_` prefix (only that one is spelled by a source; the rest are marked inferred).
No public MUSA source has fp4 or fp6 types, so those headers' names are `unsupported`.

A name is filed under the format its spelling names (`__nv_bfloat16` is forward-declared in
`cuda_fp16.h` but is a bf16 name); overloads shared by several headers (`__hadd`) stay with the
first header that declares them.
"""

from __future__ import annotations

import re
from pathlib import Path

from tools.gen_rules import Oracle, Record, claim, first_decls, header_record, pattern_record
from tools.gen_rules.headers import Decl, scan_files
from tools.gen_rules.naming import has_vendor_word

HEADERS = {
    "fp16": ["cuda_fp16.h", "cuda_fp16.hpp"],
    "bf16": ["cuda_bf16.h", "cuda_bf16.hpp"],
    "fp8": ["cuda_fp8.h", "cuda_fp8.hpp"],
    "fp6": ["cuda_fp6.h", "cuda_fp6.hpp"],
    "fp4": ["cuda_fp4.h", "cuda_fp4.hpp"],
}
# format words in a name, most specific first (`__nv_cvt_bfloat16raw_to_fp8` is an fp8 name)
_FORMAT_WORDS = [
    ("fp4", re.compile(r"fp4|e2m1", re.IGNORECASE)),
    ("fp6", re.compile(r"fp6|e2m3|e3m2", re.IGNORECASE)),
    ("fp8", re.compile(r"fp8|e4m3|e5m2|e8m0", re.IGNORECASE)),
    ("bf16", re.compile(r"bfloat16|bf16", re.IGNORECASE)),
    ("fp16", re.compile(r"half|fp16", re.IGNORECASE)),
]
UNSUPPORTED = {"fp4", "fp6"}
_CVT = re.compile(r"^__nv_cvt_")
# names a public source spells (MUSA_FACTS section 1, torchada); they are not inferred
TORCHADA = {"__nv_fp8_e4m3": "__mt_fp8_e4m3", "__NV_E4M3": "__MT_E4M3",
            "__nv_cvt_float_to_fp8": "__musa_cvt_float_to_fp8"}
_NOTE_TORCHADA = "spelled by torchada (MUSA_FACTS section 1)"
_NOTE_CVT = "fp8 conversions take the __musa_cvt_ prefix, after torchada's __nv_cvt_float_to_fp8"
_NOTE_UNSUPPORTED = "no public MUSA source has fp4/fp6 types"


def library_of(decl: Decl, header_library: dict[str, str]) -> str:
    for library, words in _FORMAT_WORDS:
        if words.search(decl.name):
            return library
    return header_library[decl.header]


def _record(decl: Decl, library: str, oracle: Oracle) -> Record:
    if library in UNSUPPORTED:
        return Record(decl.name, decl.kind, "unsupported", section=decl.header,
                      note=_NOTE_UNSUPPORTED, library=library)
    if decl.name in TORCHADA:
        return Record(decl.name, decl.kind, "renamed", TORCHADA[decl.name], section=decl.header,
                      note=_NOTE_TORCHADA, library=library)
    if _CVT.match(decl.name):
        musa = _CVT.sub("__musa_cvt_", decl.name)
        return Record(decl.name, decl.kind, "renamed", musa, inferred=True, section=decl.header,
                      note=_NOTE_CVT, library=library)
    rec = pattern_record(decl, oracle)
    return Record(rec.cuda, rec.kind, rec.status, rec.musa, rec.inferred, rec.section, rec.note, library)


def _wanted(decl: Decl) -> bool:
    if decl.kind == "namespace":
        return False
    if decl.kind == "macro" or decl.name.startswith("___"):
        return has_vendor_word(decl.name) and not decl.name.startswith("___")
    return len(decl.name) > 2


def records(root: Path, oracle: Oracle, claimed: set[str]) -> tuple[list[str], list[Record]]:
    header_library = {h: lib for lib, hs in HEADERS.items() for h in hs}
    present = [h for hs in HEADERS.values() for h in hs if (root / h).is_file()]
    recs = []
    for decl in first_decls(scan_files(root, present)).values():
        if _wanted(decl):
            recs.append(_record(decl, library_of(decl, header_library), oracle))
    for h in present:
        library = header_library[h]
        if library in UNSUPPORTED:
            recs.append(Record(h, "header", "unsupported", note=_NOTE_UNSUPPORTED, library=library))
        else:
            recs.append(header_record(h, oracle, library))
    return present, claim(recs, claimed)
