"""Load rule files, validate every record, compile one RuleSet, cache it by content hash.

Validation errors name the rule file and the line of the record, so a typo in a hand-written
table is found at start-up rather than as a silently missing rename.
"""

from __future__ import annotations

import json
import mmap
import os
import re
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from musify import digests, resources
from musify.rules import compact, derived
from musify.rules.files import (  # noqa: F401 -- re-exported: the loader's public surface
    LOADER_VERSION,
    RuleFileError,
    builtin_digest,
    default_rules_dir,
    rule_files,
    rules_digest,
    ruleset_digest,
    user_suffix,
)
from musify.rules.model import HAZARDS, KINDS, STATUSES, Rule, RuleSet, rule_key

SCHEMA = "musify-rules/1"
RECORD_KEYS = frozenset(
    {"cuda", "musa", "kind", "library", "status", "diag", "note", "inferred", "section", "header", "reverse",
     "hazard", "overrides"}
)
FILE_KEYS = frozenset({"schema", "library", "kind", "status", "source", "rules", "section", "vendor_prefixes"})
ANNOUNCE_AFTER = 1.0  # seconds: a first-run rules build that takes longer says so on stderr
_RECORD_LINE = r"^\s*-\s"  # compiled on first use: only a rules rebuild reads YAML


def _cache_dir() -> Path:
    return resources.cache_dir("rules")


def compiled_name(digest: str) -> str:
    """The file name of a compiled RuleSet (the per-user cache and the copy a wheel ships): the
    rules' digest, and the fingerprint of the code that made its derived tables."""
    return f"ruleset-{digest}-{derived.fingerprint()}.rules"


def load_ruleset(rules_dir: Path | None = None, extra: list[Path] | None = None,
                 use_cache: bool = True) -> RuleSet:
    """The built-in rules (cached by content hash), then each `extra` user table in order."""
    rules_dir = rules_dir or default_rules_dir()
    if not rules_dir.is_dir():
        raise RuleFileError(f"{rules_dir}:1: the rule database is not there; reinstall musify "
                            "(pip install musify, or pip install -e . in a checkout) or point "
                            "MUSIFY_RULES_DIR at a rules/ folder")
    ruleset = _read_cache(builtin_digest(rules_dir)) if use_cache else None
    if ruleset is None:
        blobs = [(path, path.read_bytes()) for path in rule_files(rules_dir)]
        digest = rules_digest(blobs, rules_dir)
        with _announced(len(blobs), use_cache):
            ruleset = compile_rules(blobs, rules_dir, digest)
            if use_cache:
                _write_cache(digest, ruleset)
    for path in extra or []:
        for rule in parse_user_table(Path(path)):
            ruleset.add(rule)
        ruleset.digest += user_suffix(Path(path))
    return ruleset


@contextmanager
def _announced(count: int, on: bool) -> Iterator[None]:
    """Say on stderr what a first run (nothing cached, nothing shipped) is doing, once it has
    taken over a second (ANNOUNCE_AFTER): a quick build says nothing, a slow one is not silent."""
    if not on:
        yield
        return
    t0 = time.perf_counter()
    said = threading.Event()

    def say() -> None:
        said.set()
        print(f"musify: compiling the rule database ({count} files) into {_cache_dir()} "
              "(once per rules version)...", file=sys.stderr, flush=True)

    timer = threading.Timer(ANNOUNCE_AFTER, say)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        if said.is_set():
            print(f"musify: rule database compiled in {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)


def compile_rules(blobs: list[tuple[Path, bytes]], rules_dir: Path, digest: str) -> RuleSet:
    """Parse and validate every rule file into one RuleSet (about a second for the built-in
    4.6 MB: `musify.rules.flowfile` reads the one-line records)."""
    ruleset = RuleSet(digest=digest)
    rules: list[Rule] = []
    prefixes: list[str] = []
    for path, data in blobs:
        rules.extend(parse_rule_file(path, data, rel_to=rules_dir.parent, prefixes=prefixes))
    for rule in resolve_duplicates(rules, ruleset.overridden):
        ruleset.add(rule)
    ruleset.vendor_pattern = "|".join(sorted(set(prefixes), key=lambda p: (-len(p), p)))
    return ruleset


def resolve_duplicates(rules: list[Rule], overridden: dict) -> list[Rule]:
    """One record per name. A name defined twice is an error unless exactly one of its records
    says `overrides: REASON`; that one wins, whatever the file order, and the records it replaces
    are kept in `overridden` for `musify rules show`. So no definition wins silently by path order."""
    groups: dict[tuple[bool, str], list[Rule]] = {}
    for rule in rules:
        groups.setdefault(rule_key(rule), []).append(rule)
    out = []
    for key, group in groups.items():
        if len(group) == 1:
            if group[0].overrides:
                raise RuleFileError(f"{group[0].origin}: {group[0].cuda}: says 'overrides' but no other "
                                    "rule file defines this name; remove the key")
            out.append(group[0])
            continue
        winners = [r for r in group if r.overrides]
        if len(winners) != 1:
            shown = ", ".join(r.origin for r in group)
            why = ("none says 'overrides: REASON'" if not winners else
                   "more than one says 'overrides'")
            raise RuleFileError(f"{group[-1].origin}: {group[-1].cuda} is defined {len(group)} times ({shown}) "
                                f"and {why}; keep one definition, or mark the one that wins with "
                                "'overrides: <why it replaces the other>'")
        overridden[key] = [r for r in group if r is not winners[0]]
        out.append(winners[0])
    return out


def _read_cache(digest: str) -> RuleSet | None:
    """The compiled RuleSet for `digest`: the copy shipped in the package, else the user cache.
    A file that is not a whole compiled RuleSet of this format is passed over (and, in the user
    cache, replaced by the compilation that follows)."""
    name = compiled_name(digest)
    shipped = resources.packaged_file(name)
    for path in ([shipped] if shipped else []) + [_cache_dir() / name]:
        try:
            with open(path, "rb") as fh:
                # mapped, not read: a record is read from the page cache when its name is first
                # looked up (the file is only ever replaced whole, never rewritten in place)
                data = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
                st = os.fstat(fh.fileno())
        except (OSError, ValueError):  # missing, unreadable, or empty (nothing to map)
            continue
        # every byte checked before any is used (once per file: see `compact.intact`)
        if not digests.checked(path, st, lambda data=data: compact.intact(data)):
            continue
        ruleset = compact.load(data)
        if ruleset is not None and ruleset.digest == digest:
            return ruleset
    return None


def save_compiled(ruleset: RuleSet, path: Path) -> None:
    """Write a compiled RuleSet, with the tables runs derive from it, atomically (a concurrent
    reader sees the old file or the new)."""
    data = compact.dump(ruleset, derived.compute(ruleset), derived.PARTIAL)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}.{os.getpid()}.tmp"
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:  # a full disk, or Ctrl-C while writing: no part left behind
        try:
            tmp.unlink()
        except OSError:
            pass
        raise


def _write_cache(digest: str, ruleset: RuleSet) -> None:
    path = _cache_dir() / compiled_name(digest)
    try:
        save_compiled(ruleset, path)
    except OSError:
        return  # a read-only home still works, just without the cache
    _prune(path)


KEEP = 4  # compiled files kept in the cache (others: older rules, or older code: see `compiled_name`)


def _prune(written: Path) -> None:
    """Remove all but the `KEEP` newest compiled files beside `written` (which stays): each edit
    of the code behind the derived tables names a new file, and a checkout being worked on would
    otherwise gather one per edit. Two installations sharing the cache keep a file each."""
    try:
        found = [(entry.stat().st_mtime_ns, entry.path) for entry in os.scandir(written.parent)
                 if entry.name.startswith("ruleset-") and entry.name.endswith(".rules") and entry.path != str(written)]
    except OSError:
        return
    for _, path in sorted(found, reverse=True)[KEEP - 1:]:
        try:
            os.unlink(path)  # a run that has it mapped keeps its pages (never truncated)
        except OSError:
            continue
        digests.forget_checked(path)


def parse_rule_file(path: Path, data: bytes | None = None, rel_to: Path | None = None,
                    prefixes: list[str] | None = None) -> list[Rule]:
    """Validate and type one musify rule file; its `vendor_prefixes` are appended to `prefixes`."""
    text = (data if data is not None else path.read_bytes()).decode("utf-8")
    shown = str(path.relative_to(rel_to)) if rel_to and path.is_relative_to(rel_to) else str(path)
    import yaml  # here, not at the top: a run with compiled rules never parses YAML

    from musify.rules import flowfile

    try:
        fast = flowfile.read(text)  # one-line records without PyYAML's constructor (same values)
        doc, lines = fast if fast else (yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)), None)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark else 1
        raise RuleFileError(f"{shown}:{line}: not valid YAML: {getattr(exc, 'problem', exc)}") from None
    if not isinstance(doc, dict):
        raise RuleFileError(f"{shown}:1: a rule file is a mapping with a 'rules' list")
    for key in doc:
        if key not in FILE_KEYS:
            raise RuleFileError(f"{shown}:1: unknown top-level key {key!r}")
    if doc.get("schema") != SCHEMA:
        raise RuleFileError(f"{shown}:1: 'schema' must be {SCHEMA!r}, got {doc.get('schema')!r}")
    records = doc.get("rules") or []
    if not isinstance(records, list):
        raise RuleFileError(f"{shown}:1: 'rules' must be a list")
    vendor = doc.get("vendor_prefixes") or []
    if not isinstance(vendor, list) or not all(isinstance(v, str) and v for v in vendor):
        raise RuleFileError(f"{shown}:1: 'vendor_prefixes' must be a list of regular expressions")
    for v in vendor:
        try:
            re.compile(v)
        except re.error as exc:
            raise RuleFileError(f"{shown}:1: vendor prefix {v!r} is not a regular expression: {exc}") from None
    if prefixes is not None:
        prefixes.extend(vendor)
    if lines is None:
        lines = _record_lines(text)
    defaults = {k: doc[k] for k in ("library", "kind", "status", "section") if k in doc}
    out = []
    for i, rec in enumerate(records):
        where = f"{shown}:{lines[i] if i < len(lines) else 1}"
        out.append(_make_rule(rec, defaults, where))
    return out


def _record_lines(text: str) -> list[int]:
    """Where each record starts (the line of each list item), counted forward once."""
    lines, seen, at = [], 0, 0
    for m in re.finditer(_RECORD_LINE, text, re.MULTILINE):
        seen += text.count("\n", at, m.start())
        at = m.start()
        lines.append(seen + 1)
    return lines


def _make_rule(rec: object, defaults: dict, where: str) -> Rule:
    if not isinstance(rec, dict):
        raise RuleFileError(f"{where}: a record must be a mapping, got {type(rec).__name__}")
    for key in rec:
        if key not in RECORD_KEYS:
            raise RuleFileError(f"{where}: unknown key {key!r}")
    merged = {**defaults, **rec}
    cuda = merged.get("cuda")
    if not isinstance(cuda, str) or not cuda:
        raise RuleFileError(f"{where}: 'cuda' is required and must be a string")
    musa = merged.get("musa")
    kind = merged.get("kind")
    status = merged.get("status")
    if kind not in KINDS:
        raise RuleFileError(f"{where}: {cuda}: kind {kind!r} is not one of {sorted(KINDS)}")
    if status not in STATUSES:
        raise RuleFileError(f"{where}: {cuda}: status {status!r} is not one of {sorted(STATUSES)}")
    if not merged.get("library"):
        raise RuleFileError(f"{where}: {cuda}: 'library' is required")
    if status in ("renamed", "shim") and not isinstance(musa, str):
        raise RuleFileError(f"{where}: {cuda}: status {status} needs a 'musa' name")
    if status == "unchanged" and musa not in (None, cuda):
        raise RuleFileError(f"{where}: {cuda}: an unchanged record cannot name a different 'musa'")
    if status == "unsupported" and musa is not None:
        raise RuleFileError(f"{where}: {cuda}: an unsupported record has no 'musa' name")
    diag = merged.get("diag")
    if diag is not None and diag not in _catalogue():
        raise RuleFileError(f"{where}: {cuda}: diag {diag!r} is not in the diagnostic catalogue")
    if status == "shim" and not merged.get("header"):
        raise RuleFileError(f"{where}: {cuda}: a shim record needs its 'header'")
    hazard = merged.get("hazard") or ()
    hazard = (hazard,) if isinstance(hazard, str) else hazard
    if not isinstance(hazard, (list, tuple)) or not all(isinstance(h, str) for h in hazard):
        raise RuleFileError(f"{where}: {cuda}: 'hazard' is a tag or a list of tags")
    for tag in hazard:
        if tag not in HAZARDS:
            raise RuleFileError(f"{where}: {cuda}: hazard {tag!r} is not one of {sorted(HAZARDS)}")
    overrides = merged.get("overrides")
    if overrides is not None and (not isinstance(overrides, str) or len(overrides.split()) < 3):
        raise RuleFileError(f"{where}: {cuda}: 'overrides' needs a reason (a few words on why this "
                            "record replaces the other)")
    return Rule(
        cuda=cuda,
        musa=musa if status != "unchanged" else cuda,
        kind=kind,
        library=str(merged["library"]),
        status=status,
        diag=merged.get("diag"),
        note=merged.get("note"),
        inferred=bool(merged.get("inferred", False)),
        section=merged.get("section"),
        header=merged.get("header"),
        reverse=bool(merged.get("reverse", True)),
        origin=where,
        hazard=tuple(hazard),
        overrides=overrides,
    )


def _catalogue() -> dict:
    """The diagnostic catalogue, imported to validate a record (loading compiled rules needs none)."""
    from musify.diagnostics import CATALOGUE

    return CATALOGUE


def _looks_like_header(name: str) -> bool:
    return "/" in name or name.endswith((".h", ".hpp", ".cuh", ".hxx", ".inl"))


def parse_user_table(path: Path) -> list[Rule]:
    """A user table: musify's own YAML format, or musify-text's flat JSON `{"cudaX": "musaX"}`."""
    if path.suffix in (".yaml", ".yml"):
        return parse_rule_file(path)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise RuleFileError(f"{path}:{exc.lineno}: not valid JSON: {exc.msg}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise RuleFileError(f"{path}:1: cannot read mapping table: {exc}") from None
    if not isinstance(doc, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in doc.items()):
        raise RuleFileError(f"{path}:1: a flat mapping table is a JSON object of string to string")
    out = []
    for cuda, musa in doc.items():
        kind = "header" if _looks_like_header(cuda) else "function"
        out.append(Rule(cuda=cuda, musa=musa, kind=kind, library="user", status="renamed",
                        origin=f"{path}:1"))
    return out
