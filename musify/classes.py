"""`dataclass` and `named_tuple` for the classes every run defines at start-up, compiling less.

`dataclasses.dataclass` writes each method it adds as source text and compiles it while the
class is defined: about 0.1 ms a method, and a plain `musify migrate` defines some twenty
dataclasses, about 80 methods (~8 ms of every run). This `dataclass` makes the same class
through `dataclasses.dataclass` (so `fields`, `replace` and `asdict` work on it as on any
dataclass, and a generated `__init__` and `__slots__` are the standard ones) but gives it `__repr__`, `__eq__` and `__hash__` (and, where the class writes its
own `__init__`, a frozen class's `__setattr__`/`__delattr__`) made from functions written once,
here, that behave as the generated ones do: the same text (recursion shown as `...`),
equality of two objects of the same class over the compared fields in order (`NotImplemented`
for any other class), a frozen class hashed on the same fields, a mutable one unhashable.
A class that writes one of those three methods itself is not supported (it says so).

`typing.NamedTuple` compiles each field's annotation (a string, under `from __future__ import
annotations`) into a `ForwardRef` that nothing here reads: 30 us a field, 76 fields every run.
`named_tuple` makes the class `typing.NamedTuple` would (the same `collections.namedtuple`, the
same defaults, docstring and methods) from a plain class body, keeping the annotations as written.
"""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Callable
from operator import attrgetter
from reprlib import recursive_repr

_OWN = ("__repr__", "__eq__", "__hash__")


def dataclass(cls: type | None = None, /, *, init: bool | str = True, frozen: bool = False, slots: bool = False):
    """`dataclasses.dataclass(cls, init=init, frozen=frozen, slots=slots)` (repr and eq on).

    `init="fields"`: the `__init__` is one function written here, reading the class's fields
    (the same parameters, defaults and default factories, the attributes set in field order)
    rather than source compiled for the class: for a class a run makes a few times, where
    compiling its `__init__` at every start-up costs more than all its calls (a class made per
    file writes its own, which is faster per call)."""

    def wrap(cls: type) -> type:
        written = [name for name in _OWN if name in cls.__dict__]
        if written:
            raise TypeError(f"{cls.__qualname__} defines {', '.join(written)}: use dataclasses.dataclass")
        shared_init = init == "fields"
        if shared_init and ("__init__" in cls.__dict__ or "__post_init__" in cls.__dict__):
            raise TypeError(f"{cls.__qualname__}: init='fields' makes __init__ (and calls no __post_init__)")
        init_ = init is True
        undocumented = shared_init and cls.__doc__ is None
        if undocumented:  # else dataclasses documents it by asking `inspect` the signature of
            cls.__doc__ = "-"  # object.__init__ (made from its text: ~6 ms); written below instead
        # a frozen class with its own __init__ (which sets its fields without __setattr__) and no
        # slots takes the frozen __setattr__/__delattr__ from here too; a generated __init__
        # needs the class frozen in dataclasses' own terms to set its fields
        own_frozen = frozen and not init_ and not slots and "__setattr__" not in cls.__dict__ \
            and "__delattr__" not in cls.__dict__
        made = dataclasses.dataclass(cls, init=init_, repr=False, eq=False, frozen=frozen and not own_frozen,
                                     slots=slots)
        _add_methods(made, frozen)
        if own_frozen:
            _add_frozen(made)
        if shared_init:
            _add_init(made, slots, document=undocumented)
        return made

    return wrap if cls is None else wrap(cls)


def _add_frozen(cls: type) -> None:
    """The `__setattr__` and `__delattr__` dataclasses gives a frozen class."""
    names = tuple(f.name for f in dataclasses.fields(cls))

    def __setattr__(self, name: str, value) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    for method in (__setattr__, __delattr__):
        method.__qualname__ = f"{cls.__qualname__}.{method.__name__}"
        setattr(cls, method.__name__, method)


class _Factory:
    """The default shown in a shared `__init__`'s signature for a field with a default factory
    (as dataclasses shows it)."""

    def __repr__(self) -> str:
        return "<factory>"


def _add_init(cls: type, slots: bool, document: bool) -> None:
    """The `__init__` dataclasses would generate, as one function over the fields' names,
    defaults and factories; its signature (`inspect.signature`) is the generated one's, and so
    is the docstring `document` asks for (a class without one)."""
    fields = [f for f in dataclasses.fields(cls) if f.init]
    names = tuple(f.name for f in fields)
    known = frozenset(names)
    defaults = {f.name: f.default for f in fields if f.default is not dataclasses.MISSING}
    factories = {f.name: f.default_factory for f in fields if f.default_factory is not dataclasses.MISSING}
    where = f"{cls.__qualname__}.__init__()"

    def __init__(self, *args, **values) -> None:
        if len(args) > len(names):
            raise TypeError(f"{where} takes {len(names) + 1} positional arguments but {len(args) + 1} were given")
        for name, value in zip(names, args):
            if name in values:
                raise TypeError(f"{where} got multiple values for argument {name!r}")
            values[name] = value
        if not known.issuperset(values):
            raise TypeError(f"{where} got an unexpected keyword argument {min(values.keys() - known)!r}")
        ordered = {}
        for name in names:
            if name in values:
                ordered[name] = values[name]
            elif name in defaults:
                ordered[name] = defaults[name]
            elif name in factories:
                ordered[name] = factories[name]()
            else:
                raise TypeError(f"{where} missing required argument: {name!r}")
        if slots:
            for name, value in ordered.items():
                object.__setattr__(self, name, value)
        else:  # a new object's dictionary is empty: the attributes land in field order
            self.__dict__.update(ordered)

    import inspect  # loaded already: dataclasses imports it

    param = inspect.Parameter
    shown = {**{name: _Factory() for name in factories}, **defaults}
    params = [param(f.name, param.POSITIONAL_OR_KEYWORD, default=shown.get(f.name, param.empty), annotation=f.type)
              for f in fields]
    __init__.__signature__ = inspect.Signature([param("self", param.POSITIONAL_OR_KEYWORD), *params],
                                               return_annotation=None)
    if document:
        cls.__doc__ = cls.__name__ + str(inspect.Signature(params))
    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    cls.__init__ = __init__


def _values(names: tuple[str, ...]) -> Callable[[object], tuple]:
    """The tuple `(obj.a, obj.b, ...)` of `names`, as the generated methods build it."""
    if len(names) > 1:
        return attrgetter(*names)
    if names:
        one = attrgetter(names[0])
        return lambda obj: (one(obj),)
    return lambda obj: ()


def _add_methods(cls: type, frozen: bool) -> None:
    fields = dataclasses.fields(cls)
    shown = tuple(f.name for f in fields if f.repr)
    shown_values = _values(shown)
    compared = _values(tuple(f.name for f in fields if f.compare))

    @recursive_repr()
    def __repr__(self) -> str:
        return self.__class__.__qualname__ + "(" + ", ".join(
            f"{name}={value!r}" for name, value in zip(shown, shown_values(self))) + ")"

    def __eq__(self, other: object):
        if other.__class__ is self.__class__:
            return compared(self) == compared(other)
        return NotImplemented

    methods: dict[str, object] = {"__repr__": __repr__, "__eq__": __eq__}
    if frozen:  # as dataclasses does for eq=True, frozen=True: hashed on the compared fields
        hashed = _values(tuple(f.name for f in fields if (f.compare if f.hash is None else f.hash)))

        def __hash__(self) -> int:
            return hash(hashed(self))

        methods["__hash__"] = __hash__
    else:  # eq=True on a mutable class: unhashable
        methods["__hash__"] = None
    for name, method in methods.items():
        if method is not None:
            method.__qualname__ = f"{cls.__qualname__}.{name}"
        setattr(cls, name, method)


# what `typing.NamedTuple` does not copy from a class body onto the tuple class (a plain class's
# own `__dict__` and `__weakref__` descriptors besides)
_NOT_COPIED = frozenset({"__module__", "__annotations__", "__dict__", "__weakref__"})


def named_tuple(cls: type) -> type:
    """The class `class Name(typing.NamedTuple)` with this body makes: the fields are the
    annotated names in order, those given a value have it as their default (none without one may
    follow them), and the body's docstring, methods and other attributes are set on the tuple
    class; the annotations stay the strings they were written as."""
    body = dict(cls.__dict__)
    types = body.get("__annotations__", {})
    defaults = [name for name in types if name in body]
    if defaults and list(types)[-len(defaults):] != defaults:
        raise TypeError(f"{cls.__qualname__}: a field without a default follows one with a default")
    made = collections.namedtuple(cls.__name__, list(types), defaults=[body[name] for name in defaults],
                                  module=cls.__module__)
    made.__annotations__ = made.__new__.__annotations__ = dict(types)
    made.__qualname__ = cls.__qualname__
    if body.get("__doc__") is None:  # no docstring in the body: namedtuple's own stays
        body.pop("__doc__", None)
    for key, value in body.items():
        if key not in _NOT_COPIED and key not in made._fields:
            setattr(made, key, value)
    return made
