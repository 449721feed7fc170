"""The threshold policy: exact entries, nearest lower entry, below every entry; parsing --arch-map."""

from __future__ import annotations

import pytest

from musify.arch import DEFAULT_MAP, parse_arch_map, translate


@pytest.mark.parametrize("value, musa, exact", [
    (800, 220, True), (900, 310, True), (860, 220, False), (890, 220, False), (1000, 310, False),
    (700, 210, False), (530, 210, False),
])
def test_translate(value: int, musa: int, exact: bool) -> None:
    tr = translate(value, DEFAULT_MAP)
    assert (tr.musa, tr.exact) == (musa, exact)
    assert "sm_80->220" in tr.policy


def test_not_an_arch_value() -> None:
    assert translate(8, DEFAULT_MAP) is None
    assert translate(805, DEFAULT_MAP) is None


def test_parse_arch_map() -> None:
    assert parse_arch_map("80=220,90=310") == ((80, 220), (90, 310))
    assert parse_arch_map("sm_90=mp_31, sm_80=mp_22") == ((80, 220), (90, 310))
    assert parse_arch_map({"80": 210}) == ((80, 210),)
    with pytest.raises(ValueError):
        parse_arch_map("80:220")
    with pytest.raises(ValueError):
        parse_arch_map("eighty=220")


def test_an_untranslatable_test_is_quoted_from_its_own_line_in_whole_tokens() -> None:
    # PyTorch's CUDALoops.cuh: the excerpt reached back into the code line before the directive
    from musify.options import Options
    from musify.rules import load_ruleset
    from musify.runner import migrate_text

    text = ("__global__ void k() {\n  if constexpr (vec_size == 8) {\n"
            "#if __CUDA_ARCH__ / 100 == 9 || __CUDA_ARCH__ / 100 == 10\n#endif\n  }\n}\n")
    _, ctx, _ = migrate_text(text, "a.cu", load_ruleset(), Options())
    quoted = [d.message.split("'")[1] for d in ctx.diagnostics if d.id == "MU2002"]
    assert quoted == ["#if __CUDA_ARCH__ / 100 == 9", "100 == 9 || __CUDA_ARCH__ / 100 == 10"]
