"""The rule loader: bad records are rejected with `file:line`, an `overrides:` record wins, the compiled set
is cached by content hash (and the cache is dropped when a file changes), user tables load."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from musify.rules import loader
from musify.rules.loader import RuleFileError, load_ruleset

HEAD = "schema: musify-rules/1\nlibrary: cudart\nkind: function\nstatus: renamed\nrules:\n"


@pytest.fixture()
def rules_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path / "rules"
    (directory / "runtime").mkdir(parents=True)
    monkeypatch.setenv("MUSIFY_RULES_DIR", str(directory))
    monkeypatch.setenv("MUSIFY_CACHE_DIR", str(tmp_path / "cache"))
    return directory


def write(path: Path, records: str, head: str = HEAD) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(head + records, encoding="utf-8")
    return path


@pytest.mark.parametrize(("record", "message"), [
    ("{cuda: cudaFoo, musa: musaFoo, colour: red}", "unknown key 'colour'"),
    ("{cuda: cudaFoo, musa: musaFoo, status: moved}", "status 'moved'"),
    ("{cuda: cudaFoo, kind: gizmo, musa: musaFoo}", "kind 'gizmo'"),
    ("{cuda: cudaFoo}", "needs a 'musa' name"),
    ("{cuda: cudaFoo, musa: musaFoo, status: unchanged}", "cannot name a different 'musa'"),
    ("{cuda: cudaFoo, musa: musaFoo, status: unsupported}", "has no 'musa' name"),
    ("{cuda: cudaFoo, musa: musaFoo, status: shim}", "needs its 'header'"),
    ("{musa: musaFoo}", "'cuda' is required"),
    ("{cuda: cudaFoo, status: unsupported, diag: MU9999}", "diag 'MU9999' is not in the diagnostic catalogue"),
    ("just-a-string", "must be a mapping"),
])
def test_bad_record_is_reported_with_file_and_line(rules_dir: Path, record: str, message: str) -> None:
    write(rules_dir / "runtime" / "bad.yaml", f"  - {{cuda: cudaOk, musa: musaOk}}\n  - {record}\n")
    with pytest.raises(RuleFileError) as err:
        load_ruleset(use_cache=False)
    text = str(err.value)
    assert text.startswith("rules/runtime/bad.yaml:7:"), text
    assert message in text


def test_bad_file_header_is_reported(rules_dir: Path) -> None:
    write(rules_dir / "runtime" / "x.yaml", "  - {cuda: a, musa: b}\n", head="schema: other/2\nrules:\n")
    with pytest.raises(RuleFileError, match=r"x\.yaml:1: 'schema'"):
        load_ruleset(use_cache=False)
    write(rules_dir / "runtime" / "x.yaml", "  - {cuda: a, musa: [b\n")
    with pytest.raises(RuleFileError, match="not valid YAML"):
        load_ruleset(use_cache=False)


def test_the_overriding_record_wins(rules_dir: Path) -> None:
    write(rules_dir / "runtime" / "generated.yaml", "  - {cuda: cudaFoo, musa: musaFooOld}\n"
                                                    "  - {cuda: cudaBar, musa: musaBar}\n")
    write(rules_dir / "runtime" / "overrides.yaml", "  - {cuda: cudaFoo, musa: musaFooNew, overrides: \"the SDK spells it musaFooNew\", note: fixed}\n")
    ruleset = load_ruleset(use_cache=False)
    assert ruleset.lookup("cudaFoo").musa == "musaFooNew"
    assert ruleset.lookup("cudaFoo").origin == "rules/runtime/overrides.yaml:6"
    assert ruleset.lookup("cudaBar").musa == "musaBar"


def test_cache_is_used_then_invalidated_when_a_file_changes(rules_dir: Path, monkeypatch) -> None:
    path = write(rules_dir / "runtime" / "a.yaml", "  - {cuda: cudaFoo, musa: musaFoo}\n")
    first = load_ruleset()
    assert list((rules_dir.parent / "cache").rglob(f"ruleset-{first.digest}-*.rules"))

    def no_parsing(*args, **kwargs):
        raise AssertionError("the cached RuleSet should have been used")

    monkeypatch.setattr(loader, "parse_rule_file", no_parsing)
    second = load_ruleset()
    assert second.digest == first.digest and second.lookup("cudaFoo").musa == "musaFoo"
    monkeypatch.undo()
    monkeypatch.setenv("MUSIFY_RULES_DIR", str(rules_dir))
    monkeypatch.setenv("MUSIFY_CACHE_DIR", str(rules_dir.parent / "cache"))
    write(path, "  - {cuda: cudaFoo, musa: musaFooChanged}\n")
    third = load_ruleset()
    assert third.digest != first.digest
    assert third.lookup("cudaFoo").musa == "musaFooChanged"


def test_flat_json_user_table_loads_and_wins(rules_dir: Path, tmp_path: Path) -> None:
    write(rules_dir / "runtime" / "a.yaml", "  - {cuda: cudaFoo, musa: musaFoo}\n")
    table = tmp_path / "mine.json"
    table.write_text(json.dumps({"cudaFoo": "myFoo", "my_cuda.h": "my_musa.h"}), encoding="utf-8")
    ruleset = load_ruleset(extra=[table], use_cache=False)
    assert ruleset.lookup("cudaFoo").musa == "myFoo"
    assert ruleset.lookup("cudaFoo").library == "user"
    assert ruleset.headers["my_cuda.h"].musa == "my_musa.h"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"cudaFoo": 3}), encoding="utf-8")
    with pytest.raises(RuleFileError, match="bad.json:1:"):
        load_ruleset(extra=[bad], use_cache=False)


def test_missing_rule_database_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("MUSIFY_RULES_DIR", str(tmp_path / "nowhere"))
    with pytest.raises(RuleFileError, match="rule database is not there"):
        load_ruleset()


# --- one definition per name: duplicates need `overrides:` ------------------------------------

def _two_files(tmp_path, second: str):
    from musify.rules.loader import load_ruleset  # noqa: F401  (imported for the caller)

    d = tmp_path / "rules"
    (d / "a").mkdir(parents=True)
    (d / "b").mkdir()
    (d / "a" / "generated.yaml").write_text(
        "schema: musify-rules/1\nlibrary: cudart\nkind: function\nstatus: renamed\nrules:\n"
        "  - {cuda: cudaFoo, musa: musaFoo}\n  - {cuda: cudaBar, musa: musaBar}\n")
    (d / "b" / "overrides.yaml").write_text(
        "schema: musify-rules/1\nlibrary: cudart\nkind: function\nstatus: renamed\nrules:\n" + second)
    return d


def test_an_unmarked_duplicate_is_rejected_with_both_places(tmp_path):
    import pytest

    from musify.rules.loader import RuleFileError, load_ruleset

    d = _two_files(tmp_path, "  - {cuda: cudaFoo, musa: musaFooV2}\n")
    with pytest.raises(RuleFileError) as err:
        load_ruleset(d, use_cache=False)
    text = str(err.value)
    assert "cudaFoo is defined 2 times" in text
    assert "a/generated.yaml:6" in text and "b/overrides.yaml:6" in text and "overrides:" in text


def test_a_marked_override_wins_whatever_the_order_and_is_listed(tmp_path):
    from musify.rules.command import describe
    from musify.rules.loader import load_ruleset

    d = _two_files(tmp_path, '  - {cuda: cudaFoo, musa: musaFooV2, overrides: "the SDK spells it musaFooV2"}\n')
    (d / "b" / "overrides.yaml").rename(d / "0_first.yaml")  # sorts before a/: order must not matter
    rs = load_ruleset(d, use_cache=False)
    assert rs.lookup("cudaFoo").musa == "musaFooV2"
    shown = describe(rs.lookup("cudaFoo"), rs)
    assert "overrides: the SDK spells it musaFooV2" in shown
    assert "overridden: cudaFoo -> musaFoo at rules/a/generated.yaml:6" in shown


def test_overrides_needs_a_reason_and_something_to_override(tmp_path):
    import pytest

    from musify.rules.loader import RuleFileError, load_ruleset

    d = _two_files(tmp_path, "  - {cuda: cudaFoo, musa: musaFooV2, overrides: yes}\n")
    with pytest.raises(RuleFileError, match="needs a reason"):
        load_ruleset(d, use_cache=False)
    d2 = _two_files(tmp_path / "x", '  - {cuda: cudaNew, musa: musaNew, overrides: "nothing to replace here"}\n')
    with pytest.raises(RuleFileError, match="no other rule file defines"):
        load_ruleset(d2, use_cache=False)


def test_the_built_in_rules_define_each_name_once_or_say_why():
    from musify.rules import load_ruleset

    rs = load_ruleset()
    assert rs.overridden, "the hand-written overrides are listed"
    for key, replaced in rs.overridden.items():
        winner = rs.find(replaced[0])
        assert winner is not None and winner.overrides and len(winner.overrides.split()) >= 3, key


def test_hazard_tags_are_validated(tmp_path):
    import pytest

    from musify.rules.loader import RuleFileError, load_ruleset

    d = _two_files(tmp_path, "  - {cuda: cudaBaz, musa: musaBaz, hazard: shufle}\n")
    with pytest.raises(RuleFileError, match="hazard 'shufle' is not one of"):
        load_ruleset(d, use_cache=False)
