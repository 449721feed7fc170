"""Structural facts for the record: kernel definitions and `<<<...>>>` launches.

Both are found lexically (exact on the scanner's code map); each launch statement is then parsed
with tree-sitter-cuda, so a launch the syntax tree cannot read is reported (MU0007) rather than
counted blindly. No edits: launches keep their syntax on MUSA.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from musify.engine.edits import Edit
from musify.frontend import syntax
from musify.frontend.launch_shape import well_formed
from musify.frontend.launches import (
    KERNEL_WORD,
    NATIVE_COUNTS,
    count_kernel_defs,
    kernel_text,
    launch_spans,
    structure_counts,
)
from musify.passes._base import PassContext
from musify.passes.hazards.file_facts import directive_at
from musify.passes.literals import holds, holds_any, register
from musify.patterns import lazy_pattern

_PASTE = lazy_pattern(globals(), "_PASTE", r"\s*##\s*")
_STRINGIZE = lazy_pattern(globals(), "_STRINGIZE", r"(?<![\w\"'])#\s*([A-Za-z_]\w*)")

# launches parsed together: a file's worth at once made tree-sitter hold the whole file's tree
# (hundreds of MB for a 50 MB file); a few hundred at a time costs no more parses on real code
BATCH = 256
_WORDS = ("<<<", KERNEL_WORD)  # what both searches first ask: without either, nothing to count
register(*_WORDS)
# the facts of a file holding neither word, which the runner writes for it without the call
# (`triggers`: most files of a tree define no kernel and launch none)
IDLE_FACTS = {"kernels": 0, "launches": 0, "launches_parsed": 0}


def triggers(ruleset) -> tuple[str, ...]:
    """Every kernel definition holds `__global__` and every launch `<<<`."""
    return _WORDS


def run(ctx: PassContext) -> list[Edit]:
    facts = ctx.found.facts
    if not holds_any(ctx, _WORDS):  # no code map made
        facts.update(IDLE_FACTS)
        return []
    text = ctx.text
    if NATIVE_COUNTS:  # both searches and the plain launches' test in one call, no code map made
        kernels, launches = structure_counts(text, ctx.scan.spans)
        if type(launches) is int:
            parsed = launches
        else:  # some launch is not plain: counted and parsed as below
            launches, parsed = _count(ctx, launches)
    else:
        codemap = ctx.scan.code_map()
        kernels = count_kernel_defs(text, codemap, present=True) if holds(ctx, KERNEL_WORD) else 0
        launches, parsed = _count(ctx, launch_spans(text, codemap, present=True) if holds(ctx, "<<<") else ())
    facts["kernels"] = kernels
    facts["launches"] = launches
    facts["launches_parsed"] = parsed
    return []


def _count(ctx: PassContext, spans: Iterable[tuple]) -> tuple[int, int]:
    """(how many launches `spans` yields, how many of them tree-sitter reads), parsed in batches."""
    launches = parsed = 0
    batch: list[tuple] = []
    for launch in spans:  # never all at once
        batch.append(launch)
        if len(batch) == BATCH:
            parsed += _parse(ctx, batch)
            launches += len(batch)
            batch = []
    if batch:
        parsed += _parse(ctx, batch)
        launches += len(batch)
    return launches, parsed


def _parse(ctx: PassContext, launches: list[tuple]) -> int:
    """How many of `launches` (`launch_spans` tuples) tree-sitter reads, warning about each it
    cannot. A plain launch (`launch_shape.well_formed`) is one tree-sitter reads, alone or beside
    others, and is not parsed: in a macro's body as well, since a plain launch holds no '#' and
    no '\\', so `_parseable` reads it as written there too. The others are parsed together, in
    one batch; only when that fails is each parsed on its own, to say which one it cannot read.
    (The batch held every launch of the file once one was not plain: in the replicated corpus,
    two files a copy with a template call or a brace in one launch had all their launches parsed.)"""
    text = ctx.text
    odd = [launch for launch in launches if not well_formed(text, launch[0], launch[4] + 1)]
    if not odd:
        return len(launches)
    snippets = [_parseable(ctx, text[start:close + 1], directive_at(ctx, start) is not None) + ";"
                for start, _, _, _, close in odd]
    together = syntax.parse_statement("\n".join(snippets))
    if together.ok and syntax.count_kernel_calls(together.root) == len(odd):
        return len(launches)
    parsed = len(launches) - len(odd)
    for launch, snippet in zip(odd, snippets):
        tree = syntax.parse_statement(snippet)
        if tree.ok and syntax.count_kernel_calls(tree.root):
            parsed += 1
        else:
            start, lt = launch[0], launch[1]
            kernel = kernel_text(text, start, lt)
            ctx.warn("MU0007", start, kernel, construct=f"the launch of '{kernel}'")
    return parsed


def _parseable(ctx: PassContext, launch: str, in_macro: bool) -> str:
    """The launch as tree-sitter-cuda can read it: extended lambdas' execution spaces blanked; in
    a macro's body (PyTorch's TORCH_DSA_KERNEL_LAUNCH), its line continuations blanked, `#x` read
    as the string it makes and `a ## b` as one name."""
    if in_macro:
        launch = _STRINGIZE.sub(r'"\1"', _PASTE.sub("", launch.replace("\\\n", " \n")))
    if "]" not in launch:
        return launch
    return _lambda_spaces(ctx.ruleset.tagged("execution-space")).sub(lambda m: " " * len(m.group()), launch)


@lru_cache(maxsize=4)
def _lambda_spaces(words: frozenset[str]) -> re.Pattern[str]:
    """An extended lambda's execution space (`[=] __device__ (int i) {...}`, common in launch
    arguments: PyTorch's DistributionTemplates.h) is CUDA syntax tree-sitter-cuda does not read; it
    is blanked (same length) in the copy that is parsed: no offset changes, nothing is written."""
    alternatives = "|".join(sorted(map(re.escape, words))) or r"(?!)"
    return re.compile(rf"(?<=\])(?:\s*(?:{alternatives})\b)+")
