"""CMake, Makefile and shell front ends: comments, bracket arguments and quoting survive; the
CUDA toolchain words are rewritten; a file the lexer cannot read is left alone with a diagnostic."""

from __future__ import annotations

import glob
from pathlib import Path

import pytest

from musify.frontend.cmake import scan_cmake
from musify.frontend.make import scan_make, scan_shell
from musify.options import Options
from musify.rules import load_ruleset
from musify.runner import migrate_text


@pytest.fixture(scope="module")
def rules():
    return load_ruleset()


def port(rules, text: str, path: str) -> tuple[str, list]:
    new, ctx, _ = migrate_text(text, path, rules, Options())
    again, _, edits = migrate_text(new, path, rules, Options())
    assert edits == [] and again == new, f"not a fixed point:\n{new}"
    return new, ctx.diagnostics


def test_cmake_lexer_keeps_comments_brackets_and_quotes():
    text = ('set(A [==[ -arch=sm_80 ]==] "x;y" b\\ c) # tail\n'
            '#[[ block\ncomment ]]\nfoo(\n  # inner\n  "q(")\n')
    sc = scan_cmake(text)
    assert sc.tree.error == ""
    assert [c.name for c in sc.tree.commands] == ["set", "foo"]
    assert [a.kind for a in sc.tree.commands[0].args] == ["unquoted", "bracket", "quoted", "unquoted"]
    comments = [text[s:e] for s, e, _ in sc.spans if text[s] == "#"]
    assert comments == ["# tail", "#[[ block\ncomment ]]", "# inner"]


def test_cmake_rewrites_and_leaves_brackets_and_comments(rules):
    src = ("# CUDA comment: CUDA::cudart -arch=sm_80\n"
           "project(p LANGUAGES CUDA)\n"
           "set(DOC [[ -arch=sm_80 CUDA::cudart ]])\n"
           "cuda_add_library(k k.cu)\n"
           "target_link_libraries(k CUDA::cudart)\n")
    new, diags = port(rules, src, "CMakeLists.txt")
    assert new == ("# CUDA comment: CUDA::cudart -arch=sm_80\n"
                   "project(p LANGUAGES CXX)\n"
                   "list(APPEND CMAKE_MODULE_PATH ${MUSA_HOME}/cmake)\n"
                   "find_package(MUSA REQUIRED)\n"
                   "set(DOC [[ -arch=sm_80 CUDA::cudart ]])\n"
                   "musa_add_library(k k.cu)\n"
                   "target_link_libraries(k MUSA::musart)\n")
    assert "MU6040" in [d.id for d in diags]


def test_cmake_that_does_not_lex_is_left_unchanged(rules):
    src = 'set(X "unterminated\nfind_package(CUDA)\n'
    new, diags = port(rules, src, "CMakeLists.txt")
    assert new == src and [d.id for d in diags] == ["MU6044"]


def test_make_comments_and_shell_comments_are_untouched(rules):
    src = "# nvcc -arch=sm_80 -lcudart\nNVCC ?= nvcc  # the compiler: nvcc\nall:\n\t$(NVCC) -arch=sm_70 -lcudart x.cu # build\n"
    new, _ = port(rules, src, "Makefile")
    assert new == ("# nvcc -arch=sm_80 -lcudart\nNVCC ?= mcc  # the compiler: nvcc\nall:\n"
                   "\t$(NVCC) --offload-arch=mp_21 -lmusart x.cu # build\n")
    sh = 'echo "$# args" # nvcc\nnvcc -Xcompiler -fPIC --expt-relaxed-constexpr -o a a.cu\n'
    new, diags = port(rules, sh, "build.sh")
    assert new == 'echo "$# args" # nvcc\nmcc -Xcompiler -fPIC -o a a.cu\n'
    assert [d.id for d in diags].count("MU6020") == 1


def test_make_and_shell_scanners_split_comments():
    assert [(s, e) for s, e, _ in scan_make("a := 1 # c\n\tb # d\n").spans] == [(7, 10), (14, 17)]
    assert scan_shell("x='#'; y=${#z} # c\n").spans[0][0] == 15


def test_requirements_pins_are_reported_not_rewritten(rules):
    src = "numpy\ncupy-cuda12x==13.0  # gpu\ntorch==2.1.0+cu118\ncustom+custom\n"
    new, diags = port(rules, src, "requirements.txt")
    assert new == src
    assert [(d.id, d.line) for d in diags] == [("MU6030", 2), ("MU6030", 3)]


CMAKE_MODULES = sorted(glob.glob("/usr/share/cmake*/Modules/*.cmake"))[:60]


@pytest.mark.skipif(not CMAKE_MODULES, reason="no CMake modules installed")
def test_real_cmake_modules_migrate_without_crashing_and_reruns_are_no_ops(rules):
    """CMake's own modules (code we did not write): no crash, comments intact, a rerun changes nothing."""
    for path in CMAKE_MODULES:
        text = Path(path).read_text(encoding="utf-8", errors="surrogateescape")
        new, ctx, _ = migrate_text(text, path, rules, Options())
        assert not [d for d in ctx.diagnostics if d.id in ("MU0001", "MU0022")], path
        before = [text[s:e] for s, e, _ in scan_cmake(text).spans if text[s] == "#"]
        after = [new[s:e] for s, e, _ in scan_cmake(new).spans if new[s] == "#"]
        assert before == after, path
        _again, _, edits = migrate_text(new, path, rules, Options())
        assert edits == [], path


def test_cmake_sources_through_a_variable_and_unknown_targets(rules):
    src = ("project(p CXX CUDA)\n"
           "set(SRCS a.cpp k.cu)\n"
           "add_library(lib ${SRCS})\n"
           "add_library(iface INTERFACE)\n"
           "target_link_libraries(lib CUDA::cudart CUDA::culibos)\n"
           "add_compile_options(\"$<$<COMPILE_LANGUAGE:CUDA>:--extended-lambda>\")\n")
    new, diags = port(rules, src, "CMakeLists.txt")
    assert "musa_add_library(lib ${SRCS})" in new and "add_library(iface INTERFACE)" in new
    assert "MUSA::musart CUDA::culibos" in new
    assert sorted(d.name for d in diags if d.id == "MU6042") == ["$<COMPILE_LANGUAGE:CUDA>", "CUDA::culibos"]


def test_cmake_targets_a_public_musa_build_spells(rules):
    """llama.cpp's ggml-musa/CMakeLists.txt links `MUSA::musart_static MUSA::mublas_static` and
    `MUSA::musa_driver` where its CUDA build links the CUDA:: forms, and tests `MUSAToolkit_FOUND`:
    documented names, so no best-guess diagnostic (MU6021); `CUDA::curand` stays a guess."""
    src = ("find_package(CUDAToolkit REQUIRED)\n"
           "if (CUDAToolkit_FOUND)\n"
           "  target_link_libraries(g PRIVATE CUDA::cudart_static CUDA::cublas_static CUDA::cuda_driver)\n"
           "  target_link_libraries(h PRIVATE CUDA::cublas CUDA::curand)\n"
           "endif()\n")
    new, diags = port(rules, src, "CMakeLists.txt")
    assert new == ("find_package(MUSAToolkit REQUIRED)\n"
                   "if (MUSAToolkit_FOUND)\n"
                   "  target_link_libraries(g PRIVATE MUSA::musart_static MUSA::mublas_static MUSA::musa_driver)\n"
                   "  target_link_libraries(h PRIVATE MUSA::mublas MUSA::murand)\n"
                   "endif()\n")
    guesses = [d for d in diags if d.id == "MU6021"]
    assert [d.line for d in guesses] == [4] and "'CUDA::curand'" in guesses[0].message


def test_make_words_with_assignments_quotes_and_include_paths(rules):
    """Shapes seen in real Makefiles: `:=` glued to a flag, quotes that pair up inside one word,
    install paths after -L/-I, a quoted compiler path, relocatable device code."""
    src = ('NVCC :="/usr/local/cuda/bin/nvcc"\n'
           "FLAGS :=-lineinfo -O3 -rdc=true\n"
           'PTX=-Xptxas="-v" -O2\n'
           "LIBS=-L/usr/local/cuda/lib64 -I/opt/cuda/include -lcudart\n")
    new, diags = port(rules, src, "Makefile")
    assert new == ('NVCC :="/usr/local/musa/bin/mcc"\n'
                   "FLAGS := -O3 -fgpu-rdc\n"
                   "PTX= -O2\n"
                   "LIBS=-L/usr/local/musa/lib -I/usr/local/musa/include -lmusart\n")
    assert sorted({d.id for d in diags}) == ["MU6020", "MU6021"]


def test_pyproject_pins_are_reported(rules):
    src = '[project]\ndependencies = ["numpy", "nvidia-cudnn-cu12==9.1", "cupy-cuda12x"]  # gpu\n'
    new, diags = port(rules, src, "pyproject.toml")
    assert new == src
    assert [d.name or d.message.split("'")[1] for d in diags] == ["nvidia-cudnn-cu12==9.1", "cupy-cuda12x"]


def test_pyproject_tool_settings_and_paths_are_not_pins(rules):
    """pycuda 2026.1's own pyproject: lint settings name the package and its files, none a pin."""
    src = ('[tool.ruff.lint.isort]\nknown-local-folder = [\n    "pycuda",\n]\n'
           '[tool.ruff.lint.per-file-ignores]\n"pycuda/sparse/coordinate.py" = [\n'
           '    "E501", # line length\n]\n"pycuda/driver.py" = ["F405"]\n')
    new, diags = port(rules, src, "pyproject.toml")
    assert new == src
    assert [(d.id, d.line) for d in diags] == []


def test_pyproject_pins_only_in_dependency_tables(rules):
    src = ('[project]\nname = "pycuda-tools"\n'
           'dependencies = ["numpy", "pycuda>=2024.1", "nvidia-cublas-cu12"]\n'  # line 3
           '[project.optional-dependencies]\ngpu = [\n    "cupy-cuda12x",\n]\n'  # line 6
           '[project.urls]\nHomepage = "https://github.com/inducer/pycuda"\n'
           '[build-system]\nrequires = ["setuptools", "cuda-python"]\n'  # line 11
           '[tool.ruff]\nsrc = ["pycuda"]\n')
    new, diags = port(rules, src, "pyproject.toml")
    assert new == src
    assert [(d.id, d.line) for d in diags] == [("MU6030", 3), ("MU6030", 3), ("MU6030", 6), ("MU6030", 11)]
    assert [d.message.split("'")[1] for d in diags] == ["pycuda>=2024.1", "nvidia-cublas-cu12", "cupy-cuda12x",
                                                        "cuda-python"]


def test_pyproject_indexes_and_tool_dependency_tables_are_reported(rules):
    src = ('[[tool.uv.index]]\nname = "pytorch-cu121"\nurl = "https://download.pytorch.org/whl/cu121"\n'
           '[tool.poetry]\nname = "pycuda"\n'
           '[tool.poetry.group."gpu".dependencies]\nnvidia-cudnn-cu12 = "^9"\n'  # line 7
           '[tool.ruff]\nproject.dependencies = ["jax-cuda12-plugin"]\n')  # ruff's key, not [project]'s
    _new, diags = port(rules, src, "pyproject.toml")
    assert [(d.id, d.line) for d in diags] == [("MU6030", 3), ("MU6030", 7)]
    top = 'project.dependencies = ["jax-cuda12-plugin"]\n[tool.ruff]\nsrc = ["pycuda"]\n'
    assert [(d.id, d.line) for d in port(rules, top, "pyproject.toml")[1]] == [("MU6030", 1)]


def test_requirement_paths_are_not_pins(rules):
    src = "-e ./pycuda/\npycuda/setup.py\npycuda @ https://example.com/pycuda.tar.gz\n"
    new, diags = port(rules, src, "requirements.txt")
    assert new == src
    assert [(d.id, d.line) for d in diags] == [("MU6030", 3)]
