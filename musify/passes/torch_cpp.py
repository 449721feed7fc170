"""PyTorch C++ rules that need structure, not just a name (`rules/torch_cpp/structural.toml`).

* member calls: `x.is_cuda()` -> `x.is_privateuseone()`, never a user's own `is_cuda` variable;
* dispatch keys as a macro argument: `TORCH_LIBRARY_IMPL(ns, CUDA, m)` -> `PrivateUse1`;
* names a registration macro declares (`TORCH_LIBRARY(cuda_ops, m)`): the project's own, never an
  unrecognised vendor name (MU1001) anywhere in the run;
* case labels: `case c10::DeviceType::CUDA:` in a switch that already has a `PrivateUse1` label
  would, renamed, be a duplicate label; it is kept as written (the rename is vetoed) with MU6050.

Plain names (`getCurrentCUDAStream`, `at::cuda::`, `DeviceType::CUDA`) are ordinary rules in
`rules/torch_cpp/aten.yaml`, renamed by the identifier pass.
"""

from __future__ import annotations

import re
from functools import lru_cache

from musify.engine.edits import Edit
from musify.passes._base import PassContext
from musify.passes.literals import holds_any, register
from musify.rules.vocab import records, torch_cpp_vocab

LIBRARY = "torch"


@lru_cache(maxsize=1)
def _patterns() -> dict:
    v = torch_cpp_vocab()
    members = {r["cuda"]: r for r in records(v, "member_call")}
    macros = {}
    for r in records(v, "macro_argument"):
        macros.setdefault(r["macro"], {})[(r["index"], r["cuda"])] = r
    for r in records(v, "macro_declares"):  # (index, None): the argument at index is a declaration
        macros.setdefault(r["cuda"], {}).update({(i, None): r for i in r["indices"]})
    labels = records(v, "case_label")
    register(*members, *macros, "case")  # each search's opening test, answered with the other passes' words
    return {
        "member": re.compile(r"(?:\.|->)\s*(" + "|".join(map(re.escape, members)) + r")\s*\(") if members else None,
        "members": members,
        "macro": _macro_search(macros) if macros else None,
        "macros": macros,
        "label": _WordStart(re.compile(r"\bcase\s+((?:[A-Za-z_]\w*\s*::\s*)*)(" + "|".join(
            re.escape(r["cuda"]) for r in labels) + r")\s*:(?!:)")) if labels else None,
        "labels": labels,
        # each search runs only where its names occur (a match needs one): every file that says
        # CUDA once would otherwise pay three regular-expression walks of its whole text
        "member_names": tuple(members),
        "macro_names": tuple(macros),
        "label_names": ("case",) if labels else (),
        # a label's name stands as a word in code, which the scan answers without reading the text
        "label_words": frozenset(r["cuda"] for r in labels),
    }


def _macro_search(macros: dict):
    r"""The search for a call of one of `macros`, searched as the word they all hold
    (`_WordStart`: TORCH_LIBRARY, which STABLE_TORCH_LIBRARY_IMPL holds at 7), which the leading
    `\b` would otherwise make the regex engine try at every offset (57 us on a 700-byte file); the
    plain search where they share no word."""
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, macros)) + r")\s*\(")
    word = min(macros, key=len)
    if not all(word in m for m in macros):
        return pattern
    return _WordStart(pattern, word, tuple(sorted({m.index(word) for m in macros}, reverse=True)))


def triggers(ruleset) -> tuple[str, ...]:
    """`run` searches only where one of its searches' names occurs (`_mentions`): a file holding
    none is skipped by the runner (`literals.file_bits`)."""
    p = _patterns()
    return (*(p["member_names"] if p["member"] is not None else ()), *(p["macro_names"] if p["macro"] is not None else ()),
            *(p["label_names"] if p["label"] is not None else ()))


def run(ctx: PassContext) -> list[Edit]:
    p = _patterns()
    text = ctx.text
    members = p["member"] is not None and _mentions(ctx, p["member_names"])
    macros = p["macro"] is not None and _mentions(ctx, p["macro_names"])
    labels = p["label"] is not None and ctx.scan.may_hold(p["label_words"]) and _mentions(ctx, p["label_names"])
    if not (members or macros or labels):
        return []
    code = ctx.scan.code_map()
    edits: list[Edit] = []
    if members:
        pos = 0
        while (m := code.search(p["member"], text, pos)) is not None:
            rule = p["members"][m.group(1)]
            edits.append(Edit(m.start(1), m.end(1), rule["musa"], "." + rule["cuda"] + "()", LIBRARY, "function"))
            pos = m.end()
    if macros:
        pos = 0
        while (m := code.search(p["macro"], text, pos)) is not None:
            edits.extend(_macro_args(ctx, m, p["macros"][m.group(1)]))
            pos = m.end()
    if labels:
        pos = 0
        while (m := code.search(p["label"], text, pos)) is not None:
            _case_label(ctx, code, m, p["labels"])
            pos = m.end()
    return edits


class _WordStart:
    r"""A pattern that opens with `\b` and a literal word, searched as fast as the word alone:
    the regex engine finds a literal quickly, but a leading `\b` defeats that and it tries every
    offset (the `case` label search was most of this pass on the CUDA headers, 0.1 s, on files
    that mention CUDA and `case` and have no such label). The pattern is tried at each
    occurrence of the word only; a match found is the one `pattern.search` finds (the word
    starts every match). tests/test_prefilters.py checks it against the plain search."""

    __slots__ = ("backs", "pattern", "word")

    def __init__(self, pattern: re.Pattern[str], word: str | None = None, backs: tuple[int, ...] = (0,)) -> None:
        r"""`word`: the literal every match starts with, where the pattern does not spell it
        right after its `\b` (in a group); `backs`: where a match may start before the word, the
        farthest first (a longer name that ends with the word: `STABLE_` before TORCH_LIBRARY_IMPL)."""
        self.pattern = pattern
        self.word = word or re.match(r"\\b(\w+)", pattern.pattern).group(1)
        self.backs = backs

    def search(self, text: str, pos: int = 0) -> re.Match[str] | None:
        word, match = self.word, self.pattern.match
        at = text.find(word, pos)
        while at >= 0:
            for back in self.backs:  # (the farthest first: the leftmost match, as `search` finds)
                if at - back >= pos and (m := match(text, at - back)) is not None:
                    return m
            at = text.find(word, at + 1)
        return None


def _mentions(ctx: PassContext, names: tuple[str, ...]) -> bool:
    """One of `names` occurs in the file's text (`literals.holds`: one pass for every pass's words)."""
    return holds_any(ctx, names)


def _macro_args(ctx: PassContext, m: re.Match[str], rules: dict) -> list[Edit]:
    """Split the macro's arguments at top-level commas and rewrite the ones a rule names."""
    text = ctx.text
    depth = 0
    start = m.end()
    index = 0
    out = []
    for i in range(m.end(), min(len(text), m.end() + 2000)):
        c = text[i]
        if c in "([{":
            depth += 1
        elif c in ")]}" and depth:
            depth -= 1
        elif (c == "," and depth == 0) or (c == ")" and depth == 0):
            arg = text[start:i]
            name = arg.strip()
            if (index, None) in rules and name.isidentifier():
                ctx.found.declared.add(name)  # (`finalise` drops the run's MU1001 for it)
            rule = rules.get((index, name))
            if rule is not None:
                at = start + arg.index(name)
                out.append(Edit(at, at + len(name), rule["musa"], f"{m.group(1)}:{name}", LIBRARY, "enumerator"))
                _forget_unknown(ctx, name, at)
            if c == ")":
                break
            index += 1
            start = i + 1
    return out


def _forget_unknown(ctx: PassContext, name: str, at: int) -> None:
    """The name is handled here: not an unrecognised vendor name (MU1001) after all."""
    line, col = ctx.lines.position(at)
    ctx.pending_unknown[:] = [u for u in ctx.pending_unknown if u != (name, line, col)]


def _case_label(ctx: PassContext, code, m: re.Match[str], labels: list[dict]) -> None:
    name = m.group(2)
    qualifier = re.sub(r"\s+", "", m.group(1)).rstrip(":").split("::")[-1] if m.group(1) else ""
    rule = next((r for r in labels if r["cuda"] == name and r.get("qualifier", "") == qualifier), None)
    if rule is None:
        return
    block = _enclosing_block(ctx.text, code, m.start())
    if block is None:
        return
    body = ctx.text[block[0]:block[1]]
    if re.search(r"\bcase\s+(?:[A-Za-z_]\w*\s*::\s*)*" + re.escape(rule["musa"]) + r"\s*:(?!:)", body):
        ctx.protect(m.start(2), m.end(2))
        ctx.warn(rule["diag"], m.start(), end=m.end(2), name=(m.group(1) + name).replace(" ", ""),
                 origin="pass:torch_cpp")


def _enclosing_block(text: str, code, pos: int) -> tuple[int, int] | None:
    """The innermost `{...}` around `pos` (braces in comments and literals ignored). The braces
    are found with `find`/`rfind`, one step per brace rather than one per character."""
    depth = 0
    i = pos
    rfind = text.rfind
    while True:
        i = max(rfind("{", 0, i), rfind("}", 0, i))
        if i < 0:
            return None
        if not code.is_code(i):
            continue
        if text[i] == "}":
            depth += 1
        elif depth:
            depth -= 1
        else:
            break
    open_at = i
    depth = 0
    find = text.find
    j = open_at
    while j >= 0:
        if code.is_code(j):
            depth += 1 if text[j] == "{" else -1
            if depth == 0:
                return open_at, j + 1
        a, b = find("{", j + 1), find("}", j + 1)
        j = a if b < 0 or 0 <= a < b else b
    return None
