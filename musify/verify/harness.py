"""Harnesses for kernels without a `main` (PyTorch extensions, libraries): generate one, run it
on the original and on the port, compare what the kernels wrote.

For a source file that defines `__global__` kernels, the harness compiles a slice of it: its
preprocessor lines, types, constants and device functions, without host functions and anything
that names PyTorch (`torch::`, `at::`, `TORCH_`, `PYBIND11_`, ...), which the emulator cannot
build; `#line` keeps the compiler's messages on the file's own lines. Every kernel whose
parameters are pointers to arithmetic types and arithmetic scalars is launched on seeded inputs
(`harness_size` elements per pointer, sizes for parameters named like sizes), template kernels
once per type of float, double, int and half that compiles; every buffer is printed afterwards,
and the two printouts are compared like any program's output. Kernels that cannot be harnessed
are listed with the reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from musify.emu.build import BuildError, build
from musify.verify.engine import build_options
from musify.verify.programs import Program
from musify.verify.settings import Settings

TYPES = ("float", "double", "int", "half")
_ARITH = {"float", "double", "int", "unsigned", "unsigned int", "long", "long long", "unsigned long",
          "unsigned long long", "size_t", "int64_t", "int32_t", "uint32_t", "uint64_t", "int8_t", "uint8_t",
          "int16_t", "uint16_t", "short", "unsigned short", "char", "unsigned char", "signed char", "bool",
          "half", "__half"}
_FLOATS = {"float", "double", "half", "__half"}
_QUALIFIERS = re.compile(r"\b(const|volatile|__restrict__|__restrict|restrict)\b")
_TORCH = re.compile(r"\b(torch|at|c10|py|pybind11)::|\b(TORCH_\w+|PYBIND11_\w+|AT_DISPATCH\w*|C10_\w+)\b|"
                    r"#\s*include\s*[<\"](torch|ATen|c10|pybind11|Python\.h)")
_SIZE_NAME = re.compile(r"(?i)^(n|num\w*|n_\w+|\w*(size|numel|count|len|length|total|elements)\w*)$")
_KERNEL = re.compile(r"__global__")
_LAUNCH_BOUNDS = re.compile(r"__launch_bounds__\s*\([^)]*\)")
_SIGNATURE = re.compile(r"(?s)(?:template\s*<(?P<tparams>.*?)>\s*)?(?P<head>[^;{}]*?)\b(?P<name>\w+)\s*\((?P<params>[^{;]*)\)\s*$")
_INCLUDE = re.compile(r'(?m)^([ \t]*#[ \t]*include[ \t]*)"([^"\n]+)"')
_BLOCK = 256
_MAX_TRIES = 4


@dataclass
class Kernel:
    name: str  # qualified (ns::name)
    line: int
    params: list[tuple[str, str]]  # (kind, C type) per parameter: "ptr" / "scalar"
    param_names: list[str]
    type_params: list[str]
    dynamic_smem: bool
    reason: str = ""
    instances: list[str] = field(default_factory=list)  # "" for a non-template kernel, else a type


def harness_programs(programs: list[Program], work: Path, settings: Settings) -> tuple[list[Program], list[dict]]:
    """One harness program per kernel file of `programs`; and every kernel left out, with why."""
    made: list[Program] = []
    left_out: list[dict] = []
    for program in programs:
        for index, (source, port) in enumerate(zip(program.sources, program.port_sources)):
            text = source.read_text(errors="replace")
            if not _KERNEL.search(text):
                continue
            kernels = find_kernels(text)
            left_out += [{"path": str(source), "line": k.line, "kernel": k.name, "reason": k.reason}
                         for k in kernels if k.reason]
            usable = [k for k in kernels if not k.reason]
            if not usable:
                continue
            folder = work / f"{len(made)}-{source.stem}"
            harness = _instantiate(usable, source, port, folder, program, settings, left_out)
            if harness:
                made.append(harness)
    return made, left_out


def find_kernels(text: str) -> list[Kernel]:
    """Every `__global__` function defined in `text`, with what the harness can pass it."""
    masked = _mask(text)
    kernels = []
    for item_start, item_end, namespace in _top_level(masked):
        item = masked[item_start:item_end]
        if "__global__" not in item or "{" not in item:
            continue
        head = _LAUNCH_BOUNDS.sub(" ", item[: item.index("{")])
        m = _SIGNATURE.search(head)
        if not m or "__global__" not in m["head"]:
            continue
        line = text.count("\n", 0, item_start + item.index("__global__")) + 1
        kernels.append(_kernel("::".join([*namespace, m["name"]]), line, m["tparams"], m["params"],
                               "extern __shared__" in masked))
    return kernels


def _kernel(name: str, line: int, tparams: str | None, params: str, smem: bool) -> Kernel:
    type_params, reason = [], ""
    for tp in _split_commas(tparams or ""):
        tm = re.fullmatch(r"\s*(typename|class)\s+(\w+)\s*", tp)
        if tm:
            type_params.append(tm[2])
        elif not reason:
            reason = f"template parameter '{tp.strip()}' is not a type (only type parameters are instantiated)"
    kinds, names = [], []
    for p in _split_commas(params):
        p = " ".join(_QUALIFIERS.sub(" ", p).split())
        if not p or p == "void":
            continue
        pm = re.fullmatch(r"(?P<type>[\w:\s]+?)\s*(?P<stars>\**)\s*(?P<name>\w+)(\s*=.*)?", p)
        base = pm["type"].strip() if pm else ""
        known = base in _ARITH or base in type_params
        if pm and known and len(pm["stars"]) == 1:
            kinds.append(("ptr", base))
        elif pm and known and not pm["stars"]:
            kinds.append(("scalar", base))
        else:
            reason = reason or f"parameter '{p}' is not a pointer to an arithmetic type or an arithmetic scalar"
            continue
        names.append(pm["name"])
    return Kernel(name, line, kinds, names, type_params, smem, reason)


def _instantiate(kernels: list[Kernel], source: Path, port: Path, folder: Path, program: Program,
                 settings: Settings, left_out: list[dict]) -> Program | None:
    """Write the harness for both sides; drop the template instances whose original does not compile."""
    for k in kernels:
        k.instances = list(TYPES) if k.type_params else [""]
    for _ in range(_MAX_TRIES):
        if not any(k.instances for k in kernels):
            return None
        original, lines = _write(kernels, source, folder / "original", ".cu", settings)
        try:
            build([original], build_options("cuda", "sm_80", program.build.flags.flags, settings))
            break
        except BuildError as exc:
            failed = _failed_instances(exc.log, original, lines)
            if not failed:  # the kernels themselves do not compile: every one is left out
                for k in kernels:
                    left_out.append({"path": str(source), "line": k.line, "kernel": k.name,
                                     "reason": "its file does not compile on the emulator without the host code around it: "
                                               + _first_line(exc.log)})
                return None
            for k, t in failed:
                k.instances.remove(t)
                left_out.append({"path": str(source), "line": k.line, "kernel": f"{k.name}<{t}>",
                                 "reason": f"does not compile for {t}"})
    else:
        return None
    ported, _ = _write(kernels, port, folder / "port", ".mu", settings)
    spec = replace(program.spec, name=f"{program.name}/{source.name}", args=((),), outputs=())
    return replace(program, name=spec.name, sources=[original], port_sources=[ported], spec=spec, kind="harness")


def _write(kernels: list[Kernel], kernel_file: Path, folder: Path, suffix: str,
           settings: Settings) -> tuple[Path, dict[int, tuple[Kernel, str]]]:
    folder.mkdir(parents=True, exist_ok=True)
    sliced = folder / f"kernels{suffix}"
    sliced.write_text(slice_source(kernel_file.read_text(errors="replace"), kernel_file))
    main = folder / f"harness{suffix}"
    text, lines = harness_text(kernels, sliced.name, settings.harness_size)
    main.write_text(text)
    return main, lines


def harness_text(kernels: list[Kernel], include: str, n: int) -> tuple[str, dict[int, tuple[Kernel, str]]]:
    """The harness's source and, per line that launches an instance, which one it is."""
    out = [_PRELUDE.replace("@N@", str(n)).replace("@INCLUDE@", include)]
    lines: dict[int, tuple[Kernel, str]] = {}
    calls = []
    for ki, k in enumerate(kernels):
        for t in k.instances:
            fn = f"run_{ki}_{t or 'plain'}"
            calls.append(fn)
            body = _launch_body(k, t)
            start = sum(part.count("\n") for part in out) + 1
            out.append(f"static void {fn}() {{\n{body}}}\n")
            for offset in range(body.count("\n") + 2):
                lines[start + offset] = (k, t)
    out.append("int main() {\n" + "".join(f"  {c}();\n" for c in calls) + "  return 0;\n}\n")
    return "".join(out), lines


def _launch_body(k: Kernel, t: str) -> str:
    def ctype(base: str) -> str:
        base = t if base in k.type_params else base
        return "__half" if base == "half" else base

    body, args = [], []
    for i, ((kind, base), name) in enumerate(zip(k.params, k.param_names)):
        c = ctype(base)
        if kind == "ptr":
            body.append(f"  {c}* d{i} = harness_buffer<{c}>({i + 1});\n")
            args.append(f"d{i}")
        else:
            value = "N" if _SIZE_NAME.match(name) and c not in _FLOATS else \
                "harness_side" if c not in _FLOATS | {"bool"} else "true" if c == "bool" else "0.5"
            body.append(f"  {c} s{i} = harness_scalar<{c}>({value});\n")
            args.append(f"s{i}")
    smem = "8192" if k.dynamic_smem else "0"
    targs = f"<{ctype(k.type_params[0])}{''.join(', ' + ctype(p) for p in k.type_params[1:])}>" if t else ""
    label = f"{k.name}<{t}>" if t else k.name
    body.append(f"  {k.name}{targs}<<<(N + {_BLOCK - 1}) / {_BLOCK}, {_BLOCK}, {smem}>>>({', '.join(args)});\n")
    body.append(f"  harness_check(\"{label}\");\n")
    for i, (kind, base) in enumerate(k.params):
        if kind == "ptr":
            body.append(f"  harness_dump(\"{label}\", {i}, d{i});\n")
    return "".join(body)


def _failed_instances(log: str, harness: Path, lines: dict[int, tuple[Kernel, str]]) -> list[tuple[Kernel, str]]:
    found = []
    for m in re.finditer(rf"{re.escape(harness.name)}:(\d+):(?:\d+:)? (?:error|required from here)", log):
        hit = lines.get(int(m[1]))
        if hit and hit[1] and hit not in found:
            found.append(hit)
    return found


def slice_source(text: str, path: Path) -> str:
    """The device-side part of a kernel file, each kept piece under a `#line` naming the file."""
    masked = _mask(text)
    pieces = []
    for start, end, _ in _top_level(masked, with_namespaces=True):
        item = masked[start:end]
        if _TORCH.search(item) or _host_function(item):
            continue
        piece = _INCLUDE.sub(lambda m: f'{m[1]}"{(path.parent / m[2]).resolve()}"', text[start:end])
        pieces.append(f'#line {text.count(chr(10), 0, start) + 1} "{path.resolve()}"\n{piece}\n')
    return "".join(pieces)


def _host_function(item: str) -> bool:
    """A function definition without __global__/__device__ (host code, never launched here)."""
    if "{" not in item or re.match(r"\s*(namespace|struct|class|union|enum|typedef|using|extern\s+\"C\"\s*\{|#)", item):
        return False
    head = item[: item.index("{")]
    if re.search(r"\b(__global__|__device__)\b", head) or "=" in head.split("(")[0]:
        return False
    return "(" in head and head.rstrip().endswith((")", "const", "noexcept", "override")) or "main" in head


def _top_level(masked: str, with_namespaces: bool = False):
    """(start, end, namespace path) of each top-level item: a directive, or a declaration up to its
    `;` or closing brace; namespaces are entered (and, with_namespaces, given as their own lines)."""
    i, n, stack = 0, len(masked), []
    while i < n:
        while i < n and masked[i] in " \t\r\n":
            i += 1
        if i >= n:
            break
        if masked[i] == "}" and stack:
            if with_namespaces:
                yield i, i + 1, list(stack)
            stack.pop()
            i += 1
            continue
        if masked[i] == "#":
            end = i
            while True:
                end = masked.find("\n", end)
                if end < 0:
                    end = n
                    break
                if masked[end - 1] != "\\":
                    break
                end += 1
            yield i, end, list(stack)
            i = end
            continue
        ns = re.match(r"(namespace\s*[\w:]*|extern\s+\"C\"|extern\s+\" *\")\s*\{", masked[i:])
        if ns:
            if with_namespaces:
                yield i, i + ns.end(), list(stack)
            stack.append(ns.group(0).split()[1].rstrip("{") if ns.group(0).startswith("namespace") and
                         len(ns.group(0).split()) > 1 else "")
            i += ns.end()
            continue
        end = _item_end(masked, i)
        yield i, end, [s for s in stack if s]
        i = end


def _item_end(masked: str, start: int) -> int:
    """End of the declaration starting at `start`: its `;` at depth 0, or its closing brace (and a
    `;` or declarator list after it for a struct, class, union or enum)."""
    depth, i, n = 0, start, len(masked)
    while i < n:
        ch = masked[i]
        if ch in "({[":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "}":
            depth -= 1
            if depth < 0:
                return i
            if depth == 0:
                head = masked[start:masked.find("{", start)]
                if re.search(r"\b(struct|class|union|enum)\b", head) and "(" not in head:
                    semi = masked.find(";", i)
                    return semi + 1 if semi >= 0 else n
                rest = re.match(r"\s*;", masked[i + 1:])
                return i + 1 + (rest.end() if rest else 0)
        elif ch == ";" and depth == 0:
            return i + 1
        i += 1
    return n


def _split_commas(text: str) -> list[str]:
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch in "<([":
            depth += 1
        elif ch in ">)]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur))
    return parts


def _mask(text: str) -> str:
    """`text` with comments and the insides of literals blanked (same length, newlines kept)."""
    out = list(text)
    i, n = 0, len(text)
    while i < n:
        two = text[i:i + 2]
        if two == "//":
            j = text.find("\n", i)
            j = n if j < 0 else j
        elif two == "/*":
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
        elif text[i] in "\"'" and not (text[i] == "'" and i and text[i - 1].isalnum()):
            q, j = text[i], i + 1
            while j < n and text[j] != q and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(n, j + 1)
            for k in range(i + 1, max(i + 1, j - 1)):
                if out[k] != "\n":
                    out[k] = " "
            i = j
            continue
        else:
            i += 1
            continue
        for k in range(i, j):
            if out[k] != "\n":
                out[k] = " "
        i = j
    return "".join(out)


def _first_line(log: str) -> str:
    return next((ln.strip() for ln in log.splitlines() if "error" in ln), log.strip()[:200])[:300]


_PRELUDE = """// generated by musify verify: a harness for kernels without a main
#if defined(__MUSACC__)
#include <musa_runtime.h>
#include <musa_fp16.h>
#define HX(name) musa##name
#else
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#define HX(name) cuda##name
#endif
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <type_traits>
#include <vector>
#include "@INCLUDE@"

static const int N = @N@;
static const int harness_side = 31;  // other integer parameters: about sqrt(N), so that rows x cols fits
static std::vector<void*> harness_allocations;

template <typename T> static T harness_value(unsigned seed, int i) {
  unsigned x = seed * 2654435761u + (unsigned)i * 40503u + 12345u;
  x ^= x >> 13; x *= 0x5bd1e995u; x ^= x >> 15;
  return (T)(int)(x % 100u);
}
template <> float harness_value<float>(unsigned seed, int i) { return (float)harness_value<int>(seed, i) / 50.0f - 1.0f; }
template <> double harness_value<double>(unsigned seed, int i) { return (double)harness_value<int>(seed, i) / 50.0 - 1.0; }
template <> __half harness_value<__half>(unsigned seed, int i) { return __float2half(harness_value<float>(seed, i)); }
template <> bool harness_value<bool>(unsigned seed, int i) { return harness_value<int>(seed, i) % 2 == 0; }

template <typename T> static T* harness_buffer(unsigned seed) {
  std::vector<T> host(N);
  for (int i = 0; i < N; ++i) host[i] = harness_value<T>(seed, i);
  T* device = nullptr;
  if (HX(Malloc)((void**)&device, N * sizeof(T)) != HX(Success)) { std::printf("harness: allocation failed\\n"); std::exit(1); }
  HX(Memcpy)(device, host.data(), N * sizeof(T), HX(MemcpyHostToDevice));
  harness_allocations.push_back(device);
  return device;
}
template <typename T> static T harness_scalar(double v) { return (T)v; }
template <> __half harness_scalar<__half>(double v) { return __float2half((float)v); }

static void harness_check(const char* kernel) {
  HX(Error_t) e = HX(DeviceSynchronize)();
  if (e == HX(Success)) e = HX(GetLastError)();
  if (e != HX(Success)) std::printf("%s: launch failed: %s\\n", kernel, HX(GetErrorString)(e));
}
static void harness_print(double v) { std::printf(" %.7g", v); }
template <typename T> static void harness_dump(const char* kernel, int arg, T* device) {
  std::vector<T> host(N);
  HX(Memcpy)(host.data(), device, N * sizeof(T), HX(MemcpyDeviceToHost));
  std::printf("%s arg %d:", kernel, arg);
  for (int i = 0; i < N; ++i) {
    if constexpr (sizeof(T) == 2 && !std::is_integral<T>::value) harness_print(__half2float(host[i]));
    else harness_print((double)host[i]);
    if (i % 16 == 15) std::printf("\\n");
  }
  std::printf("\\n");
}
"""
