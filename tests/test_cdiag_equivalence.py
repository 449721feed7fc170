"""The compiled `make_from` and `warn` (`_cdiag`) make exactly the diagnostic the Python
references make (`diagnostics._make_from_python`, `_base._warn_python`), and its console lines are
exactly the reference's (`console._print_python`).

Every diagnostic a pass raises is made by `diagnostics.make_from`, in C where it is built. On
every catalogued ID, with generated arguments (strings of every kind, numbers, booleans, None,
objects the record keeps as their `str`, str subclasses, arguments the template lacks and ones
it does not read), severities, spans and sites of every shape the callers pass, both must give
equal objects of the same class, field by field (the `args` dict kept or copied alike), or raise
the same error; `warn` must leave the same diagnostics in a context's findings, or raise the
same error, on generated texts (CRLF, non-ASCII, astral characters), offsets and ends in and out
of the text, names written at the offset or not, and contexts whose line index is not a plain
`LineIndex`. Every diagnostic is printed by `console.print_diagnostics`: on generated files'
diagnostics (every severity, non-ASCII and astral paths and messages, big and negative lines,
grouped sites, and items the C code leaves to Python), both paths must print the same text.
"""

from __future__ import annotations

import io

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from musify import diagnostics
from musify.console import _print_python, print_diagnostics
from musify.diagnostics import (
    CATALOGUE,
    SEVERITY_RANK,
    Diagnostic,
    DiagSpec,
    _make_from_python,
    _pieces,
    console_text,
)
from musify.frontend.scanner import LineIndex
from musify.passes import _base
from musify.passes._base import PassContext, _warn_python

NATIVE = diagnostics._NATIVE
needs_cdiag = pytest.mark.skipif(NATIVE is None, reason="the compiled diagnostic module is not built")
SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


class Shown:
    """An argument the record keeps as its `str` (a path, a number type of a library)."""

    def __str__(self) -> str:
        return "shown"

    def __format__(self, spec: str) -> str:
        return "formatted"


class Text(str):
    """A str subclass: kept as it is, but not taken for a plain str by the compiled path."""


TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)) | st.sampled_from("{}'\"\\\n\x00é𝄞"),
               max_size=12)
VALUES = st.one_of(TEXT, st.integers(), st.floats(allow_nan=False), st.booleans(), st.none(),
                   st.builds(Shown), TEXT.map(Text))
NAMES = st.sampled_from(["name", "expr", "library", "note", "musa", "what", "func", "width", "arch", "call",
                         "cause", "target", "count", "extra"])


@st.composite
def calls(draw) -> tuple:
    """The arguments of one `make_from` call, as the passes and runners make them."""
    diag_id = draw(st.sampled_from(sorted(CATALOGUE)) | st.just("MU9999"))
    args = draw(st.dictionaries(NAMES.filter(lambda k: k != "name"), VALUES, max_size=5))
    end = draw(st.none() | st.tuples(st.integers(1, 9), st.integers(1, 99)) | st.just(())
               | st.lists(st.integers(1, 9), min_size=2, max_size=2) | st.just((1, 2, 3)))
    sites = draw(st.just(()) | st.lists(st.tuples(st.integers(1, 9), st.integers(1, 9)), max_size=3).map(tuple)
                 | st.lists(st.tuples(st.integers(1, 9), st.integers(1, 9)), max_size=2))
    severity = draw(st.sampled_from([None, "", "note", "warning", "error", 0, Text("error"), Text("")]))
    return (diag_id, draw(TEXT), draw(st.integers(1, 10**6)), draw(st.integers(1, 500)), draw(TEXT), severity,
            end, draw(st.sampled_from(["", "pass:identifiers", "rule:x"])), sites, args)


def _made(fn, call: tuple):
    """(class, fields, whether `args` is the caller's dict) or the error's class and text."""
    args = dict(call[9])
    try:
        d = fn(*call[:9], args)
    except Exception as exc:  # noqa: BLE001 -- compared, not handled
        return type(exc), str(exc)
    return type(d), d.__getstate__(), d.args is args


@needs_cdiag
@SETTINGS
@given(calls())
def test_compiled_make_from_is_the_reference(call):
    assert _made(NATIVE.make_from, call) == _made(_make_from_python, call)


@needs_cdiag
def test_the_module_uses_the_compiled_one():
    assert diagnostics.make_from is NATIVE.make_from
    d = diagnostics.make("MU1002", "a.cu", 3, 4, "cudaFoo", library="cuFFT")
    assert type(d) is Diagnostic and d == _make_from_python("MU1002", "a.cu", 3, 4, "cudaFoo", None, None, "", (),
                                                             {"library": "cuFFT"})
    assert d.message == "'cudaFoo' (cuFFT) has no MUSA counterpart; left unchanged"  # `note` missing: ""


@needs_cdiag
def test_templates_the_fast_path_cannot_split_go_to_the_reference(monkeypatch):
    spec = DiagSpec("MU9990", "note", "none", "t", "{name!r} at {where:>4} {{literal}} {what}")
    assert _pieces(spec.template) is None
    monkeypatch.setitem(CATALOGUE, "MU9990", spec)
    call = ("MU9990", "p", 1, 2, "n", None, None, "", (), {"where": "x"})
    assert _made(NATIVE.make_from, call) == _made(_make_from_python, call)
    assert NATIVE.make_from(*call).message == "'n' at    x {literal} use of"


@needs_cdiag
def test_a_spec_replaced_in_the_catalogue_is_read_afresh(monkeypatch):
    old = CATALOGUE["MU1004"]
    monkeypatch.setitem(CATALOGUE, "MU1004", DiagSpec(old.id, "error", old.effort, old.title, "now {name}"))
    d = NATIVE.make_from("MU1004", "p", 1, 1, "cuX", None, None, "", (), {"musa": "muX"})
    assert (d.message, d.severity) == ("now cuX", "error")


@pytest.mark.parametrize("template", ["", "plain", "{a}", "{a}{b}", "x{a}y{b}z", "{{x}} {a} }}", "{a}{a}"])
def test_pieces_alternate_literals_and_names(template):
    pieces = _pieces(template)
    assert len(pieces) % 2 == 1
    values = {name: f"<{name}>" for name in pieces[1::2]}
    assert "".join(p if i % 2 == 0 else values[p] for i, p in enumerate(pieces)) == template.format_map(values)


class Other(Diagnostic):
    """A subclass: its own `console()`, so the compiled lines leave it to the reference."""

    __slots__ = ()

    def console(self) -> str:
        return "other"


@st.composite
def diagnostic_lists(draw) -> list:
    """Files' diagnostic lists as a run's record holds them, with now and then an item the
    compiled path leaves to the reference."""
    def one():
        line = draw(st.integers(-5, 10**12) | st.just(True)) if draw(st.integers(0, 20)) == 0 else draw(
            st.integers(1, 10**6))
        message = draw(TEXT.map(Text) if draw(st.integers(0, 30)) == 0 else TEXT)
        cls = Other if draw(st.integers(0, 40)) == 0 else Diagnostic
        return cls(draw(st.sampled_from(sorted(CATALOGUE))), draw(st.sampled_from(["note", "warning", "error"])),
                   draw(TEXT), line, draw(st.integers(1, 10**4)), message,
                   sites=tuple(draw(st.lists(st.tuples(st.integers(1, 9), st.integers(1, 9)), max_size=3))))
    return [[one() for _ in range(draw(st.integers(0, 4)))] for _ in range(draw(st.integers(0, 5)))]


class File:
    def __init__(self, diagnostics: list) -> None:
        self.diagnostics = diagnostics


class Record:
    def __init__(self, lists: list) -> None:
        self.files = [File(x) for x in lists]


def _printed(fn, record, least: str) -> str:
    out = []
    fn(record, out.append, SEVERITY_RANK[least])
    return "".join(out)


@needs_cdiag
@SETTINGS
@given(diagnostic_lists(), st.sampled_from(["note", "warning", "error"]))
def test_compiled_console_lines_are_the_reference(lists, least):
    record = Record(lists)
    printed = io.StringIO()
    print_diagnostics(record, printed, least)
    assert printed.getvalue() == _printed(_print_python, record, least)


@needs_cdiag
def test_console_lines_of_a_bad_severity_raise_as_the_reference_does():
    d = Diagnostic("MU1001", "nosuch", "a.cu", 1, 1, "m")
    with pytest.raises(KeyError):
        print_diagnostics(Record([[d]]), io.StringIO())
    assert console_text([[d]], 0) is None


class Lines(LineIndex):
    """A LineIndex of its own: the compiled warn asks its `position`, not its line starts."""

    def position(self, offset: int) -> tuple[int, int]:
        line, column = super().position(offset)
        return line, column + 100


@st.composite
def warn_calls(draw) -> tuple:
    """A context's text and one `warn` call on it, as the passes make them (and odd ones)."""
    text = draw(st.text(st.sampled_from("ab_\n\r\té𝄞 ("), max_size=40))
    offset = draw(st.integers(-2, len(text) + 3))
    name = draw(st.just("") | st.just(text[max(offset, 0):max(offset, 0) + draw(st.integers(0, 5))]) | TEXT)
    end = draw(st.none() | st.integers(-1, len(text) + 3) | st.just(True))
    lines = draw(st.sampled_from([LineIndex, Lines]))
    return (text, lines, draw(st.sampled_from(["", "shown/a.cu"])), draw(st.sampled_from(["identifiers", ""])),
            (draw(st.sampled_from(["MU1004", "MU2040", "MU1002", "MU9999"])), offset, name,
             draw(st.sampled_from([None, "", "error"])), end, draw(st.sampled_from(["", "rule:x"])),
             draw(st.just(()) | st.just(((1, 2),))), draw(st.dictionaries(NAMES.filter(lambda k: k != "name"), VALUES,
                                                                       max_size=3))))


def _warned(fn, case: tuple):
    """What `fn` leaves in a fresh context's findings, or the error it raises."""
    text, lines, shown, current, call = case
    ctx = PassContext("a.cu", text, None, None, None, None, lines(text), display_path=shown)
    ctx.found.current_pass = current
    try:
        fn(ctx, *call[:7], dict(call[7]))
    except Exception as exc:  # noqa: BLE001 -- compared, not handled
        return type(exc), str(exc)
    return [(type(d), d.__getstate__()) for d in ctx.found.diagnostics]


@needs_cdiag
@SETTINGS
@given(warn_calls())
def test_compiled_warn_is_the_reference(case):
    assert _warned(NATIVE.warn, case) == _warned(_warn_python, case)


@needs_cdiag
def test_compiled_warn_on_a_file_of_many_lines():
    """Line starts kept in an array (a file of more than 65,536 lines): the method answers."""
    text = "x\n" * 70_000 + "cudaMalloc(p);\n"
    for offset in (0, 1, 2, 99_999, 140_000, len(text) - 3):
        case = (text, LineIndex, "", "identifiers", ("MU1004", offset, "cudaMalloc", None, None, "", (), {"musa": "m"}))
        assert _warned(NATIVE.warn, case) == _warned(_warn_python, case)
    assert _base._warn is NATIVE.warn
