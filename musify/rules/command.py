"""`musify rules docs|show|stats`: the rule database, asked from the command line.

All three read the same compiled RuleSet the engine migrates with and count with the shared
status predicates, so what `show` says about a name is what a migration does with it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from musify.rules.docs_tables import STATUS_ORDER, all_stats, stale_tables, write_tables
from musify.rules.loader import RuleFileError, default_rules_dir, load_ruleset
from musify.rules.model import HAZARDS, Rule, RuleSet, rule_key
from musify.rules.status import is_edit

_CONTEXT = {"help_option_names": ["-h", "--help"]}


def _load(extra: tuple[str, ...] = ()) -> RuleSet:
    try:
        return load_ruleset(extra=[Path(p) for p in extra])
    except RuleFileError as exc:
        click.echo(f"musify: error: {exc}", err=True)
        sys.exit(2)


@click.group("rules", context_settings=_CONTEXT)
def rules_cmd() -> None:
    """Inspect the rule database: coverage tables, one name's record, counts per library."""


@rules_cmd.command("docs", context_settings=_CONTEXT)
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default=None,
              help="Where the tables go (default: docs/coverage beside rules/).")
@click.option("--check", is_flag=True, help="Write nothing; exit 1 when the tables are stale.")
@click.option("--csv", "with_csv", is_flag=True, help="Also write a CSV twin of each library table.")
def docs_cmd(out_dir: str | None, check: bool, with_csv: bool) -> None:
    """Regenerate the coverage tables (one Markdown page per library, and the index)."""
    target = Path(out_dir) if out_dir else default_rules_dir().parent / "docs" / "coverage"
    ruleset = _load()
    if check:
        problems = stale_tables(target, ruleset)
        for p in problems:
            click.echo(f"{target}/{p}", err=True)
        sys.exit(1 if problems else 0)
    changed = write_tables(target, ruleset, with_csv)
    click.echo(f"{len(changed)} file(s) updated in {target}")


def find_records(ruleset: RuleSet, query: str) -> list[Rule]:
    """Records whose CUDA or MUSA spelling is `query`; for an include path (`<x/y.h>` or a path
    under a directory rule such as `cutlass/`) the header record that applies."""
    q = query.strip()
    if q[:1] in "<\"" and q[-1:] in ">\"":
        q = q[1:-1]
    if "::" in q:
        q = "::".join(part.strip() for part in q.split("::"))
    hits = [r for r in ruleset.all_rules() if q in (r.cuda, r.musa)]
    if not hits and "/" in q:
        parts = q.split("/")
        for i in range(len(parts) - 1, 0, -1):
            prefix = "/".join(parts[:i]) + "/"
            hits = [r for r in ruleset.headers.values() if prefix in (r.cuda, r.musa)]
            if hits:
                break
    return sorted(hits, key=lambda r: (r.cuda != q, r.cuda, r.kind))


def acting_passes(rule: Rule) -> list[str]:
    """Every pass that acts on a use of this name, and what it does: what `show` prints, so the
    listing agrees with what a run raises."""
    out = []
    diag = rule.diag or ("MU1002" if rule.status == "unsupported" and rule.kind != "header" else None)
    if rule.kind == "header":
        diag = rule.diag or ("MU1005" if rule.status == "unsupported" else None)
        out.append("includes: " + (f"rewrites the include to <{rule.musa}>" if is_edit(rule) else "keeps the include")
                   + (f", raises {diag}" if diag else ""))
    else:
        does = f"renames to {rule.musa}" if is_edit(rule) else "keeps the name"
        inferred = ", raises MU1004 at its first use in a file" if rule.inferred and is_edit(rule) else ""
        out.append(f"identifiers: {does}" + (f", raises {diag} at each use" if diag else "") + inferred)
    if is_edit(rule) and rule.kind != "header":
        out.append(f"self_defines: keeps a '#define' that renaming would turn into '#define {rule.musa} "
                   f"{rule.musa}' (MU2050)")
    if rule.status == "shim":
        out.append(f"shims: includes \"{rule.header}\" (with --no-shims: keeps the name, raises MU2061)")
    for tag in rule.hazard:
        pass_name, meaning = HAZARDS[tag]
        out.append(f"{pass_name}: {tag} ({meaning})")
    return out


def describe(rule: Rule, ruleset: RuleSet | None = None) -> str:
    arrow = f"{rule.cuda} -> {rule.musa}" if is_edit(rule) else rule.cuda
    fields = [
        ("kind", rule.kind), ("library", rule.library), ("status", rule.status),
        ("section", rule.section or "-"), ("diag", rule.diag or ("MU1002" if rule.status == "unsupported" else "-")),
        ("inferred", "yes" if rule.inferred else "no"), ("reverse", "yes" if rule.reverse else "no"),
    ]
    if rule.hazard:
        fields.append(("hazard", ", ".join(rule.hazard)))
    if rule.header:
        fields.append(("shim header", rule.header))
    lines = [arrow] + [f"  {k}: {v}" for k, v in fields]
    if rule.note:
        lines.append(f"  note: {rule.note}")
    lines.append(f"  origin: {rule.origin or '-'}")
    lines.append("  passes:")
    lines += [f"    {p}" for p in acting_passes(rule)]
    replaced = ruleset.overridden.get(rule_key(rule), []) if ruleset is not None else []
    if rule.overrides:
        lines.append(f"  overrides: {rule.overrides}")
    for old in replaced:
        was = f"{old.cuda} -> {old.musa}" if is_edit(old) else f"{old.cuda} ({old.status})"
        lines.append(f"  overridden: {was} at {old.origin}")
    return "\n".join(lines)


@rules_cmd.command("show", context_settings=_CONTEXT)
@click.argument("name")
@click.option("--rules", "rule_files", multiple=True, type=click.Path(exists=True, dir_okay=False),
              help="Also load this user table (as migrate does).")
def show_cmd(name: str, rule_files: tuple[str, ...]) -> None:
    """The record(s) for NAME: a CUDA name, a MUSA name or a header path."""
    ruleset = _load(rule_files)
    hits = find_records(ruleset, name)
    if not hits:
        click.echo(f"musify: no rule knows '{name}' (neither as a CUDA nor as a MUSA spelling)", err=True)
        sys.exit(1)
    click.echo("\n\n".join(describe(r, ruleset) for r in hits))


@rules_cmd.command("stats", context_settings=_CONTEXT)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def stats_cmd(as_json: bool) -> None:
    """Names per library and status, as in docs/coverage/README.md."""
    stats = all_stats(_load())
    if as_json:
        click.echo(json.dumps([{"library": s.library, "names": s.names, **s.by_status, "inferred": s.inferred,
                                "percent": round(s.percent, 1)} for s in stats], indent=2))
        return
    head = ["library", "names", *STATUS_ORDER, "inferred", "%"]
    rows = [[s.library, s.names, *(s.by_status[k] for k in STATUS_ORDER), s.inferred, f"{s.percent:.1f}"]
            for s in stats]
    total = [sum(s.names for s in stats), *(sum(s.by_status[k] for s in stats) for k in STATUS_ORDER),
             sum(s.inferred for s in stats)]
    converted = sum(s.converted for s in stats)
    rows.append(["total", *total, f"{100.0 * converted / total[0] if total[0] else 0.0:.1f}"])
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
    for row in [head, *rows]:
        click.echo("  ".join(str(x).ljust(w) if i == 0 else str(x).rjust(w) for i, (x, w) in enumerate(zip(row, widths))))
