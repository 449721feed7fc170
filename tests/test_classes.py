"""`musify.classes.dataclass` against `dataclasses.dataclass`: the same class to every user.

The start-up helper leaves `__repr__`, `__eq__` and `__hash__` to functions written once instead
of compiling them per class; these tests pin that a class made either way reads, compares,
hashes, pickles, copies and `replace`s the same, frozen or not, slotted or not.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle
from dataclasses import field
from typing import NamedTuple

import pytest

from musify.classes import dataclass, named_tuple
from musify.diagnostics import Diagnostic
from musify.discover import Discovery
from musify.options import Options
from musify.pool import Writes
from musify.records import RunRecord
from musify.report.summary import Report
from musify.rules.model import Rule, RuleSet

VARIANTS = [{}, {"frozen": True}, {"slots": True}, {"frozen": True, "slots": True}]


def _pair(**kw):
    """The same class body made by each decorator (module-level names, so that they pickle)."""

    def body():
        class A:
            """A docstring of its own."""

            a: int
            b: str = "x"
            c: dict = field(default_factory=dict, hash=False, compare=False)
            d: tuple = field(default=(), repr=False)
            e: object = None

        return A

    ref, new = dataclasses.dataclass(**kw)(body()), dataclass(**kw)(body())
    ref.__qualname__, new.__qualname__ = "Ref", "New"
    globals()["Ref"], globals()["New"] = ref, new
    return ref, new


def _text(obj) -> str:
    return repr(obj).split("(", 1)[1]


@pytest.mark.parametrize("kw", VARIANTS)
def test_the_class_behaves_as_the_dataclass(kw) -> None:
    ref, new = _pair(**kw)
    values = [(1, "y", {"k": 1}, (2,), [3]), (1, "y", {"z": 2}, (2,), [3]), (2, "", {}, (), None), (1, "y")]
    for args in values:
        r, n = ref(*args), new(*args)
        assert _text(r) == _text(n)
        assert repr(new(*args)).startswith("New(") and repr(ref(*args)).startswith("Ref(")
        for other_args in values:
            assert (r == ref(*other_args)) == (n == new(*other_args))
        assert n.__eq__(r) is NotImplemented and n.__eq__(3) is NotImplemented
        assert dataclasses.asdict(r) == dataclasses.asdict(n) and dataclasses.astuple(r) == dataclasses.astuple(n)
        assert _text(dataclasses.replace(r, a=9)) == _text(dataclasses.replace(n, a=9))
        assert copy.deepcopy(n) == n and copy.copy(n) == n
        assert pickle.loads(pickle.dumps(n)) == n and _text(pickle.loads(pickle.dumps(n))) == _text(r)
    assert (ref.__hash__ is None) == (new.__hash__ is None)
    if ref.__hash__ is not None:
        assert hash(ref(1, "y", {}, (2,), 3)) == hash(new(1, "y", {}, (2,), 3))
        with pytest.raises(TypeError):
            hash(new(1, "y", {}, (2,), [3]))  # a list in a hashed field, as in the dataclass
    if kw.get("frozen"):
        n = new(1)
        with pytest.raises(dataclasses.FrozenInstanceError):
            n.a = 2
        with pytest.raises(dataclasses.FrozenInstanceError):
            del n.a
    assert ref.__match_args__ == new.__match_args__ and ref.__doc__ == new.__doc__
    assert [f.name for f in dataclasses.fields(ref)] == [f.name for f in dataclasses.fields(new)]


def test_a_frozen_class_with_its_own_init() -> None:
    def body():
        class F:
            a: int
            b: str = ""

            def __init__(self, a: int, b: str = "") -> None:
                self.__dict__.update(a=a, b=b)

        return F

    ref, new = dataclasses.dataclass(frozen=True, init=False)(body()), dataclass(frozen=True, init=False)(body())

    class RefSub(ref):
        pass

    class NewSub(new):
        pass

    for cls in (ref, new, RefSub, NewSub):
        obj = cls(1, "x")
        for name in ("a", "b", "other"):
            with pytest.raises(dataclasses.FrozenInstanceError) if cls in (ref, new) or name != "other" else _no_error():
                setattr(obj, name, 2)
            with pytest.raises((dataclasses.FrozenInstanceError, AttributeError)):
                delattr(obj, name if name != "other" else "missing")
        assert dataclasses.replace(obj, a=5).a == 5 and hash(obj) == hash(cls(1, "x"))
    sub = NewSub(1)
    sub.other = 3
    del sub.other
    assert not hasattr(sub, "other")


class _no_error:
    def __enter__(self):
        return self

    def __exit__(self, *exc) -> bool:
        return False


def test_a_recursive_repr_and_an_empty_class() -> None:
    @dataclass
    class Node:
        x: object = None

    @dataclass
    class Empty:
        pass

    node = Node()
    node.x = node
    assert repr(node).endswith("Node(x=...)")
    assert repr(Empty()).endswith("Empty()") and Empty() == Empty() and Empty.__hash__ is None


def test_a_class_that_writes_its_own_methods_is_refused() -> None:
    with pytest.raises(TypeError, match="__eq__"):
        @dataclass
        class Own:
            a: int

            def __eq__(self, other):
                return True


def test_the_run_classes_read_as_before() -> None:
    """The classes of a run made by it: the repr and equality their users and tests see."""
    opts = Options(jobs=3)
    assert repr(opts).startswith("Options(rewrite_comments=False, rewrite_strings=False, rename_files=True, jobs=3,")
    assert opts == Options(jobs=3) and hash(opts) == hash(Options(jobs=3)) and opts != Options()
    assert dataclasses.replace(opts, jobs=1) == Options()
    rule = Rule("cudaMalloc", "musaMalloc", "function", "cudart", "converted")
    assert rule == dataclasses.replace(rule) and len({rule, dataclasses.replace(rule)}) == 1
    assert repr(rule).startswith("Rule(cuda='cudaMalloc', musa='musaMalloc'")
    d = Diagnostic("MU1001", "warning", "a.cu", 1, 2, "m", args={"x": 1})
    assert d == Diagnostic("MU1001", "warning", "a.cu", 1, 2, "m")  # args are not compared
    assert hash(d) == hash(Diagnostic("MU1001", "warning", "a.cu", 1, 2, "m"))
    assert pickle.loads(pickle.dumps(d)) == d and repr(pickle.loads(pickle.dumps(d))) == repr(d)


def _tuples():
    class RefPoint(NamedTuple):
        """A point."""

        x: int  # a comment
        y: list[str]
        z: str | None = None
        w: tuple = ()

        @property
        def far(self) -> bool:
            return self.x > 10

        def moved(self, by: int) -> RefPoint:
            return self._replace(x=self.x + by)

    @named_tuple
    class NewPoint:
        """A point."""

        x: int  # a comment
        y: list[str]
        z: str | None = None
        w: tuple = ()

        @property
        def far(self) -> bool:
            return self.x > 10

        def moved(self, by: int) -> NewPoint:
            return self._replace(x=self.x + by)

    class RefBare(NamedTuple):
        a: int

    @named_tuple
    class NewBare:
        a: int

    return RefPoint, NewPoint, RefBare, NewBare


def test_named_tuple_makes_the_class_typing_does() -> None:
    ref, new, ref_bare, new_bare = _tuples()
    for args in [(1, ["a"]), (20, [], "z"), (3, ["b"], None, (1,))]:
        r, n = ref(*args), new(*args)
        assert r == n and tuple(r) == tuple(n) and hash(ref(1, (), w=(2,))) == hash(new(1, (), w=(2,)))
        assert repr(r).replace("RefPoint", "P") == repr(n).replace("NewPoint", "P")
        assert r.far == n.far and tuple(r.moved(2)) == tuple(n.moved(2)) and type(n.moved(2)) is new
        assert n._asdict() == r._asdict() and tuple(new._make(tuple(r))) == tuple(r)
    assert new._fields == ref._fields and new._field_defaults == ref._field_defaults
    assert new.__doc__ == ref.__doc__ and new.__module__ == ref.__module__
    assert new.__qualname__.replace("New", "Ref") == ref.__qualname__
    assert list(new.__annotations__) == list(ref.__annotations__) and new.__mro__[1:] == ref.__mro__[1:]
    assert new_bare.__doc__ == ref_bare.__doc__.replace("RefBare", "NewBare") and new_bare(1) == (1,)
    with pytest.raises(TypeError):
        new(1)  # y has no default, as in typing's


def test_named_tuple_refuses_a_field_without_default_after_one_with() -> None:
    with pytest.raises(TypeError):
        @named_tuple
        class Bad:
            a: int = 0
            b: int


def _default(f: dataclasses.Field) -> object:
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return inspect.Parameter.empty if f.default is dataclasses.MISSING else f.default


@pytest.mark.parametrize("cls", [Options, Rule, RuleSet, RunRecord, Discovery, Report, Writes])
def test_a_written_init_takes_what_the_generated_one_took(cls) -> None:
    """Rule writes its own `__init__`; Options, RuleSet, RunRecord, Discovery, Report and Writes
    take the shared one of `dataclass(init="fields")` (dataclasses compiled theirs at every
    start-up): the same fields, in order, positional or by name, with the same defaults; the
    object's attributes set in field order (its pickle unchanged); frozen as before."""
    fields = dataclasses.fields(cls)
    params = list(inspect.signature(cls.__init__).parameters.values())[1:]
    assert [p.name for p in params] == [f.name for f in fields]
    required = [f.name for f in fields if _default(f) is inspect.Parameter.empty]
    values = {f.name: f"v{i}" for i, f in enumerate(fields)}
    whole = cls(**values)
    assert [(name, getattr(whole, name)) for name in vars(whole)] == list(values.items())
    assert cls(*values.values()) == whole and pickle.loads(pickle.dumps(whole)) == whole
    least = cls(*[values[name] for name in required])
    assert [getattr(least, f.name) for f in fields if f.name not in required] == \
        [_default(f) for f in fields if f.name not in required]
    assert dataclasses.replace(least, **{fields[-1].name: "x"}) == cls(*[values[n] for n in required],
                                                                      **{fields[-1].name: "x"})
    if cls.__dataclass_params__.frozen:
        with pytest.raises(dataclasses.FrozenInstanceError):
            whole.kind = 1
    with pytest.raises(TypeError):
        cls(*values.values(), "one too many")
    with pytest.raises(TypeError):
        cls(**values, unknown=1)
    with pytest.raises(TypeError):
        cls(*values.values(), **{fields[0].name: "again"})


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_shared_init_is_the_generated_one(variant) -> None:
    """`init="fields"` against dataclasses' generated `__init__` on the same class body: the same
    objects, the same signature, the same refusals, factories called per object."""

    def body():
        class Point:
            x: int
            y: str = "y"
            tags: list = field(default_factory=list)
        return Point

    shared, generated = dataclass(init="fields", **variant)(body()), dataclasses.dataclass(**variant)(body())
    assert str(inspect.signature(shared.__init__)) == str(inspect.signature(generated.__init__))
    assert shared.__doc__ == generated.__doc__
    for args, kw in [((1,), {}), ((1, "a"), {}), ((1,), {"tags": [2]}), ((), {"x": 3, "y": "b"})]:
        a, b = shared(*args, **kw), generated(*args, **kw)
        assert [getattr(a, f) for f in ("x", "y", "tags")] == [getattr(b, f) for f in ("x", "y", "tags")]
    assert shared(1).tags is not shared(1).tags
    for args, kw in [((), {}), ((1, "a", [], 4), {}), ((1,), {"x": 2}), ((1,), {"z": 0})]:
        with pytest.raises(TypeError):
            shared(*args, **kw)
        with pytest.raises(TypeError):
            generated(*args, **kw)
    if variant.get("frozen"):
        with pytest.raises(dataclasses.FrozenInstanceError):
            shared(1).x = 2


def test_the_shared_init_refuses_a_written_init() -> None:
    with pytest.raises(TypeError):
        @dataclass(init="fields")
        class Both:
            a: int

            def __init__(self, a: int) -> None:
                self.a = a
