"""The fast reader of one-line rule records (musify/rules/flowfile.py) gives exactly what PyYAML
gives, or steps aside; a first run that compiles the rules for over a second says so."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from musify.rules import flowfile, loader
from musify.rules.files import default_rules_dir, rule_files

HEAD = "# a comment\nschema: musify-rules/1\nlibrary: cudart\nkind: function\nstatus: renamed\nrules:\n"


def pyyaml(text: str):
    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def test_every_shipped_rule_file_reads_as_pyyaml_reads_it():
    fast = 0
    for path in rule_files(default_rules_dir()):
        text = path.read_text(encoding="utf-8")
        got = flowfile.read(text)
        if got is None:
            assert "rules: []" in text or "rules:" not in text, f"{path}: left to PyYAML"
            continue
        fast += 1
        doc, lines = got
        assert doc == pyyaml(text), path
        assert len(lines) == len(doc["rules"])
        split = text.split("\n")
        assert all(split[n - 1].startswith("  - {") for n in lines)
    assert fast >= 40  # the generated tables, the bulk of the 4.6 MB, take the fast path


# tokens chosen for what PyYAML types or splits differently: booleans, nulls, numbers, dates,
# colons, comments, quotes and escapes, flow sequences, merge keys
TOKENS = ["cudaMalloc", "yes", "No", "ON", "off", "true", "False", "null", "NULL", "~", "1", "0x1F",
          "1.5", ".inf", "-1", "+x", "2001-12-14", "thrust::cuda", "a:b", "a: b", "a #b", "a#b",
          "cuda_runtime.h", "cub/util.cuh", "d3d-interop", "<<", "=", "'single'", "'it''s'",
          '"double"', '"esc\\"aped"', '"a, b"', "[shuffle, lane-mask]", "[a,b]", "[]", "[yes, 1]",
          "{x: y}", "&anchor", "*alias", "!tag x", "x ", ""]
KEYS = ["cuda", "musa", "note", "on", "null", "inferred", "hazard"]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(st.tuples(st.sampled_from(KEYS), st.sampled_from(TOKENS)), min_size=1, max_size=4),
                min_size=1, max_size=4),
       st.sampled_from(["", "  # a comment in the list\n", "\n", "vendor_prefixes: [cu]\n"]))
def test_generated_records_read_as_pyyaml_reads_them_or_are_left_to_it(records, extra):
    lines = ["  - {" + ", ".join(f"{k}: {v}" for k, v in rec) + "}" for rec in records]
    text = HEAD + lines[0] + "\n" + extra + "\n".join(lines[1:]) + "\n"
    try:
        expected = pyyaml(text)
    except yaml.YAMLError:
        expected = "error"
    try:
        got = flowfile.read(text)
    except yaml.YAMLError:  # the part left to PyYAML did not parse: neither may the whole
        got = ("error", [])
    if got is not None:
        assert got[0] == expected


def test_records_keep_their_line_numbers_in_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    rules = tmp_path / "rules" / "runtime"
    rules.mkdir(parents=True)
    (rules / "a.yaml").write_text(HEAD + "  - {cuda: cudaA, musa: musaA}\n  # headers\n\n"
                                  "  - {cuda: cudaB, musa: musaB, colour: red}\n")
    assert flowfile.read((rules / "a.yaml").read_text()) is not None  # the fast path reads it
    monkeypatch.setenv("MUSIFY_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(loader.RuleFileError, match=r"a\.yaml:10: cudaB: unknown key 'colour'|a\.yaml:10: unknown key"):
        loader.load_ruleset(tmp_path / "rules")


@pytest.mark.parametrize(("after", "says"), [(0.0, True), (60.0, False)])
def test_a_slow_first_build_says_what_it_is_doing(tmp_path, monkeypatch, capsys, after, says):
    rules = tmp_path / "rules" / "runtime"
    rules.mkdir(parents=True)
    (rules / "a.yaml").write_text(HEAD + "  - {cuda: cudaA, musa: musaA}\n")
    monkeypatch.setenv("MUSIFY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(loader, "ANNOUNCE_AFTER", after)
    monkeypatch.setattr(loader, "compile_rules", _slow(loader.compile_rules))
    ruleset = loader.load_ruleset(tmp_path / "rules")
    assert ruleset.lookup("cudaA").musa == "musaA"
    err = capsys.readouterr().err
    assert ("compiling the rule database (1 files)" in err) is says
    assert ("rule database compiled in" in err) is says
    capsys.readouterr()
    loader.load_ruleset(tmp_path / "rules")  # cached now: silent
    assert capsys.readouterr().err == ""


def _slow(compile_rules):
    def slow(*args, **kwargs):
        import time

        time.sleep(0.2)  # long enough for a zero-second timer to fire first
        return compile_rules(*args, **kwargs)

    return slow
