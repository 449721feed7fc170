"""A header name tested in an `#if` (`__has_include(<cuda_fp16.h>)`, CCCL's `_CCCL_HAS_INCLUDE`)
is ported as the `#include` it guards: renamed by the same rules, its words no identifiers."""

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from musify.frontend import header_tests, scanner
from musify.frontend.scanner import VENDOR_PREFIXES, Ctx, scan_python
from musify.options import Options
from musify.passes.includes import build_project_info
from musify.rules import load_ruleset
from musify.runner import migrate_text


@pytest.fixture(scope="module")
def ruleset():
    return load_ruleset()


def migrate(text, ruleset, project=None, path="a.cu"):
    new, ctx, _ = migrate_text(text, path, ruleset, Options(), project)
    return new, [d.id for d in ctx.diagnostics]


def test_a_tested_header_is_renamed_with_the_include_it_guards(ruleset):
    # CCCL's pattern: before, the include became <musa_fp16.h> while the test still asked for
    # <cuda_fp16.h>, which MUSA has not: the port dropped its half-precision code silently
    src = ("#if __has_include(<cuda_fp16.h>)\n#include <cuda_fp16.h>\n#endif\n"
           "#if _CCCL_HAS_INCLUDE(<cuda_runtime_api.h>) && _CCCL_HAS_INCLUDE( \"cuda_bf16.h\" )\n#endif\n"
           "#elif defined(__has_include) && __has_include_next(<cuda_fp16.h>)\n")
    new, ids = migrate(src, ruleset)
    assert new == ("#if __has_include(<musa_fp16.h>)\n#include <musa_fp16.h>\n#endif\n"
                   "#if _CCCL_HAS_INCLUDE(<musa_runtime_api.h>) && _CCCL_HAS_INCLUDE( \"musa_bf16.h\" )\n#endif\n"
                   "#elif defined(__has_include) && __has_include_next(<musa_fp16.h>)\n")
    assert "MU1001" not in ids  # `cuda_fp16`, `cuda_runtime_api`: a header's name, not a CUDA name


def test_a_tested_project_header_follows_its_rename(ruleset):
    project = build_project_info(["src/a.cu", "src/util.cuh"], {"src/a.cu": "src/a.mu", "src/util.cuh": "src/util.muh"})
    new, _ = migrate('#if __has_include("util.cuh")\n#include "util.cuh"\n#endif\n', ruleset, project, "src/a.cu")
    assert new == '#if __has_include("util.muh")\n#include "util.muh"\n#endif\n'


@pytest.mark.parametrize("src", [
    "#if 0 /* __has_include(<cuda_fp16.h>) */\n#endif\n",  # in a comment
    "#if HAS_HEADER(<cuda_fp16.h>)\n#endif\n",  # a macro whose name says nothing of includes
    '#if __has_include("a" "cuda_fp16.h")\n#endif\n',  # no one string
    "int x = __has_include(<cuda_fp16.h>);\n",  # not a condition (no `#if`)
    '#pragma message(__has_include("cuda_fp16.h"))\n',  # not a condition
])
def test_what_is_no_header_test_is_left(ruleset, src):
    assert migrate(src, ruleset)[0] == src


def test_header_tests_are_includes_and_spans_in_order():
    text = '#include <a.h>\n#if /* c */ __has_include(<cuda_fp16.h>) || X_HAS_INCLUDE("b.h") // d\n#include "c.h"\n'
    made = scanner.scan(text)
    assert [(i.path, i.angled) for i in made.includes] == [("a.h", True), ("cuda_fp16.h", True), ("b.h", False),
                                                           ("c.h", False)]
    assert all(i.directive_start == 15 for i in made.includes[1:3])
    assert [c for _, _, c in made.spans] == [Ctx.INCLUDE, Ctx.COMMENT, Ctx.INCLUDE, Ctx.INCLUDE, Ctx.COMMENT,
                                            Ctx.INCLUDE]
    assert sorted(made.spans) == made.spans
    assert "cuda_fp16" not in made.idents.names and not list(made.idents)
    assert made.code_map().span_end(text.index("cuda_fp16")) is not None  # not code


# pieces of conditions with and without header tests, and the text around them
FRAGMENTS = ["#if ", "#elif ", "#define ", "#include ", "__has_include", "_CCCL_HAS_INCLUDE", "HAS_HEADER",
             "(", ")", "<cuda_fp16.h>", "<cuda/std/cstdint>", '"cuda_bf16.h"', '"a" "b.h"', "<a b>", " ", "\n",
             "\\\n", "/* c */", "// d\n", "cudaMalloc", "defined(__has_include)", " && ", "include", "INCLUDE"]
texts = st.lists(st.sampled_from(FRAGMENTS), max_size=30).map("".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts)
@example("#if __has_include(<cuda_fp16.h>) && __has_include(<cuda_fp16.h>)\n")
def test_both_scanners_find_the_same_header_tests(text):
    # the compiled scanner's count of `#if` lines holding the word is the only gate: where it
    # says none, `apply` finds none either (the pure-Python path always asks `apply`)
    reference = header_tests.apply(text, scan_python(text, VENDOR_PREFIXES))
    made = scanner.scan(text, VENDOR_PREFIXES)
    assert (made.idents, made.includes, made.directives, made.spans, made.problems) == (
        reference.idents, reference.includes, reference.directives, reference.spans, reference.problems)


def test_a_tested_header_is_ported_back_with_reverse():
    from musify.rules.reverse import load_for

    options = Options(reverse=True)
    src = "#if __has_include(<musa_fp16.h>)\n#include <musa_fp16.h>\n#endif\n"
    new, _, _ = migrate_text(src, "a.mu", load_for(options), options)
    assert new == "#if __has_include(<cuda_fp16.h>)\n#include <cuda_fp16.h>\n#endif\n"
