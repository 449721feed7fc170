"""Rewrite `#include` paths: CUDA headers by the header rules, renamed project headers by the
project's own renames (`"util.cuh"` -> `"util.muh"`). Delimiters (`<>` or `""`) are kept.

A `.cuh` that is neither a rule nor a project file (`<cub/cub.cuh>`) is someone else's header and
is left exactly as written.
"""

from __future__ import annotations

import posixpath
from functools import lru_cache
from typing import TYPE_CHECKING

from musify.engine.edits import Edit
from musify.passes._base import PassContext, ProjectInfo
from musify.passes.suffix_index import SuffixIndex

if TYPE_CHECKING:
    from musify.rules.model import Rule


def run(ctx: PassContext) -> list[Edit]:
    """The pass. An include whose answer depends on its path alone (most: a system or CUDA
    header, asked of every file) is answered from the run's memo of that answer (`_fixed`): no
    edit, or the edit's fields; any other (a project header, a rule with a diagnostic) is asked
    in full, as `include_edits` (the reference) asks every include
    (tests/test_ident_include_shortcuts.py)."""
    includes = ctx.scan.includes
    if not includes:
        return []
    return _edits(ctx, includes, _run_memo(ctx.ruleset, ctx.project))


def include_edits(ctx: PassContext) -> list[Edit]:
    """The pass with every include asked in full (what `run` must equal)."""
    if not ctx.scan.includes:
        return []
    return _edits(ctx, ctx.scan.includes, (None, _run_memo(ctx.ruleset, ctx.project)[1]))


def _edits(ctx: PassContext, includes: list, memo: tuple[dict | None, dict]) -> list[Edit]:
    """The includes' edits (and diagnostics): from the run's memo of `_fixed` (path -> its
    answer, filled as paths are met; None: none) where it has an answer, else the project's
    header renames first, then the header rules (their memo: path -> `_header_rule`), the
    project's memos looked up for the first include that needs them (one loop: a call per
    include cost the headers of a big project more than the memo saved)."""
    edits: list[Edit] = []
    project = ctx.project
    fixed, ruled = memo
    memos = directory = None
    asked = False
    for inc in includes:
        written = inc.path
        if fixed is not None:
            answer = fixed.get(written)
            if answer is None:
                answer = fixed[written] = _fixed(project, ruled, ctx.ruleset.headers, written)
            if answer is _NOTHING:
                continue
            if answer is not _ASK:
                edits.append(Edit(inc.start, inc.end, *answer))
                continue
        if not asked:  # the project's memos and the file's directory, once per file
            asked = True
            memos = (_memo_for(_WRITTEN, project), _memo_for(_RESOLVED, project)) if project.files else None
            directory = _dirname(ctx.path)
        if memos is not None:
            target = _target(project, memos, directory, written)
            if target is not None:
                new = project.header_renames.get(target)
                if new is not None:
                    new_path = _renamed_include(written, target, new)
                    edits.append(Edit(inc.start, inc.end, new_path, "include:project", "project", "header", False,
                                      "include"))
                continue
        rule = ruled.get(written, _UNKNOWN)  # `_header_rule`, its memo at hand
        if rule is _UNKNOWN:
            rule = ruled[written] = _header_rule(ctx.ruleset.headers, written)
        if rule is None:
            continue
        if rule.status == "unsupported":
            ctx.unconverted[inc.path] += 1
            ctx.warn(rule.diag or "MU1005", inc.start, inc.path, library=rule.library,
                     note=f": {rule.note}" if rule.note else "")
            continue
        if rule.replacement is None:
            continue
        if rule.cuda.endswith("/"):
            replacement = rule.replacement + inc.path[len(rule.cuda):]
        else:
            replacement = rule.replacement
        edits.append(Edit(inc.start, inc.end, replacement, "include:" + rule.cuda, rule.library, "header",
                          rule.inferred, "include"))
        if rule.diag:
            ctx.warn(rule.diag, inc.start, inc.path)
    return edits


_NOTHING = ()  # an include path that makes no edit and no diagnostic in any file
_ASK = ("ask",)  # one whose answer may depend on the including file, or that raises a diagnostic


def _run_memo(ruleset, project: ProjectInfo) -> tuple[dict, dict]:
    """The run's memos, held by the RuleSet (one look-up a file, where finding them by the
    project and the header table, and the table's size, was four calls): path -> `_fixed`'s
    answer for this project, and path -> `_header_rule`'s for the header table. Made again for
    another project or header table (two runs in two threads never share the first); a record
    added to the rules drops them with the rest of what passes derived from the records
    (`RuleSet.forget_derived`)."""
    if not project.files:
        project = _NO_FILES  # `_fixed` reads nothing else of it: every such project shares one memo
    headers = ruleset.headers
    held = getattr(ruleset, "_include_memo", None)
    if held is None or held[0] is not project or held[1] is not headers:
        ruled = held[3] if held is not None and held[1] is headers else {}
        held = ruleset._include_memo = (project, headers, {}, ruled)
    return held[2], held[3]


_NO_FILES = ProjectInfo()  # (a file migrated alone gets a new empty project each time)


def _fixed(project: ProjectInfo, ruled: dict, headers: dict, written: str) -> tuple:
    """What an include of `written` makes in any file, when that does not depend on the file:
    `_NOTHING`, or the edit's fields after its span; else `_ASK`. It does not when no project
    file can be the include's target: no project files, or a plain path that no project file's
    path ends with (`_target` then finds neither the file beside the includer, whose path would
    end with it, nor a suffix match: `build_project_info` indexes every file's every suffix, the
    whole path included, which a `SuffixIndex` does by construction and a table's size vouches
    for), and the header rule's answer (`ruled`: its memo) raises no diagnostic; nor when each
    project file it may name is renamed alike (`_project_answer`)."""
    if project.files:
        if not (_is_plain(written) and _indexes_every_file(project)):
            return _ASK
        candidates = project.suffix_index.get(written)
        if candidates is not None:
            return _project_answer(project, written, candidates)
    rule = ruled.get(written, _UNKNOWN)
    if rule is _UNKNOWN:
        rule = ruled[written] = _header_rule(headers, written)
    if rule is None:
        return _NOTHING
    if rule.status == "unsupported" or rule.diag:
        return _ASK
    if rule.replacement is None:
        return _NOTHING
    replacement = rule.replacement + written[len(rule.cuda):] if rule.cuda.endswith("/") else rule.replacement
    return replacement, "include:" + rule.cuda, rule.library, "header", rule.inferred, "include"


def _project_answer(project: ProjectInfo, written: str, candidates: tuple[str, ...]) -> tuple:
    """What an include of a plain `written` makes when project files end with it: its target
    is one of them, `candidates` (the file beside the includer, or the first), and no header
    rule is asked. When each is renamed to the same last component, or none is renamed (a
    tree's `cuda_check.cuh` in every directory), the answer is the same from any directory."""
    renames = project.header_renames
    new = renames.get(candidates[0])
    name = None if new is None else posixpath.basename(new)
    for other in candidates[1:]:
        new = renames.get(other)
        if (None if new is None else posixpath.basename(new)) != name:
            return _ASK
    if name is None:
        return _NOTHING
    return (_renamed_include(written, candidates[0], renames[candidates[0]]), "include:project", "project", "header",
            False, "include")


def _indexes_every_file(project: ProjectInfo) -> bool:
    """Whether `project.suffix_index` has every suffix of every file (a hand-made one may not)."""
    index = project.suffix_index
    return type(index) is SuffixIndex or len(index) >= len(project.files)


def _memo_for(memos: dict, owner: object, size: int = 0) -> dict:
    """The memo of `owner` (a project, a header table) in `memos`, kept by identity: each owner
    has its own dictionary (two runs in two threads never share one), a few owners at most."""
    entry = memos.get(id(owner))
    if entry is None or entry[0] is not owner or entry[1] != size:
        if len(memos) >= 4:
            memos.clear()
        entry = memos[id(owner)] = (owner, size, {})
    return entry[2]


def _dirname(path: str) -> str:
    """`posixpath.dirname(path)`, its steps written out (once per file with includes)."""
    head = path[:path.rfind("/") + 1]
    return head.rstrip("/") if head and head != "/" * len(head) else head


def _target(project: ProjectInfo, memos: tuple[dict, dict], directory: str, written: str) -> str | None:
    """`resolve_project_include` for a file in `directory`, with the run's memos (`run` holds
    them): for a plain path, what every directory shares (the suffix index's answer) is
    remembered by the path alone and only the file beside the includer is looked for (a tree of
    many directories met most (directory, path) pairs once, each a miss of a memo by the pair);
    any other path is resolved and remembered by the pair."""
    by_written, by_pair = memos
    entry = by_written.get(written)
    if entry is None:
        candidates = project.suffix_index.get(written) if _is_plain(written) else None
        entry = by_written[written] = (_is_plain(written), candidates[0] if candidates else None)
    if entry[0]:
        beside = f"{directory}/{written}" if directory else written
        return beside if beside in project.files else entry[1]
    key = (directory, written)
    target = by_pair.get(key, _UNKNOWN)
    if target is _UNKNOWN:
        target = by_pair[key] = _resolve(project, directory, written)
    return target


_UNKNOWN = object()  # not in a memo yet


def _header_rule(headers: dict[str, Rule], path: str) -> Rule | None:
    """The rule for an include path: its own, else a directory rule's. Asked once per path for a
    header table (most includes repeat, and most name no rule: `<cstdio>` was two look-ups in the
    lazily read table for each of its includes)."""
    rule = headers.get(path)
    return rule if rule is not None else _prefix_rule(headers, path)


def _prefix_rule(headers: dict[str, Rule], path: str) -> Rule | None:
    """Directory rules (`cutlass/` -> `mutlass/`): the longest matching prefix wins."""
    parts = path.split("/")
    for i in range(len(parts) - 1, 0, -1):
        rule = headers.get("/".join(parts[:i]) + "/")
        if rule is not None:
            return rule
    return None


def _renamed_include(written: str, target: str, new: str) -> str:
    """Keep the include as written and change only its last component's extension."""
    new_base = posixpath.basename(new)
    head = written.rsplit("/", 1)[0] + "/" if "/" in written else ""
    return head + new_base


_RESOLVED: dict = {}  # id(project) -> (the project, 0, (directory, written) -> answer)
_WRITTEN: dict = {}  # id(project) -> (the project, 0, plain written path -> (True, first suffix match or None))


def resolve_project_include(project: ProjectInfo, including: str, written: str) -> str | None:
    """The project file an include names: beside the including file first, then by path suffix.
    Answered once per (directory, include) for a project: a run asks for every include of every
    file, and the same few hundred pairs repeat."""
    if not project.files:
        return None
    key = (posixpath.dirname(including), written)
    memo = _memo_for(_RESOLVED, project)
    if key not in memo:
        memo[key] = _resolve(project, key[0], written)
    return memo[key]


def _resolve(project: ProjectInfo, directory: str, written: str) -> str | None:
    # `directory` is a listed file's (already normal); a plain `written` needs no normpath
    # (Python code in this interpreter: most of the cost of a first-time include)
    plain = _is_plain(written)
    beside = (f"{directory}/{written}" if directory else written) if plain else \
        posixpath.normpath(posixpath.join(directory, written))
    if beside in project.files:
        return beside
    candidates = project.suffix_index.get(written if plain else posixpath.normpath(written))
    if candidates:
        return candidates[0]
    return None


@lru_cache(maxsize=4096)
def _is_plain(path: str) -> bool:
    """Whether `path` is relative and already normal: no empty, `.` or `..` component (asked
    once per written path: the same few names are included from every directory)."""
    return bool(path) and path[0] != "/" and path[-1] != "/" and "//" not in path \
        and "/./" not in f"/{path}/" and "/../" not in f"/{path}/"


def build_project_info(relpaths: list[str], renames: dict[str, str]) -> ProjectInfo:
    """Index project files by every path suffix, so `<lib/x.cuh>` finds `include/lib/x.cuh`
    (a `SuffixIndex`: each suffix answered when asked, in the run's parallel part)."""
    return ProjectInfo(header_renames=dict(renames), files=frozenset(relpaths), suffix_index=SuffixIndex(relpaths))
