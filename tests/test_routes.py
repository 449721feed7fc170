"""`routes.Routes`: the passes a file is given, looked up by its gates' outcome, are the ones the
gates give pass by pass (`routes.route`, the reference), whatever the file holds."""

from __future__ import annotations

import random

from musify.routes import Routes, route, routes_for


def _passes():
    def run(ctx):
        return []

    # (name, run, needs, trigger bits, idle facts): gates of every kind, idle facts on some
    return (("a", run, None, 0b1, None), ("b", run, None, 0, None), ("c", run, frozenset({"x"}), 0, {"c": 0}),
            ("d", run, frozenset({"y", "z"}), 0, None), ("e", run, None, 0b110, {"e": 0, "f": 0}),
            ("g", run, frozenset({"z"}), 0b1000, None), ("h", run, None, 0b1000, None))


def test_routes_are_the_gates_one_by_one():
    passes = _passes()
    routes = Routes(passes)
    rng = random.Random(7)
    words = ["x", "y", "z", "w"]
    for _ in range(500):
        present = None if rng.random() < 0.1 else frozenset(rng.sample(words, rng.randrange(len(words) + 1)))
        bits = rng.randrange(32)
        assert routes.of(present, bits) == route(passes, present, bits)
    assert routes.triggers == 0b1111


def test_a_skipped_pass_keeps_its_idle_facts_in_its_turn():
    steps = Routes(_passes()).of(frozenset(), 0)
    assert [(name, run is None, idle) for name, run, idle in steps] == [
        ("b", False, None), ("c", True, {"c": 0}), ("e", True, {"e": 0, "f": 0})]


def test_no_triggers_and_no_bits():
    run = _passes()[0][1]
    passes = (("a", run, None, 0, None), ("b", run, frozenset({"q"}), 0, None))
    routes = routes_for(passes)
    assert routes.triggers == 0 and routes_for(passes) is routes
    assert [s[0] for s in routes.of(frozenset({"q"}), None)] == ["a", "b"]
    assert [s[0] for s in routes.of(None, None)] == ["a", "b"]
    assert [s[0] for s in routes.of(frozenset(), None)] == ["a"]
