"""Properties that must hold for any input: only rule names change, comments and strings are kept,
migrating twice changes nothing, and the bytes round-trip (BOM, CRLF, undecodable bytes)."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from musify.frontend.scanner import Ctx, scan
from musify.options import Options
from musify.runner import migrate_text
from tests.conftest import small_ruleset

RULES = small_ruleset()
NAMES = sorted(RULES.names)
TOKENS = NAMES + [
    "int", "x", "Accumulate", "CUSTOM", "cudaFooBar", "my_cudaMalloc", " ", " ", "\n", "\r\n", "\t", "(", ")", ";",
    "{", "}", "//", "/*", "*/", '"', "'", "\\", "#", "#include <cuda_runtime.h>\n", "#define ", "#if ", "R\"(", ")\"",
    "<<<", ">>>", "1'000", "0xffffffff", "\ufeff", "é", "\udcff", "thrust::cuda", "::",
]
texts = st.lists(st.sampled_from(TOKENS), max_size=60).map("".join)
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def literal_texts(text):
    return [text[s:e] for s, e, c in scan(text, tuple(NAMES)).spans if c in (Ctx.COMMENT, Ctx.STRING, Ctx.CHAR)]


@SETTINGS
@given(texts)
def test_only_rule_names_change(text):
    new, _, edits = migrate_text(text, "p.cu", RULES, Options())
    pos = 0
    rebuilt = []
    for e in edits:
        original = text[e.start:e.end]
        assert original in RULES.names or original in RULES.headers or original == "cuda", original
        rebuilt.append(text[pos:e.start])
        rebuilt.append(e.replacement)
        pos = e.end
    rebuilt.append(text[pos:])
    assert "".join(rebuilt) == new
    # bytes outside the edits are the input's bytes, whatever they are
    assert new.encode("utf-8", "surrogateescape").count(b"\r\n") == text.encode("utf-8", "surrogateescape").count(b"\r\n")


@SETTINGS
@given(texts)
def test_migrating_twice_changes_nothing(text):
    once, _, _ = migrate_text(text, "p.cu", RULES, Options())
    twice, _, edits = migrate_text(once, "p.cu", RULES, Options())
    assert twice == once and edits == []


@SETTINGS
@given(texts)
def test_comments_and_strings_untouched(text):
    new, _, _ = migrate_text(text, "p.cu", RULES, Options())
    assert literal_texts(new) == literal_texts(text)


@SETTINGS
@given(st.binary(max_size=300))
def test_arbitrary_bytes_round_trip_outside_edits(data):
    text = data.decode("utf-8", "surrogateescape")
    new, _, edits = migrate_text(text, "p.cu", RULES, Options())
    if not edits:
        assert new.encode("utf-8", "surrogateescape") == data


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(texts, min_size=2, max_size=6))
def test_jobs_do_not_change_output_or_record(tmp_path_factory, contents):
    from musify.api import migrate

    root = tmp_path_factory.mktemp("jobs")
    for i, text in enumerate(contents):
        (root / f"f{i}.cu").write_bytes(text.encode("utf-8", "surrogateescape"))
    results = []
    for jobs in (1, 2):
        record, outputs = migrate([str(root)], Options(jobs=jobs), "none", ruleset=RULES, collect=True)
        d = record.to_json(deterministic=True)
        d.pop("options")
        results.append((outputs.texts, d))
    assert results[0] == results[1]


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="ab_Z9 :\t\n\u00e9\u00a0x", max_size=40), st.integers(0, 40), st.integers(1, 30))
def test_qualifier_lookback_equals_the_regex_it_replaces(text, pos, window):
    """`qualifier_before` reads `name ::` backwards; it must find what the regex search found."""
    import re

    from musify.passes.qualified import qualifier_before

    pos = min(pos, len(text))
    m = re.compile(r"([A-Za-z_]\w*)\s*::\s*$").search(text, max(0, pos - window), pos)
    assert qualifier_before(text, pos, window) == ((m.group(1), m.start(1)) if m else None)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="{}x/", min_size=1, max_size=60), st.lists(st.integers(0, 59), max_size=6), st.randoms())
def test_remembered_bracket_matching_equals_a_fresh_scan(text, comment_starts, rnd):
    """CodeMap.closing remembers pairs and unclosed openers across questions asked in any order;
    each answer must be what a fresh depth-counting scan from that opener gives."""
    import re

    from musify.frontend.scanner import CodeMap

    spans, last = [], -1
    for s in sorted(set(comment_starts)):
        if s > last and s < len(text):
            spans.append((s, min(len(text), s + 3), Ctx.COMMENT))
            last = spans[-1][1]
    cm = CodeMap(spans)
    pattern = re.compile(r"\{|\}")

    def fresh(i):
        depth, j = 0, i
        while (m := cm.search(pattern, text, j)) is not None:
            j = m.start()
            depth += 1 if text[j] == "{" else -1
            if depth == 0:
                return j
            j += 1
        return -1

    openers = [k for k, c in enumerate(text) if c == "{" and cm.is_code(k)]
    rnd.shuffle(openers)
    assert [cm.closing(pattern, text, k) for k in openers] == [fresh(k) for k in openers]
