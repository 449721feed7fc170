"""Unterminated literals in groups `#if 0` turns off are warnings, not errors (compilers only warn
there; PyTorch's Dispatch_v2.h keeps Python under `#if 0`)."""

from __future__ import annotations

from musify.frontend.scanner import scan
from musify.frontend.skipped import inside, skipped_groups
from musify.options import Options
from musify.rules import load_ruleset
from musify.runner import migrate_text


def _severities(text: str) -> list[tuple[int, str, str]]:
    _, ctx, _ = migrate_text(text, "a.cu", load_ruleset(), Options())
    return [(d.line, d.id, d.severity) for d in ctx.diagnostics if d.id in ("MU0004", "MU0005")]


def test_python_under_if_0_is_a_warning_and_the_same_outside_an_error() -> None:
    text = ("#if 0\n"
            "for i in range(1, n):\n"
            "    print('#define AT_AP', i)  # a ' alone\n"
            "#endif\n"
            "int a = 'x;\n")
    assert _severities(text) == [(3, "MU0005", "warning"), (5, "MU0005", "error")]


def test_the_else_of_if_0_is_compiled_and_nesting_is_followed() -> None:
    text = ("#if (0) // off\n"
            "#if FOO\n"
            "say ' this\n"
            "#else\n"
            "say ' this\n"
            "#endif\n"
            "say ' this\n"
            "#else\n"
            "say ' this\n"
            "#endif\n")
    assert [s for _, _, s in _severities(text)] == ["warning", "warning", "warning", "error"]


def test_conditions_that_need_a_macro_are_not_known_to_be_skipped() -> None:
    for cond in ("#if 0 && FOO", "#if 00x", "#if ZERO", "#ifdef NEVER", "#if 0x0"):
        text = f"{cond}\nsay ' this\n#endif\n"
        assert _severities(text) == [(2, "MU0005", "error")], cond


def test_an_unterminated_comment_stays_an_error_and_an_open_if_0_runs_to_the_end() -> None:
    assert _severities("#if 0\n/* never closed\n") == [(2, "MU0004", "error")]
    assert _severities("#if false\nsay ' this\n") == [(2, "MU0005", "warning")]


def test_groups_are_outermost_and_sorted() -> None:
    text = "#if 0\n#if 0\nx\n#endif\n#endif\n#if 0\ny\n#elif 1\nz\n#endif\n#endif\n"
    groups = skipped_groups(text, scan(text, ()).directives)
    assert groups == [(5, text.index("#endif\n#if 0")), (text.index("\ny\n"), text.index("#elif"))]
    assert inside(groups, text.index("x\n")) and inside(groups, text.index("y\n"))
    assert not inside(groups, text.index("z\n")) and not inside(groups, 0)
