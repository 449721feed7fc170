"""Rename CUDA identifiers by the rules; report unsupported, inferred and unrecognised names.

Context decides what is touched: code, preprocessor conditions, macro bodies and the names of
`#define`s are migrated (inactive `#if` branches too, since the scanner does not evaluate them);
comments and string literals only on request.
"""

from __future__ import annotations

import re
from array import array
from functools import lru_cache
from operator import itemgetter

from musify.engine.edits import Edit, EditList
from musify.frontend.scanner import Ctx, Ident, IdentList, identifiers_in, native
from musify.passes._base import PassContext
from musify.passes.macro_pastes import ends_an_argument
from musify.passes.qualified import qualified_renames, qualified_rule, qualified_use
from musify.passes.unknown_names import (  # noqa: F401 -- the rest re-exported (moved to unknown_names.py)
    DECLARED,
    MEMBER,
    UNDECIDED,
    USE,
    _declares,
    _enumerator,
    _in_nested_namespace_head,
    _namespace_near,
    _opens_a_list_item,
    _unknown,
    is_declaration,
    previous_token,
    previous_token_python,
    unknown_use,
    unknown_use_python,
)
from musify.rules.derived import fill, filled_for
from musify.rules.model import Rule, RuleSet

_MIGRATED = frozenset({Ctx.CODE, Ctx.DIRECTIVE, Ctx.MACRO, Ctx.MACRO_NAME})
_MIGRATED_MASK = sum(1 << c for c in _MIGRATED)
# contexts where an unrecognised name is decided with the renames: a `#define`d name is a
# declaration; elsewhere the tokens around it decide
_DECLARING_MASK = 1 << Ctx.MACRO_NAME
_DECIDED_MASK = sum(1 << c for c in _MIGRATED - {Ctx.MACRO_NAME})

_COMPILED = native()  # the compiled scanner module (its `renames`), or None: the Python loop

# what a kind of record is called in a message ("call of 'cudaBindTexture'")
_WHAT = {"function": "call of"}


@lru_cache(maxsize=8)
def vendor_name(pattern: str) -> re.Pattern[str] | None:
    """What "looks like a CUDA vendor name" for MU1001: the rules' `vendor_prefixes`."""
    return re.compile(f"(?:{pattern})") if pattern else None


def run(ctx: PassContext) -> list[Edit]:
    """The pass: `run_all`, or nothing at once on a file without candidate identifiers (most
    small files; the comments and strings are looked at only on request)."""
    if not ctx.scan.idents._a and not (ctx.options.rewrite_comments or ctx.options.rewrite_strings):
        return []  # what `run_all` gives such a file: no edit, no finding (tests/test_per_file_shortcuts.py)
    return run_all(ctx)


def run_all(ctx: PassContext) -> EditList:
    """Every step of the pass, whatever the file holds (the reference for `run`'s shortcut). The
    plain renames (most identifiers) are one loop, compiled where available; the rest, which the
    loop hands back (`_decide`), are looked at here. The calls a file makes whatever it holds are
    few: the compiled loop called directly, the rows read as they are (tens of thousands of
    files each made a dozen more Python calls)."""
    ruleset = ctx.ruleset
    text = ctx.text
    idents = ctx.scan.idents
    names = idents._names.values  # (`IdentList.names`, without the property's call)
    fast, skip, unknown, first, qualified, filled = getattr(ruleset, "_ident_tables", None) or _tables(ruleset)
    if filled is not None and not filled.issuperset(names):  # (`fast_renames`, its tables from `_tables`)
        fill(ruleset, "_fast_renames", names)
    found = ctx.found
    # most uses of a name already known to be unrecognised are decided with the renames (`uses`)
    if _COMPILED is not None:  # `renames` with every argument, its loop called directly
        data, itemsize, fields, rest, uses = _COMPILED.renames(idents._a, names, fast, skip, _MIGRATED_MASK, text,
                                                               unknown, _DECIDED_MASK, found.declared,
                                                               _DECLARING_MASK, first, qualified)
        edits = EditList(array(_TYPECODE[itemsize], data), fields)
    else:
        edits, rest, uses = renames_python(idents, fast, skip, text, unknown, found.declared, first, qualified)
    pending = found.pending_unknown
    before = len(pending)
    if rest:
        _decide(ctx, rest, edits, skip, unknown, first)
    # (a use that is a call's whole argument is never among `uses`: `_unknown` looks at it, as a
    # macro of the run may paste it, or an `#if` pass it to one)
    if uses:  # added to the pending list, which stays in text order (as when each use went through `_unknown`)
        positioned = ctx.lines.named_positions(uses)
        if len(pending) == before:
            pending.extend(positioned)
        else:  # entries the loop over the rest added: merged by place
            pending[before:] = sorted([*pending[before:], *positioned], key=_PLACE)
    if ctx.options.rewrite_comments or ctx.options.rewrite_strings:
        edits.extend(_rewrite_inside_literals(ctx))
    return edits


def _decide(ctx: PassContext, rest: list[Ident], edits: EditList, skip: set[str], unknown: set[str],
            first: dict[str, tuple]) -> None:
    """What the rename loop left to Python: qualified names, rules with diagnostics or tags,
    inferred names' first use, unrecognised names it could not decide, names not met before."""
    names = ctx.ruleset.names
    qualified = ctx.ruleset.qualified
    text = ctx.text
    inferred_seen: set[str] = set()
    vendor = vendor_name(ctx.ruleset.vendor_pattern)
    text_position = ctx.lines.position
    for ident in rest:
        name = ident.name
        if name in unknown:  # decided at its first use in the run: only this use's place is new
            _unknown(ctx, ident.start, name, ident.ctx, text_position)
            continue
        if name in skip and name not in qualified:
            continue  # met before in this file: no rule, not vendor-looking (what the steps below find again)
        rule = names.get(name)
        if name in qualified:
            rule = qualified_rule(text, ident.start, qualified[name]) or rule
        elif rule is not None and rule.inferred and name not in first:
            _remember_inferred(first, name, rule)
        if rule is not None and rule.hazard and "template-only" in rule.hazard \
                and not _template_use(text, ident.end):
            continue  # `surface` the variable, not `surface<...>` the template
        if rule is None:
            if vendor is None or not vendor.match(name):
                if name not in qualified:  # (a qualified rule may match its next use: looked at each time)
                    skip.add(name)  # no rule, not vendor-looking: nothing to do, here or in any file
                continue
            if name not in qualified:
                unknown.add(name)  # no rule, vendor-looking, no qualified rule: the same in any file
            _unknown(ctx, ident.start, name, ident.ctx, text_position)
            continue
        if rule.status == "unsupported" and ident.ctx is Ctx.MACRO_NAME:
            # `#define STD_CUDA_CHECK(...)`: the project defines the name itself (what a MUSA port
            # is told to do), so no use of it in the run is reported (`finalise`)
            ctx.found.declared.add(name)
            continue
        _use_rule(ctx, rule, ident.start, ident.end, edits, inferred_seen)


_PLACE = itemgetter(1, 2)  # a pending entry's (line, column)


def _tables(ruleset: RuleSet) -> tuple:
    """The tables `run_all` hands the rename loop, cached on the RuleSet as one tuple (one look-up
    a file, not a call each): `fast_renames`' two (filled in place while partial), the run's
    unrecognised names and inferred renames (`_unknown_names`, `_inferred_renames`) and the
    qualified renames (`qualified.qualified_renames`); and the names the first two have been
    filled for while partial (`derived.filled_for`: `fill` is called for a file with others)."""
    tables = ruleset._ident_tables = (*_fast_tables(ruleset), _unknown_names(ruleset),  # type: ignore[attr-defined]
                                      _inferred_renames(ruleset),
                                      qualified_renames(ruleset, vendor_name(ruleset.vendor_pattern)),
                                      filled_for(ruleset, "_fast_renames"))
    return tables


def fast_renames(ruleset: RuleSet, names: list[str] | None = None) -> tuple[dict[str, tuple], set[str]]:
    """What the hot loop decides without Python: names whose every use is the same plain edit (no
    qualifier to check, no template-only tag, no diagnostic, not inferred), as name -> the Edit's
    fields after its span (so the compiled loop knows no field names); and names the pass does
    nothing with (kept by MUSA without a diagnostic; the run adds names that no rule knows and
    that do not look like vendor names as it meets them). Cached on the RuleSet; one read from
    the compiled rules is complete for `names` (a file's identifiers; None: every name) at least
    (`musify.rules.derived.fill`)."""
    fill(ruleset, "_fast_renames", names)
    return _fast_tables(ruleset)


def _fast_tables(ruleset: RuleSet) -> tuple[dict[str, tuple], set[str]]:
    """`fast_renames`' tables as they are (made whole here when the rules were not compiled)."""
    cached = getattr(ruleset, "_fast_renames", None)
    if cached is None:
        cached = ruleset._fast_renames = _fast_renames(ruleset)  # type: ignore[attr-defined]
    return cached


def plainly_renamed(ruleset: RuleSet) -> dict[str, tuple]:
    """The names `fast_renames` has found so far to be plain renames (its first table, as filled
    for the files migrated until now; empty before the first): each is renamed or shimmed by a
    rule, so the record counts its edits as converted without making the Rule."""
    cached = getattr(ruleset, "_fast_renames", None)
    return cached[0] if cached is not None else {}


def _fast_renames(ruleset: RuleSet) -> tuple[dict[str, tuple], set[str]]:
    """`fast_renames`' two tables, made in one loop over the rules with `Rule.replacement` and
    the `Edit` fields written out (the loop was a third of the pass on a process's first files:
    33,000 rules, a property call and an `Edit` each); `fast_renames_reference` is what it must
    equal (tests/test_identifiers_fast.py)."""
    fast: dict[str, tuple] = {}
    skip: set[str] = set()
    qualified = ruleset.qualified
    for name, rule in ruleset.names.items():
        if rule.diag or name in qualified or rule.hazard and "template-only" in rule.hazard:
            continue  # each use needs a look at its surroundings or a diagnostic: the Python loop
        status, musa = rule.status, rule.musa
        if status == "unsupported":
            continue
        if not ((status == "renamed" or status == "shim") and musa and musa != rule.cuda):
            skip.add(name)  # `Rule.replacement` is None: the name is kept
        elif not rule.inferred:
            cuda = rule.cuda
            # every field after the span, defaults included (category "reference"), as _use_rule makes them
            fast[name] = (musa.rsplit("::", 1)[-1] if "::" in cuda else musa, cuda, rule.library, rule.kind,
                          False, "reference")
    return fast, skip


def fast_renames_reference(ruleset: RuleSet) -> tuple[dict[str, tuple], set[str]]:
    """The tables as `_use_rule` would make each edit, rule by rule: what `_fast_renames` must equal."""
    fast: dict[str, tuple] = {}
    skip: set[str] = set()
    qualified = ruleset.qualified
    for name, rule in ruleset.names.items():
        if name in qualified or rule.status == "unsupported" or rule.diag or "template-only" in rule.hazard:
            continue
        replacement = rule.replacement
        if replacement is None:
            skip.add(name)
        elif not rule.inferred:
            last = replacement.rsplit("::", 1)[-1] if "::" in rule.cuda else replacement
            fast[name] = Edit(0, 0, last, rule.cuda, rule.library, rule.kind, rule.inferred)[2:]
    return fast, skip


def _unknown_names(ruleset: RuleSet) -> set[str]:
    """Names no rule knows (plain or qualified) that look like a vendor's, as the run meets them
    (cached on the RuleSet, like `fast_renames`' skip set): each later use goes straight to
    `_unknown`, without the rule look-ups and the vendor-name match."""
    found = getattr(ruleset, "_unknown_names", None)
    if found is None:
        found = ruleset._unknown_names = set()  # type: ignore[attr-defined]
    return found


def _inferred_renames(ruleset: RuleSet) -> dict[str, tuple]:
    """The inferred plain renames the run has met (name -> its edit's fields after the span, as
    `_use_rule` makes them), cached on the RuleSet like `_unknown_names`: `renames` leaves only
    the first use of each in a file to the loop of `run_all` (it raises MU1004 once per file) and
    renames the others itself (on the CUDA headers, 5,600 uses that each went through `_use_rule`)."""
    found = getattr(ruleset, "_inferred_renames", None)
    if found is None:
        found = ruleset._inferred_renames = {}  # type: ignore[attr-defined]
    return found


def _remember_inferred(first: dict[str, tuple], name: str, rule: Rule) -> None:
    """Add `name` to `first` when each use of it is what `_use_rule` makes of an inferred rule
    without a diagnostic of its own: an edit, and MU1004 at the first use in a file (no
    qualifier, unsupported status or template-only tag to look at each use)."""
    if rule.diag or rule.status == "unsupported" or (rule.hazard and "template-only" in rule.hazard):
        return
    replacement = rule.replacement
    if replacement is not None:
        last = replacement.rsplit("::", 1)[-1] if "::" in rule.cuda else replacement
        first[name] = (last, rule.cuda, rule.library, rule.kind, rule.inferred, "reference")


def renames(idents: IdentList, fast: dict, skip: set[str], compiled=None, text: str = "",
            unknown: set[str] | None = None, declared: set[str] | None = None,
            first: dict[str, tuple] | None = None,
            qualified: dict[str, tuple] | None = None) -> tuple[EditList, list[Ident], list[tuple[int, str]]]:
    """Plain renames as edits (the compiled loop when `compiled` is the `_cscan` module), nothing
    for the names in `skip`; for names in `unknown` (no rule, vendor-looking), what `_unknown`
    decides where the tokens around a use in `text` are enough (the name added to `declared`, a
    set, for a declaration; nothing for a member access; (offset, name) in the third list for a
    use to report); for names in `first` (like `fast`), the first use left to the caller and the
    others renamed; for names in `qualified` (`qualified.qualified_renames`), each use decided by
    the qualifiers before it (`qualified.qualified_use`: an edit, nothing, or a name in `unknown`);
    the other migrated identifiers (in order) for the caller. A file that calls its own
    `CUDA_CHECK` on every line made one Python call per use."""
    if compiled is None:
        return renames_python(idents, fast, skip, text, unknown, declared, first, qualified)
    rows, names = idents._a, idents._names.values  # (`IdentList.data` and `names`, without the properties' calls)
    if unknown is None:
        data, itemsize, fields, rest, uses = compiled.renames(rows, names, fast, skip, _MIGRATED_MASK)
    else:  # the optional tables given up to the last one there is (no `first`: an empty one)
        tables = (first or {}, qualified) if qualified is not None else (first,) if first is not None else ()
        data, itemsize, fields, rest, uses = compiled.renames(rows, names, fast, skip, _MIGRATED_MASK,
                                                              text, unknown, _DECIDED_MASK, declared,
                                                              _DECLARING_MASK, *tables)
    return EditList(array(_TYPECODE[itemsize], data), fields), rest, uses


_TYPECODE = {4: "i", 8: "q"}  # the compiled loop's rows: the array type of their item size
_QUALIFIED = object()  # `renames_python`'s decision for a name of the qualified-renames table


def renames_python(idents: IdentList, fast: dict, skip: set[str], text: str = "", unknown: set[str] | None = None,
                   declared: set[str] | None = None, first: dict[str, tuple] | None = None,
                   qualified: dict[str, tuple] | None = None) -> tuple[EditList, list[Ident], list[tuple[int, str]]]:
    """The pure-Python `_cscan.renames`: the same edits, rest, uses and names declared."""
    edits = EditList()
    rest: list[Ident] = []
    uses: list[tuple[int, str]] = []
    # name -> its fields, True (skip), False (unrecognised), None (rest) or _QUALIFIED (each use)
    decision: dict[str, object] = {}
    for ident in idents:
        if ident.ctx not in _MIGRATED:
            continue
        name = ident.name
        if name not in decision:
            fields = fast.get(name)
            if fields is None and first is not None and (fields := first.get(name)) is not None:
                decision[name] = fields
                rest.append(ident)  # its first use: the caller's (it raises a diagnostic)
                continue
            decision[name] = fields if fields is not None else (
                _QUALIFIED if qualified is not None and name in qualified else
                True if name in skip else False if unknown is not None and name in unknown else None)
        fields = decision[name]
        if fields is _QUALIFIED:  # the qualifiers before this use decide: an edit, nothing or unrecognised
            fields = qualified_use(text, ident.start, qualified[name])
            fields = True if fields is None else False if fields is True else fields
        if fields is False and ident.ctx is Ctx.MACRO_NAME:
            declared.add(name)
        elif fields is False:
            use = unknown_use_python(text, ident.start)
            if use == UNDECIDED and _opens_a_list_item(text, ident.start, ident.end):
                use = USE
            if use == DECLARED:
                declared.add(name)
                continue
            if use == MEMBER:
                continue
            if use == USE and not _namespace_near(text, ident.start) and not ends_an_argument(text, ident.end):
                uses.append((ident.start, name))
                continue
            rest.append(ident)
        elif fields is None:
            rest.append(ident)
        elif fields is not True:
            edits.append(Edit(ident.start, ident.end, *fields))
    return edits, rest, uses


def _use_rule(ctx: PassContext, rule: Rule, start: int, end: int, edits: EditList,
              inferred_seen: set[str]) -> None:
    if rule.status == "unsupported":
        ctx.unconverted[rule.cuda] += 1
        ctx.warn(rule.diag or "MU1002", start, rule.cuda, library=rule.library,
                 note=f": {rule.note}" if rule.note else "", what=_WHAT.get(rule.kind, "use of"),
                 origin=f"rule:{rule.cuda}")
        return
    replacement = rule.replacement
    if replacement is None:
        if rule.diag:
            ctx.warn(rule.diag, start, rule.cuda, what=_WHAT.get(rule.kind, "use of"), origin=f"rule:{rule.cuda}")
        return
    last = replacement.rsplit("::", 1)[-1] if "::" in rule.cuda else replacement
    # `edits.append(Edit(start, end, last, ...))` without the Edit: its fields after the span
    # (category "reference", the default), in the list's table (thousands of uses on the headers)
    edits._push(start, end, edits._fields.ref((last, rule.cuda, rule.library, rule.kind, rule.inferred, "reference")))
    if rule.diag:
        ctx.warn(rule.diag, start, rule.cuda, what=_WHAT.get(rule.kind, "use of"), origin=f"rule:{rule.cuda}")
    if rule.inferred and rule.cuda not in inferred_seen:
        inferred_seen.add(rule.cuda)
        ctx.warn("MU1004", start, rule.cuda, musa=replacement)


def _template_use(text: str, end: int) -> bool:
    """The name ending at `end` is followed by `<` (template arguments)."""
    j = end
    while j < len(text) and text[j] in " \t":
        j += 1
    return j < len(text) and text[j] == "<"


def _rewrite_inside_literals(ctx: PassContext) -> list[Edit]:
    wanted = set()
    if ctx.options.rewrite_comments:
        wanted.add(Ctx.COMMENT)
    if ctx.options.rewrite_strings:
        wanted.update((Ctx.STRING, Ctx.CHAR))
    names = ctx.ruleset.names
    edits = []
    for s, e, where in ctx.scan.spans:
        if where not in wanted:
            continue
        for start, end, name in identifiers_in(ctx.text, s, e):
            rule = names.get(name)
            if rule is not None and rule.replacement is not None:
                edits.append(Edit(start, end, rule.replacement, rule.cuda, rule.library, rule.kind,
                                  rule.inferred))
    return edits
