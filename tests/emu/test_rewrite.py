"""The launch and extern __shared__ rewriting (pure Python, no compiler)."""

from __future__ import annotations

from musify.emu.rewrite import rewrite


def test_launch_keeps_config_args_and_lines():
    src = "void f() {\n  ns::k<float, 4><<<g,\n    b, 0, s>>>(x, y); // k<<<1,1>>>()\n}\n"
    out = rewrite(src, "a.cu")
    assert out.startswith('#line 1 "a.cu"\n')
    body = out.split("\n", 1)[1]
    assert body.count("\n") == src.count("\n")
    assert "::emu::launch_via([&](auto&... emu_args) { ns::k<float, 4>(emu_args...); })(g,\n    b, 0, s)(x, y);" in body
    assert "// k<<<1,1>>>()" in body  # comments are left alone


def test_launch_inside_a_macro():
    out = rewrite("#define RUN(k, n) k<<<n, 32>>>(p)\n", "m.cu")
    assert "#define RUN(k, n) ::emu::launch_via([&](auto&... emu_args) { k(emu_args...); })(n, 32)(p)" in out


def test_extern_shared_in_a_function_and_at_namespace_scope():
    src = (
        "extern __shared__ float gbuf[];\n"
        "namespace a { extern __shared__ __align__(16) unsigned char raw[]; }\n"
        "template <class T> __global__ void k() {\n  extern __shared__ T s[];\n}\n"
    )
    out = rewrite(src, "s.cu")
    assert "static ::emu::DynamicShared<float> gbuf;" in out
    assert "static ::emu::DynamicShared<unsigned char> raw;" in out
    assert "T* const s = reinterpret_cast<T*>(::emu::dynamic_shared());" in out


def test_kernels_launched_through_void_pointers_are_registered():
    src = (
        "namespace q { __global__ void k(int* p) {} }\n"
        "template <class T> __global__ void t(T) {}\n"
        "__global__ void g(float a) {}\n"
        "int main() { cudaLaunchKernel((void*)g, 1, 1, args); }\n"
    )
    out = rewrite(src, "r.cu")
    assert "::emu::register_kernel(&::g);" in out
    assert "::emu::register_kernel(&::q::k);" in out
    assert "&::t" not in out
    assert "register_kernel" not in rewrite("__global__ void g() {}\n", "n.cu")
