"""Launch detection finds every `<<<...>>>` in code with its kernel, config and arguments."""

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from musify.frontend import syntax
from musify.frontend.launches import count_kernel_defs, find_kernel_defs, find_launches
from musify.frontend.scanner import scan


def test_simple_and_templated_and_namespaced():
    text = ("k<<<g, b>>>(a, n);\n"
            "ns::kern<float, 4><<<dim3(1, 2), 256, smem, stream>>>(x, f(y, z));\n"
            "::top<<<1,1>>>();\n")
    ls = find_launches(text)
    assert [l.kernel for l in ls] == ["k", "ns::kern<float, 4>", "::top"]
    assert ls[1].config == ["dim3(1, 2)", "256", "smem", "stream"]
    assert text[ls[1].args_start:ls[1].args_end] == "(x, f(y, z))"
    assert [l.line for l in ls] == [1, 2, 3]


def test_launch_in_macro_body_and_not_in_comment_or_string():
    text = ('#define LAUNCH(k, g, b, ...) k<<<g, b>>>(__VA_ARGS__)\n'
            '// k<<<1, 1>>>(x);\nconst char* s = "k<<<1,1>>>()";\n')
    ls = find_launches(text)
    assert len(ls) == 1 and ls[0].kernel == "k" and ls[0].config == ["g", "b"]


def test_launch_split_over_lines():
    text = "kern<<<\n  grid,\n  block>>>(\n  a,\n  b);\n"
    (l,) = find_launches(text)
    assert l.config == ["grid", "block"] and l.line == 1


def test_kernel_definitions():
    text = ("template <typename T> __global__ void __launch_bounds__(256) scale(T* a) {}\n"
            "__global__ void add(float* a);\n// __global__ void no(int);\n")
    assert [(k.name, k.line) for k in find_kernel_defs(text)] == [("scale", 1), ("add", 2)]


# --- the structure pass's launch count: `<<<` tokens against a tree-sitter query ---------------

LAUNCH_PIECES = ["k<<<1, 2>>>(a, b);", "ns::k<T><<<g, b, 0, s>>>(x);", "k<<<1,1>>>(y<<<2,2>>>(z));",
                 "k<<</* <<< */ 1, 1>>>();", 'k<<<1, 1>>>("<<<");', "a << < b;", "x <<<", ">>>", "<<<",
                 "(", ")", ";", "\n", " ", "k", "1", ",", "<<<<", "// <<<\n", "#if A\n", "#endif\n"]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(LAUNCH_PIECES), max_size=12).map("".join))
@example("k<<<1, 2>>>(a, b);\nk<<<1,1>>>(y<<<2,2>>>(z));")
def test_kernel_calls_counted_as_the_query_counts_them(snippet: str) -> None:
    tree = syntax.parse_statement(snippet)
    if tree.ok:  # the structure pass counts only on trees without errors
        assert syntax.count_kernel_calls(tree.root) == syntax.count_nodes(tree.root, "kernel_call_syntax")


def test_kernel_definitions_counted_as_listed() -> None:
    text = ("__global__ void a() {}\n// __global__ void b();\nx__global__ void c();\n"
            "template <int N> __global__ __launch_bounds__(256) void d(int *p);\n__global__x y();\n")
    assert count_kernel_defs(text, scan(text).code_map()) == len(find_kernel_defs(text)) == 2
