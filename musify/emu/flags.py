"""Project build flags, sorted into what the emulator's g++ build honours and what it cannot.

A project's compiler lines (typed on the command line, or read from its compile database or
Makefile by musify/verify/buildinfo.py) mix flags that matter for a CPU build (`-I`, `-D`, `-U`,
`-std=`, host compiler flags after `-Xcompiler`, `-fopenmp`, `-l`) with nvcc's device-code
options (`-arch`, `-gencode`, `-Xptxas`, `--use_fast_math`, ...) and the mechanics of one
compile step (`-c`, `-o`, dependency files). The first kind is passed on; the second is listed
with the reason, never dropped silently; the third is dropped because it describes a step the
emulator build does not take.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

# flags that take the next word as their value (nvcc and gcc spellings)
_WITH_VALUE = {"-I", "-isystem", "-iquote", "-D", "-U", "-include", "-o", "-x", "-MF", "-MT", "-MQ",
               "-Xcompiler", "--compiler-options", "-Xptxas", "--ptxas-options", "-Xlinker", "--linker-options",
               "-arch", "--gpu-architecture", "-code", "--gpu-code", "-gencode", "--generate-code", "-ccbin",
               "--compiler-bindir", "-maxrregcount", "--maxrregcount", "-L", "-l", "--std", "-std",
               "--include-path", "--define-macro", "--undefine-macro", "--library", "--library-path",
               "-rdc", "--relocatable-device-code", "-Xnvlink", "-Xfatbin", "--threads", "-t", "-diag-suppress",
               "--diag-suppress", "-Werror=", "--output-file", "--pre-include"}
_LONG_ALIASES = {"--include-path": "-I", "--define-macro": "-D", "--undefine-macro": "-U", "--library": "-l",
                 "--library-path": "-L", "--pre-include": "-include"}
_STEP = {"-c", "-o", "--output-file", "-x", "-MD", "-MMD", "-MP", "-M", "-MM", "-MF", "-MT", "-MQ", "-E",
         "-S", "--compile", "-dc", "--device-c", "-shared", "-fPIC", "-Xcompiler=-fPIC"}
_DEVICE_ONLY = {"-arch", "--gpu-architecture", "-code", "--gpu-code", "-gencode", "--generate-code",
                "-Xptxas", "--ptxas-options", "-maxrregcount", "--maxrregcount", "-lineinfo", "--generate-line-info",
                "-G", "--device-debug", "-rdc", "--relocatable-device-code", "-Xnvlink", "-Xfatbin",
                "--use_fast_math", "-use_fast_math", "--ftz", "--prec-div", "--prec-sqrt", "--fmad", "-ftz",
                "-prec-div", "-prec-sqrt", "-fmad", "--threads", "-t", "--keep", "-keep", "-res-usage",
                "--resource-usage", "-diag-suppress", "--diag-suppress"}
_NOT_NEEDED = {"--expt-relaxed-constexpr", "-expt-relaxed-constexpr", "--expt-extended-lambda",
               "-expt-extended-lambda", "--extended-lambda", "-extended-lambda", "-ccbin", "--compiler-bindir",
               "-cudart", "--cudart"}
# libraries the emulator provides itself (CUDA's and MUSA's names)
_EMULATED_LIBS = {"cudart", "cudart_static", "cuda", "cublas", "cublasLt", "curand", "cufft", "cusparse",
                  "cusolver", "musart", "musa", "mublas", "murand", "mufft", "musparse", "musolver"}
_STD_OK = {f"{dialect}++{year}" for dialect in ("c", "gnu") for year in ("17", "1z", "20", "2a", "23", "2b", "26", "2c")}


@dataclass
class FlagSet:
    """Honoured flags, ready for g++ (paths absolute), and the others with the reason."""

    flags: list[str] = field(default_factory=list)
    ignored: list[tuple[str, str]] = field(default_factory=list)

    def merge(self, other: FlagSet) -> None:
        """Add another command's flags (a program built from several compiler lines)."""
        for f in other.flags:
            if f not in self.flags:
                self.flags.append(f)
        for item in other.ignored:
            if item not in self.ignored:
                self.ignored.append(item)


def parse_flags(words: list[str], directory: str = ".") -> FlagSet:
    """Sort compiler arguments (no compiler name, no sources) into honoured and not honoured.

    Relative include paths are made absolute against `directory`, where the command ran."""
    out = FlagSet()
    i = 0
    while i < len(words):
        word = words[i]
        name, value, used = _split(word, words[i + 1] if i + 1 < len(words) else None)
        i += 1 + used
        _sort_one(name, value, word, directory, out)
    return out


def _split(word: str, following: str | None) -> tuple[str, str | None, int]:
    """(flag name, value or None, how many following words it consumed)."""
    if word.startswith("--") and "=" in word:
        name, value = word.split("=", 1)
        return _LONG_ALIASES.get(name, name), value, 0
    if word in _WITH_VALUE:
        if word == "-x" or following is None:
            return word, following, 1 if following is not None else 0
        return _LONG_ALIASES.get(word, word), following, 1
    for short in ("-I", "-D", "-U", "-L", "-l", "-isystem", "-iquote"):
        if word.startswith(short) and len(word) > len(short):
            return short, word[len(short):], 0
    if word.startswith(("-arch=", "-code=", "-gencode=", "-std=", "-rdc=", "-maxrregcount=", "-ccbin=",
                        "-Xcompiler=", "-Xptxas=", "-Xlinker=", "-cudart=", "-diag-suppress=")):
        name, value = word.split("=", 1)
        return name, value, 0
    return word, None, 0


def _sort_one(name: str, value: str | None, word: str, directory: str, out: FlagSet) -> None:
    shown = word if value is None or word.endswith(value) else f"{word} {value}"
    if name in ("-I", "-isystem", "-iquote") and value is not None:
        path = os.path.normpath(os.path.join(directory, value))
        if os.path.isfile(os.path.join(path, "cuda_runtime_api.h")):  # FindCUDA and CMake add it
            out.ignored.append((shown, "the CUDA toolkit's own headers; the emulator supplies its own"))
        else:
            out.flags.append("-I" + path)
    elif name in ("-D", "-U") and value is not None:
        out.flags.append(name + value)
    elif name in ("-std", "--std") and value is not None:
        _std(value, shown, out)
    elif name in ("-Xcompiler", "--compiler-options") and value is not None:
        for host in (w for w in value.split(",") if w):
            _sort_one(*_split(host, None)[:2], host, directory, out)
    elif name in ("-Xlinker", "--linker-options") and value is not None:
        out.flags.append("-Wl," + value)
    elif name == "-l" and value is not None:
        if value not in _EMULATED_LIBS:
            out.flags.append("-l" + value)
    elif name == "-L" and value is not None:
        out.flags.append("-L" + os.path.normpath(os.path.join(directory, value)))
    elif name == "-include" and value is not None:
        out.flags += ["-include", os.path.normpath(os.path.join(directory, value))]
    elif name in _STEP or name.startswith(("-MF", "-MT", "-MQ", "-Wp,-M")):
        return
    elif name in _DEVICE_ONLY:
        out.ignored.append((shown, "an nvcc device-code option; the emulator compiles device code with g++"))
    elif name in _NOT_NEEDED:
        return
    elif name.startswith("-O"):
        out.ignored.append((shown, "the emulator chooses its own optimisation level"))
    elif name in ("-fopenmp", "-pthread", "-g") or name.startswith(("-W", "-f", "-m")):
        out.flags.append(name)
    elif name.startswith("-"):
        out.ignored.append((shown, "not a flag the emulator's g++ build knows how to honour"))


def _std(value: str, shown: str, out: FlagSet) -> None:
    if value in _STD_OK:
        out.flags.append(f"-std={value}")
    else:
        out.ignored.append((shown, "the emulator headers need C++17 or later; built with -std=c++17"))
