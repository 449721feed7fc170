"""Generate the rule tables of the CUDA math and media libraries from their headers.

One engine for cuBLAS/cuBLASLt, cuRAND, cuFFT, cuSPARSE, cuSOLVER, NPP and cuDNN: each of those
modules only describes its library (a `LibrarySpec`: which headers, which names belong to it,
which of its names MUSA keeps) and calls `main`.  The headers are not installed with the CUDA
toolkit; PyPI's `nvidia-*` wheels ship them, e.g.

    pip download --no-deps -d /tmp/wheels nvidia-cublas nvidia-cublas-cu12
    unzip -q /tmp/wheels/nvidia_cublas-*.whl '*/include/*' '*.dist-info/*' -d /tmp/cublas13
    python -m tools.gen_rules.cublas --include /tmp/cublas13/nvidia/cu13/include \
        --include /tmp/cublas12/nvidia/cublas/include

The first `--include` is the current release; further ones are older releases whose names the
current headers dropped (so old code is still migrated; those records get `section: legacy`).
The package and version that were read come from the wheel's `*.dist-info/METADATA` above the
include folder (or `--package NAME==VERSION`) and are written into the generated file's header.

MUSA names come from the naming pattern (`naming.musa_name`); irregular names and names that
current headers no longer declare are hand-written in `rules/<library>/overrides.yaml` and
`curated.yaml`.  When Moore Threads' own table (`general.json`) is at hand (`--oracle`, found
beside the repository by default), names it lacks are marked `inferred: true`.
"""

from __future__ import annotations

import argparse
import importlib
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from tools.gen_rules.headers import KIND_NAMESPACE, Decl, macro_roles, scan_text
from tools.gen_rules.naming import musa_header, musa_name

REPO = Path(__file__).resolve().parents[2]
DEFAULT_ORACLE = REPO.parent / "shared" / "reference" / "musify" / "general.json"
# The library modules of this part, in the order `python -m tools.gen_rules` should run them.
EMITTERS = ("cublas", "curand", "cufft", "cusparse", "cusolver", "npp", "cudnn")
_MSVC_ATTRIBUTE = re.compile(r"__declspec\s*\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)")


@dataclass(frozen=True)
class LibrarySpec:
    """What one generator module knows about its library; the rest is read from the headers."""

    module: str                     # tools.gen_rules.<module>
    package: str                    # the PyPI wheel that ships the headers
    headers: tuple[str, ...]        # glob patterns of the headers to scan
    owns: re.Pattern[str]           # a vendor-named identifier belongs to the library
    libraries: tuple[tuple[re.Pattern[str], str], ...] = ()  # (pattern, library) by first match
    default_library: str = ""
    keep: re.Pattern[str] | None = None  # names without a vendor word that MUSA keeps as they are
    unsupported: re.Pattern[str] | None = None  # names of the library MUSA has no counterpart for
    status: str = "renamed"         # `unsupported` for a library MUSA has no C API for
    diag: str | None = None
    note: str | None = None         # for every record of an unsupported library
    version_macros: tuple[str, ...] = ()

    def library_of(self, name: str) -> str:
        for pattern, library in self.libraries:
            if pattern.search(name):
                return library
        return self.default_library


@dataclass
class Source:
    """One include folder and the package it came from."""

    include: Path
    package: str
    version: str
    header_version: str = ""
    headers: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        tail = f" (headers {self.header_version})" if self.header_version else ""
        return f"{self.package} {self.version}{tail}"


def find_package(include: Path, given: str | None) -> tuple[str, str]:
    """(name, version) of the wheel the headers came from: `--package`, else its METADATA."""
    if given:
        name, _, version = given.partition("==")
        return name, version or "unknown"
    for folder in [include, *include.parents][:5]:
        for meta in sorted(folder.glob("*.dist-info/METADATA")):
            fields = dict(re.findall(r"^(Name|Version): (\S+)$", meta.read_text(errors="replace"), re.MULTILINE))
            if "Name" in fields:
                return fields["Name"], fields.get("Version", "unknown")
    raise SystemExit(f"{include}: no *.dist-info/METADATA above it; say --package NAME==VERSION")


def header_version(include: Path, headers: list[str], macros: tuple[str, ...]) -> str:
    """The version the headers announce, from `#define <MACRO> <number>` lines."""
    values = {}
    for header in headers:
        text = (include / header).read_text(errors="replace")
        for name in macros:
            m = re.search(rf"^\s*#\s*define\s+{name}\s+(\d+)\s*$", text, re.MULTILINE)
            if m and name not in values:
                values[name] = m.group(1)
    return ".".join(values[m] for m in macros if m in values)


def list_headers(include: Path, patterns: tuple[str, ...]) -> list[str]:
    return sorted({p.name for pattern in patterns for p in include.glob(pattern) if p.is_file()})


def scan(source: Source) -> list[Decl]:
    """Declarations of every header in `source`: the union of two readings of each header.

    The scanner reads every `#if` branch at once, which loses its footing where two branches
    each open a brace that one `}` closes (cuRAND's `__cr_lgamma_table`), so each header is
    also read with only the first branch of every conditional kept.  Before either reading,
    attribute-only macros (`CUSPARSE_DEPRECATED_TYPE`, whose every definition is empty or an
    attribute) are blanked where they are used, so a typedef's name is not taken for one; and
    bare MSVC `__declspec(...)` text is blanked (cuSPARSE defines a deprecation macro without
    its line continuation, which would otherwise swallow the `extern "C"` block).
    """
    texts = {}
    for header in source.headers:
        text = (source.include / header).read_text(encoding="utf-8", errors="replace")
        texts[header] = _MSVC_ATTRIBUTE.sub(_blank, text)
    attributes = _attribute_macros(texts.values())
    if attributes:
        use = re.compile(r"\b(?:" + "|".join(sorted(attributes)) + r")\b")
        texts = {h: _outside_directives(t, lambda line: use.sub(_blank, line)) for h, t in texts.items()}
    decls: dict[tuple[str, str], Decl] = {}
    for variant in (texts, {h: _first_branches(t) for h, t in texts.items()}):
        calls, ends = macro_roles(list(variant.values()))
        for header, text in variant.items():
            for decl in scan_text(text, header, calls, ends):
                decls.setdefault((decl.name, decl.scope), decl)
    return list(decls.values())


def _blank(m: re.Match[str]) -> str:
    return re.sub(r"[^\n]", " ", m.group())


_DEFINE_LINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)(\(?)((?:.*\\\n)*.*)$", re.MULTILINE)
_ATTRIBUTE_BODY = re.compile(r"\s*(?:\[\[|__attribute__|__declspec|$)")


def _attribute_macros(texts) -> set[str]:
    """Object-like macros every definition of which is empty or an attribute."""
    verdict: dict[str, bool] = {}
    for text in texts:
        for name, paren, body in _DEFINE_LINE.findall(text):
            if paren:
                continue
            body = body.replace("\\\n", " ")
            ok = bool(_ATTRIBUTE_BODY.match(body)) and not name.endswith(("_H", "_H_", "_HPP"))
            verdict[name] = verdict.get(name, True) and ok
    return {name for name, ok in verdict.items() if ok}


def _outside_directives(text: str, change) -> str:
    """Apply `change` to every line that is not a preprocessor directive (or its continuation)."""
    out, in_directive = [], False
    for line in text.split("\n"):
        directive = in_directive or line.lstrip().startswith("#")
        out.append(line if directive else change(line))
        in_directive = directive and line.endswith("\\")
    return "\n".join(out)


def _first_branches(text: str) -> str:
    """`text` with the `#elif`/`#else` branches of every conditional blanked (lines kept)."""
    out, stack = [], []  # stack: is the current branch of each open conditional skipped?
    for line in text.split("\n"):
        word = re.match(r"\s*#\s*(\w+)", line)
        key = word.group(1) if word else ""
        if key in ("if", "ifdef", "ifndef"):
            stack.append(False)
        elif key in ("elif", "else") and stack:
            stack[-1] = True
        elif key == "endif" and stack:
            stack.pop()
        skipped = any(stack) and key not in ("elif", "else", "endif")
        out.append("" if skipped else line)
    return "\n".join(out)


@dataclass(frozen=True)
class Record:
    cuda: str
    kind: str
    library: str
    status: str
    musa: str | None = None
    section: str | None = None
    inferred: bool = False
    diag: str | None = None
    note: str | None = None

    def line(self, default_status: str) -> str:
        parts = [f"cuda: {_scalar(self.cuda)}"]
        if self.musa is not None and self.status in ("renamed", "shim"):
            parts.append(f"musa: {_scalar(self.musa)}")
        parts += [f"kind: {self.kind}", f"library: {self.library}"]
        if self.status != default_status:
            parts.append(f"status: {self.status}")
        if self.section:
            parts.append(f"section: {_scalar(self.section)}")
        if self.inferred:
            parts.append("inferred: true")
        if self.diag:
            parts.append(f"diag: {self.diag}")
        if self.note:
            parts.append(f"note: {_scalar(self.note)}")
        return "  - {" + ", ".join(parts) + "}"


def _scalar(text: str) -> str:
    return text if re.fullmatch(r"[A-Za-z_][\w.:/+-]*", text) else json.dumps(text)


def records_for(spec: LibrarySpec, decls: list[Decl], section: str | None, oracle: dict | None,
                headers: list[str]) -> dict[str, Record]:
    """One record per declared name of the library, plus one per header file."""
    out: dict[str, Record] = {}
    for decl in decls:
        if decl.scope or decl.kind == KIND_NAMESPACE or decl.name in out:
            continue
        musa = musa_name(decl.name)
        if spec.unsupported is not None and spec.unsupported.fullmatch(decl.name):
            status = "unsupported"
        elif musa != decl.name and spec.owns.search(decl.name):
            status = spec.status
        elif musa == decl.name and spec.keep is not None and spec.keep.fullmatch(decl.name):
            status = "unchanged" if spec.status == "renamed" else spec.status
        else:
            continue
        out[decl.name] = _record(spec, decl.name, "enum" if decl.kind == "enum" else decl.kind,
                                 status, musa, section or Path(decl.header).stem, oracle)
    for header in headers:
        out.setdefault(header, _record(spec, header, "header", spec.status, musa_header(header),
                                       section or "headers", oracle))
    return out


def _record(spec: LibrarySpec, cuda: str, kind: str, status: str, musa: str, section: str,
            oracle: dict | None) -> Record:
    renamed = status == "renamed"
    inferred = oracle is not None and status != "unsupported" and cuda not in oracle
    return Record(cuda=cuda, kind=kind, library=spec.library_of(cuda), status=status,
                  musa=musa if renamed else None, section=section, inferred=inferred,
                  diag=spec.diag, note=spec.note)


def render(library: str, records: list[Record], sources: list[Source], spec: LibrarySpec) -> str:
    command = f"python -m tools.gen_rules.{spec.module} " + " ".join(
        f"--include <{s.package} {s.version}>/include" for s in sources)
    head = [
        "# Generated by tools/gen_rules/" + spec.module + ".py -- do not edit; change the generator or",
        f"# add a record to rules/{library}/overrides.yaml.  Rerun: {command}",
        *(f"# read: {s.label}: {', '.join(s.headers)}" for s in sources),
        "schema: musify-rules/1",
        f"library: {library}",
        f"status: {spec.status}",
        f"source: {_scalar(' + '.join(s.label for s in sources))}",
        "rules:",
    ]
    body = [r.line(spec.status) for r in sorted(records, key=lambda r: (r.cuda, r.kind))]
    return "\n".join(head + body) + "\n"


def load_oracle(path: Path | None) -> dict | None:
    if path is None or not path.is_file():
        return None
    table = {}
    for part in (path, path.with_name("include.json")):  # identifiers, then header names
        if part.is_file():
            table.update(json.loads(part.read_text(encoding="utf-8")))
    return table


def generate(spec: LibrarySpec, includes: list[Path], packages: list[str | None],
             oracle: dict | None) -> tuple[dict[str, list[Record]], list[Source]]:
    """Records per library value, newest headers first, then names only older headers declare."""
    sources, merged = [], {}
    for i, include in enumerate(includes):
        name, version = find_package(include, packages[i] if i < len(packages) else None)
        source = Source(include, name, version)
        source.headers = list_headers(include, spec.headers)
        if not source.headers:
            raise SystemExit(f"{include}: none of {', '.join(spec.headers)} is there")
        source.header_version = header_version(include, source.headers, spec.version_macros)
        sources.append(source)
        found = records_for(spec, scan(source), None if i == 0 else "legacy", oracle, source.headers)
        for cuda, record in found.items():
            merged.setdefault(cuda, record)
    by_library: dict[str, list[Record]] = {}
    for record in merged.values():
        by_library.setdefault(record.library, []).append(record)
    return by_library, sources


def main(spec: LibrarySpec, argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=f"python -m tools.gen_rules.{spec.module}",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--include", action="append", type=Path, required=True,
                        help="folder holding the headers; repeat for older releases (newest first)")
    parser.add_argument("--package", action="append", default=[],
                        help="NAME==VERSION of each --include, when no dist-info lies above it")
    parser.add_argument("--rules", type=Path, default=REPO / "rules", help="the rules folder to write")
    parser.add_argument("--oracle", type=Path, default=DEFAULT_ORACLE,
                        help="Moore Threads' general.json, to mark names it lacks as inferred")
    args = parser.parse_args(argv)
    oracle = load_oracle(args.oracle)
    if oracle is None:
        print(f"warning: no oracle at {args.oracle}; nothing is marked inferred", file=sys.stderr)
    by_library, sources = generate(spec, args.include, args.package, oracle)
    for library, records in sorted(by_library.items()):
        path = args.rules / library / "generated.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render(library, records, sources, spec), encoding="utf-8")
        print(f"{path}: {len(records)} records")
    return 0


def emit_all(argv: list[str] | None = None) -> None:
    """`python -m tools.gen_rules.libraries_a MODULE ARGS...`: run one library's generator."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in EMITTERS:
        raise SystemExit(f"usage: python -m tools.gen_rules.libraries_a {{{','.join(EMITTERS)}}} ARGS")
    module = importlib.import_module(f"tools.gen_rules.{argv[0]}")
    raise SystemExit(main(module.SPEC, argv[1:]))


if __name__ == "__main__":
    emit_all()
