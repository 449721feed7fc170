"""Messages a user can follow: no diagnostic text, and no rule note that ends up in one, names an
internal document or another project's pull request; the reason and its evidence are on the
diagnostic's page in docs/diagnostics/, with public links."""

from __future__ import annotations

import re
from pathlib import Path

from musify.diagnostics import CATALOGUE
from musify.rules import load_ruleset

DOCS = Path(__file__).resolve().parents[2] / "docs" / "diagnostics"
INTERNAL = re.compile(r"MUSA_FACTS|PR\s*#\d+|pull request|section \d", re.IGNORECASE)


def test_no_message_template_cites_an_internal_source() -> None:
    bad = [f"{spec.id}: {spec.template}" for spec in CATALOGUE.values() if INTERNAL.search(spec.template)]
    assert not bad


def test_no_note_that_reaches_a_message_cites_an_internal_source() -> None:
    """Notes of unsupported records are appended to MU1002/MU1005 messages."""
    bad = [f"{r.origin}: {r.note}" for r in load_ruleset().all_rules()
           if r.status == "unsupported" and r.note and INTERNAL.search(r.note)]
    assert not bad, bad[:5]


def test_hazard_pages_give_public_evidence_and_no_internal_source() -> None:
    for diag_id in sorted(i for i in CATALOGUE if i.startswith("MU20")):
        text = (DOCS / f"{diag_id}.md").read_text(encoding="utf-8")
        assert "MUSA_FACTS" not in text, diag_id
        for cited in re.findall(r"(?<!\[)(?:torchada|llama\.cpp|sglang) PR #\d+(?!\])", text):
            raise AssertionError(f"{diag_id}: '{cited}' is not a link")


def test_a_qualifier_macro_before_a_condition_makes_no_device_code() -> None:
    """CUDA's cuda_runtime_api.h defines `CUDART_DEVICE __device__` and then opens
    `#if !defined(...)`: the condition's parentheses are no function's parameters, so a host call
    inside the guarded block is not reported as device code (it was: MU2032 in `defined()`), and a
    real device function after it still is."""
    from musify.options import Options
    from musify.rules import load_ruleset
    from musify.runner import migrate_text

    text = ("#define CUDART_DEVICE __device__\n#if !defined(__CUDACC_RTC__)\n"
            "static inline void host_sync() { cudaDeviceSynchronize(); }\n#endif\n"
            "__device__ void dev_sync() { cudaDeviceSynchronize(); }\n")
    _, ctx, _ = migrate_text(text, "a.cu", load_ruleset(), Options())
    found = [(d.id, d.line) for d in ctx.found.diagnostics if d.id == "MU2032"]
    assert found == [("MU2032", 5)]
