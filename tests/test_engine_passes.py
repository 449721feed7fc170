"""The identifier, include and structure passes on small inputs, with a hand-built RuleSet."""

import pytest

from musify.options import Options
from musify.passes.includes import build_project_info
from musify.runner import migrate_text


def run(text, rules, options=None, project=None, path="a.cu"):
    new, ctx, _edits = migrate_text(text, path, rules, options or Options(), project)
    return new, ctx


def ids(ctx):
    return [d.id for d in ctx.diagnostics]


def test_renames_code_but_not_comments_or_strings(rules):
    src = 'cudaMalloc(&p, 4); // cudaMalloc here\nputs("cudaFree failed"); cudaFree(p);\n'
    new, _ = run(src, rules)
    assert new == 'musaMalloc(&p, 4); // cudaMalloc here\nputs("cudaFree failed"); musaFree(p);\n'


def test_rewrite_comments_and_strings_on_request(rules):
    src = 'cudaMalloc(&p, 4); // cudaMalloc here\nputs("cudaFree failed");\n'
    new, _ = run(src, rules, Options(rewrite_comments=True))
    assert new == 'musaMalloc(&p, 4); // musaMalloc here\nputs("cudaFree failed");\n'
    new, _ = run(src, rules, Options(rewrite_strings=True))
    assert new == 'musaMalloc(&p, 4); // cudaMalloc here\nputs("musaFree failed");\n'


def test_macro_bodies_and_inactive_branches_are_migrated(rules):
    src = "#if 0\ncudaFree(p);\n#endif\n#define F(x) cudaFree(x)\n#if CUDA_VERSION > 0\n#endif\n"
    new, _ = run(src, rules)
    assert new == "#if 0\nmusaFree(p);\n#endif\n#define F(x) musaFree(x)\n#if MUSA_COMP_VERSION > 0\n#endif\n"


def test_unsupported_name_left_and_reported(rules):
    new, ctx = run("cudaGraphInstantiateWithParams(&e, g, &p);\n", rules)
    assert new.startswith("cudaGraphInstantiateWithParams")
    assert ids(ctx) == ["MU1002"]
    assert "no MUSA counterpart" in ctx.diagnostics[0].message


def test_inferred_rename_noted_once(rules):
    new, ctx = run("nvrtcCompileProgram(a); nvrtcCompileProgram(b);\n", rules)
    assert new == "mtrtcCompileProgram(a); mtrtcCompileProgram(b);\n"
    assert ids(ctx) == ["MU1004"]


def test_unknown_vendor_name_pending_unless_declared(rules):
    _, ctx = run("cudaFooBar(1);\n", rules)
    assert [n for n, _, _ in ctx.pending_unknown] == ["cudaFooBar"]
    _, ctx = run("#define CUDA_CHECK(x) x\nstatic void cudaCheck(int e);\nint cuCount = 0;\n", rules)
    assert ctx.pending_unknown == [] and {"CUDA_CHECK", "cudaCheck", "cuCount"} <= ctx.declared
    _, ctx = run("obj.cudaThing(); return cudaOther(1);\n", rules)
    assert [n for n, _, _ in ctx.pending_unknown] == ["cudaOther"]


@pytest.mark.parametrize("src, declared, unknown", [
    # PyTorch's CUDAGuard.h and ProcessGroupNCCL.hpp: a parameter and a member of template types
    (("std::vector<Stream> unwrap(ArrayRef<Stream> cudaStreams) { return cudaStreams; }\n"
      "std::unordered_map<std::string, std::vector<int>>* cudaStreamMap_;\n"
      "bool f(int n) { return n > cudaBound || n >> cudaShift; }\n"),
     {"cudaStreams", "cudaStreamMap_"}, ["cudaBound", "cudaShift"]),
    # PyTorch's SDPBackend.h and kineto's ActivityType.h name their enumerators like CUDA's
    (("// this enum names the backends\nenum class SDPBackend { error = -1, cuda_attention = 3 };\n"
      "enum ActivityType : int {\n  CPU_OP,\n  cudaRuntimeX,\n};\n"
      "int v[] = {1, cudaValue}; f(a, cudaArg);\n"),
     {"cuda_attention", "cudaRuntimeX"}, ["cudaArg", "cudaValue"]),
], ids=["template-types", "enumerators"])
def test_declarations_read_from_template_types_and_enums(rules, src, declared, unknown):
    _, ctx = run(src, rules)
    assert declared <= ctx.declared
    # what MU1001 is raised for once the run's declarations are known (finalise)
    assert sorted({n for n, _, _ in ctx.pending_unknown} - ctx.declared) == unknown


def test_ordinary_words_never_touched(rules):
    src = "int CUSTOM = 1, CURRENT = 2; float Accumulate, ACCUMULATOR, Cubic;\n"
    new, ctx = run(src, rules)
    assert new == src and ctx.pending_unknown == []


def test_include_rules_keep_delimiters(rules):
    src = '#include <cuda_runtime.h>\n#include "cuda_fp16.h"\n#include <cutlass/gemm/gemm.h>\n#include <cudnn.h>\n'
    new, ctx = run(src, rules)
    assert new == ('#include <musa_runtime.h>\n#include "musa_fp16.h"\n#include <mutlass/gemm/gemm.h>\n'
                   '#include <cudnn.h>\n')
    assert ids(ctx) == ["MU1005"]


def test_project_header_includes_follow_renames(rules):
    project = build_project_info(["src/a.cu", "src/util.cuh", "include/lib/k.cuh", "src/plain.h"],
                                 {"src/a.cu": "src/a.mu", "src/util.cuh": "src/util.muh",
                                  "include/lib/k.cuh": "include/lib/k.muh"})
    src = ('#include "util.cuh"\n#include <lib/k.cuh>\n#include <cub/cub.cuh>\n#include "plain.h"\n')
    new, _ = run(src, rules, project=project, path="src/a.cu")
    assert new == '#include "util.muh"\n#include <lib/k.muh>\n#include <cub/cub.cuh>\n#include "plain.h"\n'


def test_qualified_names(rules):
    new, _ = run("thrust::cuda::par; thrust :: cuda::par; other::cuda::x;\n", rules)
    assert new == "thrust::musa::par; thrust :: musa::par; other::cuda::x;\n"


def test_kernels_and_launches_counted(rules):
    src = "__global__ void k(float* a) {}\nint main() { k<<<1, 32>>>(0); k<<<2, 64, 0, s>>>(0); }\n"
    _, ctx = run(src, rules)
    assert ctx.facts["kernels"] == 1 and ctx.facts["launches"] == 2 and ctx.facts["launches_parsed"] == 2


def test_lexical_problems_are_errors_but_file_still_migrates(rules):
    new, ctx = run('cudaFree(p);\nputs("open\n/* never closed cudaFree', rules)
    assert new.startswith("musaFree(p);")
    assert ids(ctx) == ["MU0005", "MU0004"]
    assert all(d.severity == "error" for d in ctx.diagnostics)


def test_overlapping_edits_fail_loudly():
    import pytest

    from musify.engine.edits import Edit, OverlappingEdits, merge

    with pytest.raises(OverlappingEdits):
        merge([Edit(0, 5, "x", "a"), Edit(3, 8, "y", "b")])
    assert len(merge([Edit(0, 5, "x", "a"), Edit(0, 5, "x", "a"), Edit(5, 5, "i", "c")])) == 2


def test_protected_spans_drop_edits(rules):
    from musify.engine.edits import Edit
    from musify.runner import drop_protected

    edits = [Edit(0, 4, "a", "r"), Edit(10, 14, "b", "r"), Edit(20, 20, "ins", "r")]
    assert drop_protected(edits, [(8, 16)]) == [edits[0], edits[2]]


def test_launch_tree_sitter_cannot_parse_is_reported(rules):
    new, ctx = run("void f() { k<<<1, 2>>>(a); j<<<g, , b>>>(cudaMalloc(0)); }\n", rules)
    assert "musaMalloc(0)" in new  # names are still migrated
    assert ids(ctx) == ["MU0007"] and "the launch of 'j'" in ctx.diagnostics[0].message
    assert ctx.facts["launches"] == 2 and ctx.facts["launches_parsed"] == 1


def test_a_launch_with_an_extended_lambda_is_read():
    # PyTorch's DistributionTemplates.h passes `[=] __device__ (...) {...}` to its kernels (the
    # execution spaces are tagged in the built-in rules, not in the small test set)
    from musify.rules import load_ruleset

    rules = load_ruleset()
    src = ("void f() {\n  k<T, 4><<<g, b, 0, s>>>(n, [=]__device__(int i, T r) { return r; });\n"
           "  j<<<g, b>>>([&] __host__ __device__ (int i) { return i; });\n}\n")
    new, ctx = run(src, rules)
    assert new == src and ids(ctx) == []
    assert ctx.facts["launches"] == 2 and ctx.facts["launches_parsed"] == 2


def test_a_launch_in_a_macro_body_is_read(rules):
    # PyTorch's TORCH_DSA_KERNEL_LAUNCH: continuations, `#kernel` and `a ## b` in the launch
    src = ("#define LAUNCH(kernel, g, b, s, ...) \\\n  do { \\\n    kernel<<<g, b, 0, s>>>( \\\n"
           "        __VA_ARGS__, \\\n        reg.insert(__FILE__, #kernel, s.id(), x ## _ptr)); \\\n  } while (0)\n")
    _, ctx = run(src, rules)
    assert ids(ctx) == [] and ctx.facts["launches"] == 1 and ctx.facts["launches_parsed"] == 1


def test_rule_diag_with_fields_the_use_site_lacks(rules):
    from musify.rules.model import Rule

    rules.add(Rule(cuda="textureReference", musa=None, kind="type", library="cudart", status="unsupported",
                   diag="MU2031"))
    _, ctx = run("textureReference r;\n", rules)
    assert ids(ctx) == ["MU2031"] and ctx.diagnostics[0].message.startswith("use of 'textureReference'")


def test_include_resolution_memo_keeps_projects_apart() -> None:
    """The memo of resolved includes answers as the resolution itself, per project, when two
    projects are asked in turn about the same (directory, include) pairs."""
    from musify.passes.includes import _resolve, build_project_info, resolve_project_include

    one = build_project_info(["src/a.cu", "src/util.cuh", "include/lib/x.cuh"], {})
    two = build_project_info(["src/a.cu", "lib/util.cuh"], {})
    asks = [("src/a.cu", "util.cuh"), ("src/b.cu", "lib/x.cuh"), ("src/a.cu", "missing.h"), ("top.cu", "util.cuh")]
    for _ in range(2):
        for project in (one, two):
            for including, written in asks:
                expected = _resolve(project, including.rpartition("/")[0], written)
                assert resolve_project_include(project, including, written) == expected
    assert resolve_project_include(one, "src/a.cu", "util.cuh") == "src/util.cuh"
    assert resolve_project_include(two, "src/a.cu", "util.cuh") == "lib/util.cuh"
