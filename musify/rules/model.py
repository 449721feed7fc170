"""Typed rule records and the compiled RuleSet that passes look names up in.

Passes receive `Rule` objects, never raw dicts, so a field a pass relies on is checked once, at
load time, with the file and line of the record.
"""

from __future__ import annotations

from collections.abc import Callable, MutableMapping
from dataclasses import field, fields
from operator import attrgetter

from musify.classes import dataclass

KINDS = frozenset(
    {"function", "type", "enum", "enumerator", "macro", "variable", "namespace", "header", "keyword"}
)
STATUSES = frozenset({"renamed", "unchanged", "unsupported", "shim"})

# What is special about a name, for the passes that act on it (`hazard:` in a record). A pass
# finds its names through these tags, never by spelling, so the vocabulary of CUDA lives in
# rules/ alone. Each tag names the pass that reads it (shown by `musify rules show`).
HAZARDS: dict[str, tuple[str, str]] = {
    "arch-macro": ("arch_guards", "the compiler's architecture number; numeric comparisons get a MUSA threshold"),
    "version-release": ("version_macros", "a CUDA version number (major*1000 + minor*10); comparisons are reported"),
    "version-major": ("version_macros", "a CUDA major version number; comparisons are reported"),
    "version-minor": ("version_macros", "a CUDA minor version number; comparisons are reported"),
    "version-other": ("version_macros", "a CUDA compiler version number; comparisons are reported"),
    "lane-mask-arg": ("warp_size", "the first argument is a mask of warp lanes"),
    "lane-mask-result": ("warp_size", "returns a mask of warp lanes (one bit per lane)"),
    "shuffle": ("warp_size", "a warp shuffle: its width argument is a lane count"),
    "shuffle-offset": ("warp_size", "a warp shuffle whose offset argument is a lane distance"),
    "popcount": ("warp_size", "counts the bits of a 32-bit word (a lane mask counted with it assumes 32 lanes)"),
    "warp-size": ("warp_size", "the number of lanes in a warp"),
    "thread-index": ("warp_size", "a thread index or block size, from which lane and warp numbers are computed"),
    "kernel-qualifier": ("hazards", "marks a kernel definition (a function body device-side checks look into)"),
    "device-qualifier": ("hazards", "marks a device function definition (a body device-side checks look into)"),
    "execution-space": ("structure", "an execution space an extended lambda can carry (`[=] __device__ (int i) {...}`)"),
    "device-sync": ("features", "a device-wide synchronisation; inside device code it is dynamic parallelism"),
    "device-compilation": ("inline_asm", "a macro the CUDA compiler defines: a file that tests it is meant for device compilation"),
    "template-only": ("identifiers", "a class template whose bare name is an ordinary word: only `NAME<` is this name"),
}


@dataclass(frozen=True, init=False)
class Rule:  # no __slots__: slotted dataclasses unpickle ~10x slower, and the cache is a pickle
    cuda: str
    musa: str | None
    kind: str
    library: str
    status: str
    diag: str | None = None
    note: str | None = None
    inferred: bool = False
    section: str | None = None
    header: str | None = None
    reverse: bool = True
    origin: str = ""  # "rules/runtime/functions.yaml:12"
    hazard: tuple[str, ...] = ()  # tags from HAZARDS
    overrides: str | None = None  # why this record replaces another file's record of the same name

    def __init__(self, cuda: str, musa: str | None, kind: str, library: str, status: str,
                 diag: str | None = None, note: str | None = None, inferred: bool = False,
                 section: str | None = None, header: str | None = None, reverse: bool = True,
                 origin: str = "", hazard: tuple[str, ...] = (), overrides: str | None = None) -> None:
        """The fields in order, as dataclasses' own `__init__` sets them (the same signature:
        tests/test_classes.py compares them); written here because that one, fourteen frozen
        fields, was compiled at every start-up (about 5 M instructions)."""
        self.__dict__.update(cuda=cuda, musa=musa, kind=kind, library=library, status=status, diag=diag,
                             note=note, inferred=inferred, section=section, header=header, reverse=reverse,
                             origin=origin, hazard=hazard, overrides=overrides)

    @property
    def replacement(self) -> str | None:
        """The text that replaces the CUDA spelling, or None when the name is left as is."""
        if self.status in ("renamed", "shim") and self.musa and self.musa != self.cuda:
            return self.musa
        return None


# a Rule's fields in order, `Rule(*rule_record(rule)) == rule`: a record of the compiled file
rule_record: Callable[[Rule], tuple] = attrgetter(*(f.name for f in fields(Rule)))


def rule_key(rule: Rule) -> tuple[bool, str]:
    """What two records must share to define the same name: headers apart, `a :: b` as `a::b`."""
    cuda = "::".join(p.strip() for p in rule.cuda.split("::")) if "::" in rule.cuda else rule.cuda
    return rule.kind == "header", cuda


@dataclass(init="fields")  # a run makes one or two: no __init__ compiled
class RuleSet:
    """All records compiled for lookup: plain dicts, so the hot path is one dict probe per name
    (loaded from the compiled file, `names` and `headers` are `LazyRules`: the same mapping, each
    Rule made at its first look-up). Passes cache what they derive from the records as attributes
    named `_...` on the RuleSet; the compiled file carries some of them (`musify/rules/derived.py`)."""

    names: MutableMapping[str, Rule] = field(default_factory=dict)
    headers: MutableMapping[str, Rule] = field(default_factory=dict)
    # last component of a qualified name -> [(qualifier parts, rule)]
    qualified: dict[str, list[tuple[tuple[str, ...], Rule]]] = field(default_factory=dict)
    digest: str = ""
    # hazard tag -> the CUDA names that carry it
    by_hazard: dict[str, frozenset[str]] = field(default_factory=dict)
    # the records an `overrides:` record replaced: winner's key -> the replaced records
    overridden: dict[tuple[bool, str], list[Rule]] = field(default_factory=dict)
    # spellings that look like a CUDA vendor name (`cuda`, `cu[A-Z]`, ...): a regex alternation
    vendor_pattern: str = ""

    def add(self, rule: Rule) -> None:
        if len(self.__dict__) > _RULESET_FIELDS:  # something derived (or set by a caller) to forget
            self.forget_derived()
        old = self.find(rule)
        if old is not None:
            for tag in old.hazard:
                self.by_hazard[tag] = self.by_hazard[tag] - {old.cuda}
        for tag in rule.hazard:
            self.by_hazard[tag] = self.by_hazard.get(tag, frozenset()) | {rule.cuda}
        self._store(rule)

    def __getstate__(self) -> dict:
        """Pickled without what passes derived (caches, remade on use): a RuleSet loaded from the
        compiled file pickles as a plain one (its tables of names pickle as dicts)."""
        return {k: v for k, v in vars(self).items() if not k.startswith("_")}

    def forget_derived(self) -> None:
        """Drop what passes derived from the records (attributes named `_...`): a record added
        makes it stale."""
        for attr in [a for a in vars(self) if a.startswith("_")]:
            delattr(self, attr)

    def find(self, rule: Rule) -> Rule | None:
        """The record now stored under `rule`'s spelling (header, qualified or plain name)."""
        if rule.kind == "header":
            return self.headers.get(rule.cuda)
        if "::" in rule.cuda:
            parts = tuple(p.strip() for p in rule.cuda.split("::"))
            return next((r for q, r in self.qualified.get(parts[-1], ()) if q == parts[:-1]), None)
        return self.names.get(rule.cuda)

    def tagged(self, tag: str) -> frozenset[str]:
        """The names whose record carries hazard tag `tag`."""
        return self.by_hazard.get(tag, frozenset())

    def _store(self, rule: Rule) -> None:
        if rule.kind == "header":
            self.headers[rule.cuda] = rule
        elif "::" in rule.cuda:
            parts = tuple(p.strip() for p in rule.cuda.split("::"))
            entries = self.qualified.setdefault(parts[-1], [])
            entries[:] = [e for e in entries if e[0] != parts[:-1]]
            entries.append((parts[:-1], rule))
        else:
            self.names[rule.cuda] = rule

    def lookup(self, name: str) -> Rule | None:
        return self.names.get(name)

    def all_rules(self) -> list[Rule]:
        out = list(self.names.values()) + list(self.headers.values())
        for entries in self.qualified.values():
            out.extend(rule for _, rule in entries)
        return out

    def __contains__(self, name: str) -> bool:
        return name in self.names or name in self.headers


_RULESET_FIELDS = len(fields(RuleSet))
