"""The runner skips a pass on a file without the words its findings need, and leaves out a pass
the run's rules and options make idle (`languages.plan`): a file's result is then what calling
every pass gives."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from musify import runner
from musify.discover import classify
from musify.frontend.scanner import LineIndex, scan
from musify.options import Options
from musify.passes import languages
from musify.passes._base import PassContext, ProjectInfo
from musify.rules import load_ruleset

ROOT = Path(__file__).resolve().parents[1]
RULES = load_ruleset()


def _result(ctx: PassContext, edits) -> tuple:
    f = ctx.found
    return ([tuple(e) for e in edits], [d.to_json() for d in f.diagnostics], sorted(f.declared),
            f.pending_unknown, sorted(f.unconverted.items()), sorted(f.facts.items()), f.protected)


def _every_pass(language, ruleset, options):
    """A plan that calls every pass on every file: what the runner did before the gates."""
    return languages.Plan(tuple((name, run, None, 0, None) for name, run in language.passes), ())


@pytest.mark.parametrize("reverse", [False, True])
def test_gated_and_ungated_runs_give_the_same_results(monkeypatch, reverse) -> None:
    options = Options(reverse=reverse)
    files = sorted(p for p in (ROOT / "corpora").rglob("*") if p.is_file() and p.suffix in (".cu", ".cuh", ".cpp", ".h"))
    assert len(files) > 20
    gated = [_result(*runner.edit_text(p.read_text("utf-8", "surrogateescape"), p.name, RULES, options))
             for p in files]
    front = runner._FRONT  # the runner's own reference to `plan`, made by the first file: patch it there
    assert front and front[3] is languages.plan
    monkeypatch.setattr(runner, "_FRONT", [*front[:3], _every_pass, *front[4:]])
    every = [_result(*runner.edit_text(p.read_text("utf-8", "surrogateescape"), p.name, RULES, options))
             for p in files]
    assert gated == every


def test_the_plan_leaves_out_idle_passes_and_keeps_the_words() -> None:
    language = languages.language_for(classify("a.cu"))
    forward = languages.plan(language, RULES, Options())
    names = [name for name, *_ in forward.passes]
    assert "semantic" not in names and "reverse" not in names and "version_macros" in names
    words = {name: needs for name, _, needs, *_ in forward.passes}
    assert words["arch_guards"] == RULES.tagged("arch-macro") and words["identifiers"] is None
    assert forward.prefixes is languages.scanner_prefixes(RULES)
    reverse = languages.plan(language, RULES, Options(reverse=True))
    assert "version_macros" not in [name for name, *_ in reverse.passes]
    assert languages.plan(language, RULES, Options()) is not forward  # another options object: made again
    semantic = Options(semantic=True)
    assert "semantic" in [name for name, *_ in languages.plan(language, RULES, semantic).passes]


# text made of the gated passes' words in code, comments, strings and longer words
PIECES = ["__CUDA_ARCH__", "CUDA_VERSION", "CUDART_VERSION", "__CUDA_ARCH__x", "x__CUDA_ARCH__", ">= 800", " ", "\n",
          "#if ", "#define M ", "/* __CUDA_ARCH__ >= 700 */", '"CUDA_VERSION >= 11000"', "// CUDA_VERSION 9000\n",
          "(", ")", ";", "{", "}", "int x = ", "cudaMalloc(&p, 4)", "__shfl_sync(0xffffffff, v, 1)", "12000", "<", "==",
          "hexp(h)", "__reduce_add_sync(m, v)", "h2exp", "xhexp", "__CUDACC_VER_MAJOR__ > 11"]


def _gated_passes():
    language = languages.language_for(classify("a.cu"))
    plan = languages.plan(language, RULES, Options())
    return [(name, run, needs) for name, run, needs, *_ in plan.passes if needs is not None]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(PIECES), max_size=25).map("".join))
def test_a_gated_pass_finds_nothing_without_its_words(text: str) -> None:
    sc = scan(text, languages.scanner_prefixes(RULES))
    for name, run, needs in _gated_passes():
        ctx = PassContext("a.cu", text, sc, RULES, Options(), ProjectInfo(), LineIndex(text))
        ctx.found.current_pass = name
        edits = run(ctx)
        if needs.isdisjoint(sc.idents.names):
            assert not sc.may_hold(needs)
            assert not edits and _result(ctx, []) == _result(dataclasses.replace(ctx, found=type(ctx.found)()), []), name


def test_scanner_prefixes_are_those_of_every_name_with_an_edit_or_a_diagnostic() -> None:
    from musify.frontend.scanner import candidate_prefixes
    from musify.rules.model import Rule, RuleSet

    small = RuleSet()
    for rule in (Rule("cudaX", "musaX", "function", "cudart", "renamed"), Rule("thrust::cuda", "thrust::musa", "namespace",
                 "thrust", "renamed"), Rule("keptName", "keptName", "function", "x", "unchanged"),
                 Rule("warnMe", "warnMe", "function", "x", "unchanged", diag="MU2030"),
                 Rule("half2exp", "h2exp_m", "function", "x", "renamed")):
        small.add(rule)
    for ruleset in (RULES, small):
        names = {n for n, r in ruleset.names.items() if r.status != "unchanged" or r.diag}
        expected = candidate_prefixes(names | set(ruleset.qualified))
        assert languages.scanner_prefixes(ruleset) == expected
    assert "war" in languages.scanner_prefixes(small) and "kep" not in languages.scanner_prefixes(small)
