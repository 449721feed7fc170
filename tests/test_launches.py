"""Launch detection finds every `<<<...>>>` in code with its kernel, config and arguments."""

from musify.frontend.launches import find_kernel_defs, find_launches


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
