"""Compare what the original and the port did: exit status, stdout, stderr and written files.

Numbers are compared with a tolerance (|a - b| <= atol + rtol * |b|), since a port at another
warp width may sum in another order; lines that report times or bandwidths (the `ignore`
patterns) are left out, since they differ from run to run. The port's own vendor words (`musa`
where the original said `cuda`, in error names it prints) are read as the original's.
"""

from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass

_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|[-+]?(?:inf|nan)\b", re.IGNORECASE)
_VENDOR = [(re.compile(r"\bmusa"), "cuda"), (re.compile(r"\bMUSA"), "CUDA"), (re.compile(r"\bMusa"), "Cuda"),
           (re.compile(r"\bmu(blas|rand|fft|sparse|solver)"), r"cu\1"), (re.compile(r"\bMTGPU"), "GPU")]


@dataclass(frozen=True)
class Run:
    """What one run produced, as compared."""

    exit: int
    stdout: str
    stderr: str
    files: dict[str, bytes]  # output file name -> bytes (missing files are absent)


@dataclass(frozen=True)
class Difference:
    where: str  # "exit status", "stdout line 3", "file out.txt line 2"
    original: str
    port: str
    diff: str  # a unified diff of the stream, at most 40 lines

    def line(self) -> str:
        return f"{self.where}: original {self.original!r}, port {self.port!r}"

    def to_json(self) -> dict:
        return {"where": self.where, "original": self.original, "port": self.port, "diff": self.diff}


class Comparer:
    def __init__(self, rtol: float, atol: float, ignore: tuple[str, ...]):
        self.rtol, self.atol = rtol, atol
        self.ignore = [re.compile(p) for p in ignore]

    def first_difference(self, original: Run, port: Run) -> Difference | None:
        """The first way the port's run differs from the original's, or None when they agree: the
        output first (it says more than a status), then the files, then the exit status."""
        for stream in ("stdout", "stderr"):
            found = self._text(stream, getattr(original, stream), getattr(port, stream))
            if found:
                return found
        for name in sorted(set(original.files) | set(port.files)):
            if name not in port.files:
                return Difference(f"file {name}", "written", "not written", "")
            if name not in original.files:
                return Difference(f"file {name}", "not written", "written", "")
            a, b = original.files[name], port.files[name]
            if a == b:
                continue
            try:
                found = self._text(f"file {name}", a.decode(), b.decode())
            except UnicodeDecodeError:
                offset = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
                return Difference(f"file {name} byte {offset}", f"{len(a)} bytes", f"{len(b)} bytes", "")
            if found:
                return found
        if original.exit != port.exit:
            return Difference("exit status", str(original.exit), str(port.exit), "")
        return None

    def _text(self, where: str, original: str, port: str) -> Difference | None:
        a = self._kept(original.splitlines())
        b = self._kept([_unvendor(line) for line in port.splitlines()])
        for i, (x, y) in enumerate(zip(a, b)):
            if not self.same_line(x[1], y[1]):
                return Difference(f"{where} line {y[0]}", x[1], y[1], _diff(a, b, where))
        if len(a) != len(b):
            extra = a[len(b)] if len(a) > len(b) else b[len(a)]
            o, p = (extra[1], "<end>") if len(a) > len(b) else ("<end>", extra[1])
            return Difference(f"{where} line {extra[0]}", o, p, _diff(a, b, where))
        return None

    def _kept(self, lines: list[str]) -> list[tuple[int, str]]:
        return [(n, line.rstrip()) for n, line in enumerate(lines, 1) if not any(p.search(line) for p in self.ignore)]

    def same_line(self, a: str, b: str) -> bool:
        if a == b:
            return True
        if _NUMBER.sub("#", a) != _NUMBER.sub("#", b):
            return False
        return all(self._close(x, y) for x, y in zip(_NUMBER.findall(a), _NUMBER.findall(b)))

    def _close(self, x: str, y: str) -> bool:
        if x == y:
            return True
        try:
            a, b = float(x), float(y)
        except ValueError:
            return False
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return abs(a - b) <= self.atol + self.rtol * abs(a)


def _unvendor(line: str) -> str:
    for pattern, replacement in _VENDOR:
        line = pattern.sub(replacement, line)
    return line


def _diff(a: list[tuple[int, str]], b: list[tuple[int, str]], where: str) -> str:
    lines = list(difflib.unified_diff([x for _, x in a], [y for _, y in b], f"original {where}",
                                      f"port {where}", lineterm="", n=2))
    return "\n".join(lines[:40] + ([f"... ({len(lines) - 40} more diff lines)"] if len(lines) > 40 else []))
