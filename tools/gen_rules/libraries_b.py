"""Rule generation for the CUDA libraries of part 2b, and the machinery they share.

Each library module (`nccl`, `cupti`, `nvtx`, `nvrtc`, `libdevice`, `cucomplex`, `cccl`,
`cutlass`) exposes `EMITTERS`: a list of `Emitter`s, each naming the header that marks its
include folder and a `build` function that turns that folder into `Record`s. This module finds
the folders among `--include` arguments, records which package and header version were read,
marks names no public source spells as `inferred`, and writes `rules/<dir>/generated.yaml`
deterministically (sorted, flow style, one record a line).

    python -m tools.gen_rules.libraries_b --include DIR [--include DIR ...] [--only nccl,cub]

Where a name is "spelled by a public source" is decided from an attestation table (Moore
Threads' musify `general.json` + `include.json` by default, read from `../shared/reference/`
when present, or `--attested FILE...`): the table is consulted, never copied -- the generated
file holds our own pattern-derived names, and a name whose attested spelling differs gets a
`note` saying so.
"""

from __future__ import annotations

import argparse
import importlib
import json
import re
import subprocess
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
DEFAULT_ATTESTED = [REPO.parent / "shared" / "reference" / "musify" / n
                    for n in ("general.json", "include.json")]
SCHEMA = "musify-rules/1"
LIBRARY_MODULES = ("nccl", "cupti", "nvtx", "nvrtc", "libdevice", "cucomplex", "cccl", "cutlass")
_PLAIN = re.compile(r"[A-Za-z_][\w./:+-]*")


@dataclass(frozen=True, slots=True)
class Record:
    """One generated rule record; `None`/False fields are left out of the file."""

    cuda: str
    kind: str
    musa: str | None = None
    status: str = "renamed"
    inferred: bool | None = None  # None: decided by `attest` from the attestation table
    note: str | None = None
    library: str | None = None
    section: str | None = None

    def flow(self) -> str:
        fields = [("cuda", self.cuda)]
        if self.status in ("renamed", "shim"):
            fields.append(("musa", self.musa))
        fields += [("kind", self.kind), ("status", None if self.status == "renamed" else self.status),
                   ("library", self.library),
                   ("section", self.section), ("note", self.note)]
        parts = [f"{k}: {_scalar(v)}" for k, v in fields if v is not None]
        if self.inferred:
            parts.append("inferred: true")
        return "{" + ", ".join(parts) + "}"


def _scalar(value: str) -> str:
    if _PLAIN.fullmatch(value) and value not in ("true", "false", "null", "yes", "no", "on", "off"):
        return value
    return json.dumps(value)


def renamed(cuda: str, musa: str, kind: str, **kw: object) -> Record:
    """A record that renames, or keeps the name (`unchanged`) when the pattern changes nothing."""
    if musa == cuda:
        return Record(cuda, kind, status="unchanged", **kw)  # type: ignore[arg-type]
    return Record(cuda, kind, musa=musa, **kw)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Emitter:
    """How to generate one `rules/<directory>/generated.yaml` from one include folder."""

    directory: str  # rules/<directory>/
    library: str  # the file's default `library`
    marker: str  # a path, relative to the include folder, that identifies it
    package: str  # the wheel's distribution name stem (`nvidia_nccl`), to report its version
    build: Callable[[Path], list[Record]]
    version: Callable[[Path], str]  # the header's own version, read from the headers
    filename: str = "generated.yaml"  # several emitters may share a rules folder


def version_macros(root: Path, header: str, *names: str) -> str:
    """`NAME=value` for each `#define NAME value` found in `header` (for the provenance line)."""
    path = root / header
    text = path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""
    found = []
    for name in names:
        m = re.search(rf"^\s*#\s*define\s+{name}\s+(\S+)", text, re.MULTILINE)
        if m:
            found.append(f"{name}={m.group(1)}")
    return ", ".join(found) or "no version macro"


def find_package(root: Path, stem: str) -> str:
    """`name version` of the wheel (or toolkit component) the include folder came from.

    A wheel unpacks as `<site>/nvidia/<lib>/include` next to `<site>/<dist>-<ver>.dist-info`;
    the CUDA toolkit keeps its components' dist-info folders under `<cuda>/dist-info/`.
    """
    for parent in [root, *root.parents][:6]:
        for where in (parent, parent / "dist-info"):
            if not where.is_dir():
                continue
            hits = sorted(where.glob(f"{stem}*.dist-info"))
            if hits:
                name, _, version = hits[-1].name.removesuffix(".dist-info").partition("-")
                return f"{name.replace('_', '-')} {version}"
    return debian_package(root) or "unknown package"


def debian_package(path: Path) -> str | None:
    """`name version` of the Debian package that installed `path` (clang's headers), if any."""
    try:
        owner = subprocess.run(["dpkg-query", "-S", str(path)], check=False, capture_output=True,
                               text=True, timeout=30).stdout.split(":")[0].strip()
        if not owner:
            return None
        version = subprocess.run(["dpkg-query", "-W", "-f=${Version}", owner], check=False,
                                 capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return f"{owner} {version}" if version else owner


def headers_under(root: Path, sub: str, suffixes: tuple[str, ...] = (".h", ".hpp", ".cuh"),
                  skip_detail: bool = True) -> list[str]:
    """Header paths under `root/sub`, relative to `root`, sorted; `detail/` folders skipped."""
    out = []
    for path in sorted((root / sub).rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_file() and path.suffix in suffixes and not (skip_detail and "/detail/" in rel):
            out.append(rel)
    return out


def load_attested(paths: Iterable[Path]) -> dict[str, str]:
    table: dict[str, str] = {}
    for path in paths:
        if path.is_file():
            table.update(json.loads(path.read_text(encoding="utf-8")))
    return table


def attest(records: list[Record], attested: dict[str, str], table_name: str) -> list[Record]:
    """Mark renames no source spells as inferred; note where the source spells them otherwise.

    A record whose module already decided `inferred` (a name MUSA_FACTS spells, say) keeps it.
    """
    out = []
    for rec in records:
        seen = attested.get(rec.cuda)
        ours = rec.musa if rec.status == "renamed" else rec.cuda
        if rec.inferred is None:
            rec = replace(rec, inferred=seen is None and rec.status == "renamed")
        if seen is not None and seen != ours and not rec.note:
            rec = replace(rec, note=f"{table_name} spells it {seen}; ours follows the naming pattern")
        out.append(rec)
    return out


def dedupe(records: Iterable[Record]) -> list[Record]:
    """One record per CUDA spelling (headers apart from names), the first kind found winning."""
    seen: dict[tuple[bool, str], Record] = {}
    for rec in records:
        seen.setdefault((rec.kind == "header", rec.cuda), rec)
    return sorted(seen.values(), key=lambda r: (r.kind == "header", r.cuda))


def render(emitter: Emitter, root: Path, records: list[Record], attested_from: str) -> str:
    package = find_package(root, emitter.package)
    header_version = emitter.version(root)
    lines = [
        "# Generated by `python -m tools.gen_rules.libraries_b`; do not edit.",
        "# Change the generator (tools/gen_rules/) or add a record to overrides.yaml beside this file.",
        f"# Read: {package} ({header_version}), from the include folder holding {emitter.marker}",
        f"# Attested names from: {attested_from}",
        f"schema: {SCHEMA}",
        f"library: {emitter.library}",
        "status: renamed",
        f"source: {json.dumps(f'{package}; {header_version}')}",
        "rules:",
    ]
    lines += [f"  - {rec.flow()}" for rec in records]
    return "\n".join(lines) + "\n"


def find_root(dirs: list[Path], marker: str) -> Path | None:
    for d in dirs:
        if (d / marker).exists():
            return d
    return None


def all_emitters() -> list[Emitter]:
    out: list[Emitter] = []
    for name in LIBRARY_MODULES:
        out.extend(importlib.import_module(f"tools.gen_rules.{name}").EMITTERS)
    return out


def core_names(rules_dir: Path) -> set[tuple[bool, str]]:
    """(is header, CUDA spelling) of every record `python -m tools.gen_rules` writes: those files
    own the toolkit's own names, so a library header that re-declares one (libdevice's copies of
    the device intrinsics, CUPTI's copies of driver structs) must not define it a second time --
    the rule loader rejects a name defined in two files."""
    from tools.gen_rules.__main__ import OUTPUTS

    names: set[tuple[bool, str]] = set()
    for rel, _ in OUTPUTS.values():
        path = rules_dir / rel
        if path.is_file():
            doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
            names.update((r.get("kind") == "header", r["cuda"]) for r in doc.get("rules") or [])
    return names


def generate(emitter: Emitter, dirs: list[Path], attested: dict[str, str], attested_from: str,
             rules_dir: Path) -> Path | None:
    """Write one generated file; None when no include folder has the emitter's marker."""
    root = find_root(dirs, emitter.marker)
    if root is None:
        return None
    core = core_names(rules_dir)
    records = [r for r in dedupe(attest(emitter.build(root), attested, "musify's table"))
               if (r.kind == "header", r.cuda) not in core]
    out = rules_dir / emitter.directory / emitter.filename
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render(emitter, root, records, attested_from), encoding="utf-8")
    return out


def main(argv: list[str] | None = None, emitters: list[Emitter] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--include", type=Path, action="append", required=True,
                        help="a folder of CUDA headers (repeatable); each library uses the first "
                             "folder holding its marker header")
    parser.add_argument("--attested", type=Path, action="append", default=None,
                        help="JSON tables {cuda: musa} that count as a public spelling")
    parser.add_argument("--rules", type=Path, default=REPO / "rules")
    parser.add_argument("--only", default="", help="comma-separated rules/ folders to generate")
    args = parser.parse_args(argv)
    paths = args.attested or DEFAULT_ATTESTED
    attested = load_attested(paths)
    attested_from = ", ".join(p.name for p in paths if p.is_file()) or "none"
    only = {x for x in args.only.split(",") if x}
    status = 0
    for emitter in emitters if emitters is not None else all_emitters():
        if only and emitter.directory not in only:
            continue
        out = generate(emitter, args.include, attested, attested_from, args.rules)
        if out is None:
            print(f"{emitter.directory}: no include folder has {emitter.marker}", file=sys.stderr)
            status = 1
        else:
            print(f"{emitter.directory}: wrote {out}")
    return status


def __getattr__(name: str) -> list[Emitter]:
    """`EMITTERS`, built on first use: the library modules import this one, so not at import."""
    if name == "EMITTERS":
        return all_emitters()
    raise AttributeError(name)


if __name__ == "__main__":
    sys.exit(main())
