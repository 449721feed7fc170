"""Typed rule records and the compiled RuleSet that passes look names up in.

Passes receive `Rule` objects, never raw dicts, so a field a pass relies on is checked once, at
load time, with the file and line of the record.
"""

from __future__ import annotations

from dataclasses import dataclass, field

KINDS = frozenset(
    {"function", "type", "enum", "enumerator", "macro", "variable", "namespace", "header", "keyword"}
)
STATUSES = frozenset({"renamed", "unchanged", "unsupported", "shim"})


@dataclass(frozen=True)
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

    @property
    def replacement(self) -> str | None:
        """The text that replaces the CUDA spelling, or None when the name is left as is."""
        if self.status in ("renamed", "shim") and self.musa and self.musa != self.cuda:
            return self.musa
        return None


@dataclass
class RuleSet:
    """All records compiled for lookup: plain dicts, so the hot path is one dict probe per name."""

    names: dict[str, Rule] = field(default_factory=dict)
    headers: dict[str, Rule] = field(default_factory=dict)
    # last component of a qualified name -> [(qualifier parts, rule)]
    qualified: dict[str, list[tuple[tuple[str, ...], Rule]]] = field(default_factory=dict)
    digest: str = ""

    def add(self, rule: Rule) -> None:
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
