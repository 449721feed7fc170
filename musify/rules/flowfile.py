"""Read a rule file whose records are one-line YAML flow mappings, without PyYAML's constructor.

Compiling the 4.6 MB rule database with PyYAML (even its C parser) took about 5 s: the parser is
C, but every one of the 370,000 scalars is resolved and constructed in Python. Every record in
`rules/` is one line, `  - {cuda: X, musa: Y, kind: function, ...}` (the generators write them so
and the hand-written tables follow), so this module reads those lines with one regular
expression per pair and resolves each plain scalar with PyYAML's own implicit-resolver table
(the same regular expressions, first character first), so the values are exactly the ones
`yaml.safe_load` gives. The rest of the file (the header keys above `rules:` and anything
after the list) is small and goes to PyYAML as usual.

A file that leaves this subset anywhere -- a record over several lines, an escape in a quoted
string, a tag, an anchor, a number, a comment after a record -- gives None and the caller
parses the whole file with PyYAML: never a different value, at worst the old speed.
`tests/test_rules_flowfile.py` checks both readers agree on every shipped file.
"""

from __future__ import annotations

import re

# one `key: value` of a flow mapping; a plain scalar is the common case and is checked again
# by PyYAML's resolver table below. In a flow context a plain scalar ends at ", " "}" "]" and a
# ':' ends it only when followed by a space or a flow indicator (so `thrust::cuda` is one scalar).
_PLAIN = r"[A-Za-z0-9_./](?:[A-Za-z0-9_./+-]|:(?=[A-Za-z0-9_./+:-]))*"
_PAIR = re.compile(
    r"([A-Za-z_][A-Za-z0-9_]*): (?:\"([^\"\\\n]*)\"|'([^'\n]*)'|\[([^\]\n\"'{}\[]*)\]|(" + _PLAIN + r"))(, |\}$)")
_ITEM = re.compile(_PLAIN)
_RECORD = "  - {"
_BOOLS = {"yes": True, "no": False, "true": True, "false": False, "on": True, "off": False}


class _Outside(Exception):
    """The file is not in the subset this reader handles."""


def _resolvers() -> dict:
    from yaml.resolver import Resolver

    return Resolver.yaml_implicit_resolvers


def _plain(value: str, resolvers: dict):
    """A plain scalar's value as PyYAML's SafeLoader constructs it (str, bool or None here)."""
    for tag, regexp in resolvers.get(value[0], ()):
        if regexp.match(value):
            if tag == "tag:yaml.org,2002:bool":
                return _BOOLS[value.lower()]
            if tag == "tag:yaml.org,2002:null":
                return None
            raise _Outside  # an int, a float, a timestamp...: PyYAML's constructors decide
    return value


def _record(line: str, resolvers: dict) -> dict:
    pos, end = len(_RECORD), len(line)
    out: dict = {}
    while True:
        m = _PAIR.match(line, pos)
        if m is None:
            raise _Outside
        key, dq, sq, seq, plain, sep = m.groups()
        if _plain(key, resolvers) != key:
            raise _Outside
        if dq is not None:
            value = dq
        elif sq is not None:
            value = sq
        elif seq is not None:
            value = _sequence(seq, resolvers)
        else:
            value = _plain(plain, resolvers)
        out[key] = value
        pos = m.end()
        if sep == "}":
            if pos != end:
                raise _Outside
            return out


def _sequence(body: str, resolvers: dict) -> list:
    items = body.split(", ") if body else []
    out = []
    for item in items:
        if not _ITEM.fullmatch(item):
            raise _Outside
        out.append(_plain(item, resolvers))
    return out


def read(text: str) -> tuple[dict, list[int]] | None:
    """The document and the line number of each record, or None when `text` is outside the
    subset (then PyYAML reads it)."""
    lines = text.split("\n")
    try:
        start = lines.index("rules:")
    except ValueError:
        return None
    resolvers = _resolvers()
    records, numbers = [], []
    stop = len(lines)
    try:
        for n in range(start + 1, len(lines)):
            line = lines[n]
            if line.startswith(_RECORD):
                records.append(_record(line, resolvers))
                numbers.append(n + 1)
            elif line.strip() and not line.lstrip().startswith("#"):
                if line[0] in " \t-":
                    return None  # part of the list this reader does not take
                stop = n
                break
    except _Outside:
        return None
    if not records:
        return None
    import yaml

    rest = "\n".join(lines[:start] + [""] * (stop - start) + lines[stop:])
    doc = yaml.load(rest, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) or {}
    if not isinstance(doc, dict) or "rules" in doc:
        return None
    doc["rules"] = records
    return doc, numbers
