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

if TYPE_CHECKING:
    from musify.rules.model import Rule


def run(ctx: PassContext) -> list[Edit]:
    includes = ctx.scan.includes
    if not includes:
        return []
    edits = []
    headers = ctx.ruleset.headers
    project = ctx.project
    # the memos and the file's directory looked up once per file, not once per include
    memos = (_memo_for(_WRITTEN, project), _memo_for(_RESOLVED, project)) if project.files else None
    ruled = _memo_for(_RULE_MEMOS, headers, len(headers))
    directory = _dirname(ctx.path)
    for inc in includes:
        written = inc.path
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
            rule = ruled[written] = _header_rule(headers, written)
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
_RULE_MEMOS: dict = {}  # id(header table) -> (the table, its size, path -> rule or None)


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
    """Index project files by every path suffix, so `<lib/x.cuh>` finds `include/lib/x.cuh`."""
    index: dict[str, list[str]] = {}
    for rel in sorted(relpaths):
        # each suffix after a "/" (what joining the split parts from each one gives), cut from
        # the path itself: the run's serial part makes these for every file
        at = 0
        while True:
            suffix = rel[at:]
            got = index.get(suffix)
            if got is None:
                index[suffix] = [rel]
            else:
                got.append(rel)
            at = rel.find("/", at) + 1
            if not at:
                break
    return ProjectInfo(
        header_renames=dict(renames),
        files=frozenset(relpaths),
        suffix_index={k: tuple(v) for k, v in index.items()},
    )
