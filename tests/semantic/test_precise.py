"""Precise mode on a small CMake project: the SDK's cudaMalloc is renamed, the allocator's
method of the same name is not, and the macro that expands to a CUDA call is reported. The
fallback (libclang missing, no database entry) migrates lexically with one MU3001 note."""

from __future__ import annotations

import builtins
import shutil
import subprocess
from pathlib import Path

import pytest

from musify.options import Options
from musify.rules.model import Rule, RuleSet
from musify.runner import migrate_text
from musify.semantic import compdb, toolchain

DEMO = Path(__file__).parent / "data" / "demo"


def _ruleset() -> RuleSet:
    rs = RuleSet()
    for cuda in ("cudaMalloc", "cudaFree", "cudaDeviceSynchronize"):
        rs.add(Rule(cuda, "musa" + cuda[4:], "function", "cudart", "renamed"))
    rs.add(Rule("cuda_runtime.h", "musa_runtime.h", "header", "cudart", "renamed"))
    return rs


def _semantic(build_dir: Path) -> Options:
    return Options(semantic=True, build_dir=str(build_dir))


@pytest.fixture(scope="module")
def build_dir(tmp_path_factory) -> Path:
    """Configure the demo with CMake (compile_commands.json); skip when the tools are missing."""
    if shutil.which("cmake") is None or shutil.which("nvcc") is None:
        pytest.skip("cmake and nvcc are needed to configure the demo project")
    try:
        toolchain.toolchain()
    except toolchain.Unavailable as exc:
        pytest.skip(f"precise mode unavailable here: {exc}")
    out = tmp_path_factory.mktemp("build")
    src = out / "src"
    shutil.copytree(DEMO, src)
    result = subprocess.run(["cmake", "-S", str(src), "-B", str(out / "b"), "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON",
                             "-DCMAKE_CUDA_ARCHITECTURES=75"], capture_output=True, text=True, timeout=300,
                            check=False)
    if result.returncode != 0:
        pytest.skip(f"cmake could not configure the CUDA demo: {result.stderr[-400:]}")
    return out / "b"


def test_compile_database_has_the_flags(build_dir: Path) -> None:
    entries = compdb.load(str(build_dir))
    entry = compdb.find(entries, "main.cu")
    assert entry is not None
    flags = compdb.clang_flags(entry)
    assert any(f.endswith("/include") for f in flags if f.startswith("-I") or f == "-I") or \
        str(Path(entry.directory).parent / "src" / "include") in " ".join(flags)


def test_user_declaration_is_kept(build_dir: Path) -> None:
    text = (build_dir.parent / "src" / "main.cu").read_text()
    new, ctx, _ = migrate_text(text, "main.cu", _ruleset(), _semantic(build_dir))
    ids = [d.id for d in ctx.diagnostics]
    assert "MU3001" not in ids, [d.console() for d in ctx.diagnostics]
    assert "    musaMalloc(reinterpret_cast<void**>(&d), 64);" in new
    assert "    pool.cudaMalloc(reinterpret_cast<void**>(&d), 64);" in new
    assert "musaFree(d);" in new
    kept = [d for d in ctx.diagnostics if d.id == "MU3002"]
    assert [(d.line, d.name) for d in kept] == [(12, "cudaMalloc")]
    macros = [d for d in ctx.diagnostics if d.id == "MU3003"]
    assert [(d.line, d.name) for d in macros] == [(14, "SYNC_ALL")]
    assert "cudaDeviceSynchronize" in macros[0].message


def test_lexical_engine_renames_both_without_precise_mode(build_dir: Path) -> None:
    text = (build_dir.parent / "src" / "main.cu").read_text()
    new, _, _ = migrate_text(text, "main.cu", _ruleset(), Options())
    assert "pool.musaMalloc" in new


def test_fallback_when_libclang_missing(monkeypatch, tmp_path: Path) -> None:
    real_import = builtins.__import__

    def no_clang(name, *args, **kwargs):
        if name == "clang" or name.startswith("clang."):
            raise ImportError("No module named 'clang'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_clang)
    toolchain.toolchain.cache_clear()
    try:
        text = (DEMO / "main.cu").read_text()
        new, ctx, _ = migrate_text(text, "main.cu", _ruleset(), _semantic(tmp_path))
    finally:
        toolchain.toolchain.cache_clear()
    notes = [d for d in ctx.diagnostics if d.id == "MU3001"]
    assert len(notes) == 1 and "libclang is not installed" in notes[0].message
    assert "pool.musaMalloc" in new  # the lexical engine migrated the file


def test_fallback_when_file_not_in_database(tmp_path: Path) -> None:
    try:
        toolchain.toolchain()
    except toolchain.Unavailable as exc:
        pytest.skip(str(exc))
    (tmp_path / "compile_commands.json").write_text("[]")
    new, ctx, _ = migrate_text("int x = cudaMalloc(0, 0);\n", "other.cu", _ruleset(), _semantic(tmp_path))
    assert [d.id for d in ctx.diagnostics] == ["MU3001"]
    assert "no entry" in ctx.diagnostics[0].message
    assert "musaMalloc" in new
