"""Names a project's macros paste into other names are not unrecognised (musify/passes/macro_pastes.py).

NVTX writes `NVTX_VERSIONED_IDENTIFIER(nvtxGlobals).name`, where the macro (defined in another
header, through two forwarding macros) pastes `nvtxGlobals_v3`: the CUDA 13 headers reported 595
such arguments MU1001.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from musify import api
from musify.options import Options
from musify.passes import macro_pastes

HEADER = """#define VERSIONED_L3(NAME, VERSION) NAME##_v##VERSION
#define VERSIONED_L2(NAME, VERSION) VERSIONED_L3(NAME, VERSION)
#define VERSIONED(NAME) VERSIONED_L2(NAME, NVTX_VERSION)
#define PASTE_ALL(...) prefix_##__VA_ARGS__
#define CHECK(x) x
"""

SOURCE = """#include "ext.h"
void f() {
  VERSIONED(nvtxGlobals).a = 1;
  VERSIONED( nvtxInitOnce )();
  PASTE_ALL(nvtxThing) = 2;
  CHECK(nvtxSomething);
  nvtxOther(1);
  VERSIONED(nvtxGlobals).b = 2;
}
"""


def _unrecognised(tmp_path: Path, **options) -> list[tuple[str, int]]:
    src = tmp_path / "in"
    if not src.exists():
        src.mkdir()
        (src / "ext.h").write_text(HEADER)
        (src / "impl.cu").write_text(SOURCE)
    out = tmp_path / f"out{len(list(tmp_path.glob('out*')))}"
    record, _ = api.migrate([str(src)], Options(**{"cache": False, **options}), "out", str(out))
    return [(d.name, d.line) for f in record.files for d in f.diagnostics if d.id == "MU1001"]


def test_a_pasted_argument_is_no_unrecognised_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Arguments the header's macros paste (through forwarding macros too, and `__VA_ARGS__`) are
    passed over in every way of running; a macro that does not paste, and a plain call, are not."""
    want = [("nvtxSomething", 6), ("nvtxOther", 7)]
    assert _unrecognised(tmp_path) == want
    assert _unrecognised(tmp_path, jobs=2) == want
    from musify.passes import identifiers

    monkeypatch.setattr(identifiers, "_COMPILED", None)  # the reference rename loop decides the later uses
    assert _unrecognised(tmp_path) == want


def test_without_the_pasting_definition_the_names_are_reported(tmp_path: Path) -> None:
    src = tmp_path / "in"
    src.mkdir()
    (src / "ext.h").write_text("#define VERSIONED(NAME) NAME\n#define PASTE_ALL(...) __VA_ARGS__\n#define CHECK(x) x\n")
    (src / "impl.cu").write_text(SOURCE)
    assert [name for name, _ in _unrecognised(tmp_path)] == [
        "nvtxGlobals", "nvtxInitOnce", "nvtxThing", "nvtxSomething", "nvtxOther", "nvtxGlobals"]


def test_call_argument_reads_the_callee_and_the_position() -> None:
    text = "f(a, g(b), c); h(x); k(y + z); m[w];"
    at = {name: text.index(name) for name in ("a", "b", "c", "x", "y", "z", "w")}
    assert macro_pastes.call_argument(text, at["a"], at["a"] + 1) == ("f", 0)
    assert macro_pastes.call_argument(text, at["b"], at["b"] + 1) == ("g", 0)
    assert macro_pastes.call_argument(text, at["c"], at["c"] + 1) == ("f", 2)
    assert macro_pastes.call_argument(text, at["x"], at["x"] + 1) == ("h", 0)
    assert macro_pastes.call_argument(text, at["y"], at["y"] + 1) is None  # not a whole argument
    assert macro_pastes.call_argument(text, at["w"], at["w"] + 1) is None  # a subscript
