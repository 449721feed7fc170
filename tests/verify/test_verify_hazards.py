"""Warp-size diagnostics are confirmed by the designated 32-lane kernel (passes at mp_31, fails at
mp_22) and cleared in a program that has one (a 32-bit full mask) and passes at 128 lanes."""

from __future__ import annotations

from verify_support import CORPORA, INPUTS, ported, program, requires_cxx, verify

from musify.verify.hazards import is_warp_size

pytestmark = requires_cxx


def test_warp_size_diagnostics_confirmed_and_cleared(tmp_path):
    original, port, record = ported(tmp_path, CORPORA / "warp32_only", INPUTS / "full_mask")
    section = verify(record, port, original, archs=("mp_22", "mp_31"))
    w32 = program(section, "warp32_only")
    assert w32["archs"]["mp_31"]["verdict"] == "pass"
    assert w32["archs"]["mp_22"]["verdict"] == "fail"
    assert w32["hazards"] == "confirmed"
    full_mask = program(section, "full_mask")
    assert {a["verdict"] for a in full_mask["archs"].values()} == {"pass"} and full_mask["hazards"] == "cleared"
    by_name = {f.path.split("/")[-2]: f for f in record.files if f.path.endswith(".cu")}
    confirmed = [d for d in by_name["warp32_only"].diagnostics if is_warp_size(d)]
    assert confirmed and all(d.verify == "confirmed" and "mp_22" in d.message for d in confirmed)
    assert section["totals"]["hazards"]["confirmed"] == len(confirmed)
    assert any(d.id == "MU5002" for d in by_name["warp32_only"].diagnostics)
    cleared = [d for d in by_name["full_mask"].diagnostics if is_warp_size(d)]
    assert cleared and all(d.verify == "cleared" and d.severity == "note" for d in cleared)
    assert section["totals"]["hazards"]["cleared"] == len(cleared)
