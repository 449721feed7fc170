"""The warp-size pass's fast paths give the answers of the slower ones they replaced.

`warp_tree.collect` (a cursor walk, nodes told by symbol number) against `collect_by_type` and a tree-sitter query for the same node kinds (the
same nodes; the query's order is its own, and `_thread_variables` is checked against the old
rounds over the declarations in that order),
`Function.calls` (calls found where the names occur) against a walk of every node, the text
slices against `node.text` decoded, `_thread_named` against the `_THREAD_NAME` regex, and
`_may_flag_binary` (the binary expressions skipped) against `_check_binary` run on them all, and
the checks on the sites found where their names and numbers occur (`_found_sites`) against the
checks on every node of the walk.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from musify.frontend import syntax
from musify.passes.hazards import warp_precheck, warp_size, warp_tree
from musify.rules import load_ruleset

REPO = Path(__file__).resolve().parents[1]
_NAMES = warp_size._names_of(load_ruleset())
_QUERY = " ".join(f"({kind}) @{kind}" for kind in warp_tree.KINDS)
PIECES = ["int lane = threadIdx.x & 31;", "x = a < 32 ? b : c;", "if (warpSize == 32) s = 2;", "s = v >> 5;",
          "for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffff, s, o);", "m = f(g(x), __ballot(p));",
          "unsigned m = __ballot_sync(~0u, p);", "c = __popc(m);", "if (m == 0xFFFFFFFF) s = 3;", "s = (x, m);",
          "__shfl(__shfl, 1);", "(__shfl_xor)(v, 16);", "obj.__shfl_sync(0, v, 1);", "auto l = [&](int a) { return a % 32; };",
          "t = x / 0x20 + y % 0x1F - 0xffffffffu;", "x = ~0 != m;", "/* __shfl_sync(0, v, 0, 32) */", "\"__ballot\";",
          "s += 10;", "int q{tid / 32};", "y = (tid) & (31);", "#if 1\n", "#endif\n", "{", "}", "(", ")", ";", "é",
          "g(h(__activemask()));", "int a = b + 1;", "int b = c;", "int c = d * 2;", "int d = e;", "int e = tid;",
          "int f = [&] { int g = a; return g; }();", "int h = f;", "x = __shfl_down(v, 16, 32) + __shfl(v, 0, 32);",
          "unsigned full_mask = (~0u);", "if (m != (0xffffffff)) s = 1;", "int k = tid % 032;", "s = ~ /* c */ 0 == m;",
          "x = 1.5 + 32.0f + 0x20 + 4294967295;", "for (int o = 1; o < 0x20; o <<= 1) v += __shfl_xor(v, o);",
          "format(32); forx = 5;", "int w = n / 32;", "x = (0X1F) & lane;", "__syncwarp(~0);", "k = tid >> 05;",
          "/* 31 32 5 0xffffffff ~0 */", "m = ~(0);", "if ((m) != (0xFFFFFFFF)) s = 2;", "k = tid % 040;",
          "int r = tid & (32 - 1);", "r = lane & ((0x20) - 1);", "r = tid <= 32 - 1;", "r = tid & (32 - l);",
          "for (int o = 0x10; o; o /= 2) v += __shfl_down(v, o);", "__shfl_down_syncx(v, 16);", "a32 = b32 * 1.5 * 32.;",
          "x = y->__shfl(v, 1);"]


def _functions() -> list[str]:
    """Device functions from the bundled programs."""
    out = []
    for path in sorted((REPO / "corpora").rglob("*.cu*")):
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
        at = text.find("__global__")
        while at >= 0:
            close = text.find("\n}", at)
            out.append(text[at:close + 2 if close >= 0 else len(text)])
            at = text.find("__global__", at + 1)
    return out


def _spans(nodes) -> list[tuple[str, int, int]]:
    return [(n.type, n.start_byte, n.end_byte) for n in nodes]


def _same_collection(snippet: str) -> None:
    tree = warp_tree.Function(snippet)
    walked = warp_tree.collect(tree.root)
    queried = syntax.captures(tree.root, _QUERY)
    by_type = warp_tree.collect_by_type(tree.root)  # the walk told by type names: the same lists
    assert all(walked[kind] == by_type[kind] for kind in warp_tree.KINDS), snippet
    for kind in warp_tree.KINDS:
        assert _spans(walked[kind]) == sorted(_spans(queried.get(kind, [])), key=lambda s: (s[1], -s[2])), \
            (kind, snippet)
    inits = [warp_size._init_of(node, tree, _NAMES) for node in walked["init_declarator"]]
    seeds = {tree.text(n.child_by_field_name("declarator")) for n in walked["parameter_declaration"]
             if n.child_by_field_name("declarator") is not None
             and warp_size._THREAD_NAME.fullmatch(tree.text(n.child_by_field_name("declarator")))}
    expected = _thread_variables_reference(warp_size._declared_integers(inits, _NAMES), seeds)
    assert warp_size._thread_variables(inits, walked["parameter_declaration"], _NAMES, tree) == expected, snippet
    shuffled = inits[1::2] + inits[0::2]  # the declarations in another order: the same answer
    assert warp_size._thread_variables(shuffled, walked["parameter_declaration"], _NAMES, tree) == expected, snippet
    for node in warp_tree.walk(tree.root):
        assert tree.text(node) == node.text.decode("utf-8", "surrogateescape")
        for wanted in (_NAMES.shuffle, _NAMES.mask_result, _NAMES.popcount, frozenset({"f", "g"})):
            assert tree.calls(node, wanted) == tree.calls_walked(node, wanted), (node, snippet)
        for value in (16, 32, 0):
            assert tree.holds_literal(node, value) == tree.holds_literal_walked(node, value), (node, value, snippet)
    if tree.ascii:
        values = frozenset({31, 32, 5, 16, warp_tree.FULL_MASK})
        walked = {(tree.text(n), n.start_byte) for n in warp_tree.walk(tree.root)
                  if n.type == "number_literal" and warp_size.int_value(tree.text(n)) in values}
        assert {(tree.text(n), n.start_byte) for _, n in tree.literals(values)} == walked, snippet
    _same_reports(tree)


def _thread_variables_reference(decls: list[tuple[str, str, bool]], seeds: set[str]) -> set[str]:
    """Rounds over the declarations, in document order, each name tested with the whole-word
    search (`_mentions`), until a round adds nothing."""
    derived = set(seeds)
    while True:
        added = False
        for name, value, from_index in decls:
            if name not in derived and (from_index or warp_size._mentions(value, derived)):
                derived.add(name)
                added = True
        if not added:
            return derived


def _same_reports(tree: warp_tree.Function) -> None:
    """The checks on the sites found where their names and numbers occur report what they report
    on every node the walk gives (the reference, and the path of text beyond ASCII)."""
    found: list = []
    walked: list = []
    warp_size._run_checks(tree, _NAMES, lambda node, diag, **args: found.append((node.start_byte, diag, args)))
    warp_size._run_checks(tree, _NAMES, lambda node, diag, **args: walked.append((node.start_byte, diag, args)),
                          walked=True)
    assert found == walked, tree.snippet


def test_collection_and_calls_on_the_corpora() -> None:
    functions = _functions()
    assert len(functions) > 20
    for snippet in functions:
        _same_collection(snippet)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(PIECES), max_size=10).map("".join))
@example("__shfl(__shfl, 1); (__shfl_xor)(v, 16);")
@example("int a = b + 1;int b = c;int c = d * 2;int d = e;int e = tid;int q = a & 31;")  # five links, reversed
@example("int e = tid;int d = e;int c = d * 2;int b = c;int a = b + 1;")  # in order
@example("int f = a;int a = b + 1;int b = c;int c = d * 2;int d = e;int e = tid;int q = f & 31;")  # six links
def test_collection_and_calls_on_fragments(body: str) -> None:
    _same_collection("__global__ void k(int tid, unsigned m) {" + body + "}")


@given(st.text(alphabet=st.sampled_from(list("tidxlanehrwpoc_TIDXLANE 3.")), max_size=20))
@example("ltid")
@example("WARP_ID")
@example("my_Lane")
def test_thread_names_as_substrings(text: str) -> None:
    assert warp_precheck.thread_named(text.lower()) == (warp_size._THREAD_NAME.search(text) is not None)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(PIECES), max_size=8).map("".join))
def test_binaries_skipped_report_nothing(body: str) -> None:
    """A binary expression `_may_flag_binary` turns away gets no report from `_check_binary`."""
    tree = warp_tree.Function("__global__ void k(int tid, unsigned m) {" + body + "}")
    reports = []
    for node in warp_tree.collect(tree.root)["binary_expression"]:
        if not warp_size._may_flag_binary(node, tree) and node.child_by_field_name("operator") is not None:
            warp_size._check_binary(node, _NAMES, {"tid", "lane", "l"}, {"m"},
                                    lambda *args, **kw: reports.append(args), tree)
    assert reports == [], body


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("abtid_xé1 *+()[].;")), max_size=30),
       st.sets(st.text(alphabet=st.sampled_from(list("abtid_xé1*[]")), max_size=4), max_size=6))
@example("a + tid", {"tid"})
@example("*p + 1", {"*p"})
@example("tidx", {"tid"})
@example("é1 + x", {"é1"})
@example("v", {""})
def test_words_mentions_as_the_whole_word_search(value: str, names: set[str]) -> None:
    """`_Words.mentions` (the value's word runs met with the names) answers as `_mentions` (a
    whole-word regex search per name), names with other characters than word ones included."""
    words = warp_size._Words()
    assert words.mentions(value, names, warp_size.oddities(names)) == warp_size._mentions(value, names)
    assert words.mentions(value, names, warp_size.oddities(names)) == warp_size._mentions(value, names)  # (kept words)


def _derived_both_ways(snippet: str, monkeypatch) -> None:
    """A big function's thread variables, worked out from the query's captures, are those worked
    out from the walk (`BIG_FUNCTION` lowered so that every function takes the big path)."""
    tree = warp_tree.Function(snippet)
    with monkeypatch.context() as patch:
        patch.setattr(warp_size, "_QUERIED", [])  # (not once a big function has compiled the query)
        walked = warp_size._Derived(tree, _NAMES)
        "x" in walked  # noqa: B015 -- worked out on the first question
    with monkeypatch.context() as patch:
        patch.setattr(warp_size, "BIG_FUNCTION", 0)
        patch.setattr(warp_size, "_QUERIED", [])
        queried = warp_size._Derived(tree, _NAMES)
        "x" in queried  # noqa: B015
        assert warp_size._QUERIED == [True]  # the query's path, taken from then on
    assert queried.made == walked.made, snippet


def test_big_functions_derive_as_small_ones_on_the_corpora(monkeypatch) -> None:
    for snippet in _functions():
        _derived_both_ways(snippet, monkeypatch)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(body=st.lists(st.sampled_from(PIECES), max_size=10).map("".join))
@example(body="int a = b + 1;int b = c;int c = d * 2;int d = e;int e = tid;int q = a & 31;")  # five links
def test_big_functions_derive_as_small_ones_on_fragments(monkeypatch, body: str) -> None:
    _derived_both_ways("__global__ void k(int tid, unsigned m) {" + body + "}", monkeypatch)


def test_a_long_chain_is_followed_to_its_end_whatever_the_order() -> None:
    """Six links from `tid`, declared last to first: every variable is derived, so `f & 31` is a
    lane test (the three rounds over the declarations in a query's capture order, which
    py-tree-sitter lists differently from one call to the next, found it in some runs only)."""
    body = "int f = a;int a = b + 1;int b = c;int c = d * 2;int d = e;int e = tid;int q = f & 31;"
    tree = warp_tree.Function("__global__ void k(int tid, unsigned m) {" + body + "}")
    derived = warp_size._Derived(tree, _NAMES)
    assert all(name in derived for name in "abcdef")
    found: list = []
    warp_size._run_checks(tree, _NAMES, lambda node, diag, **args: found.append((diag, tree.text(node))))
    assert ("MU2021", "f & 31") in found
