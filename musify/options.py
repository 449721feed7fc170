"""Run options: one frozen object that travels from the CLI (or API caller) to every pass."""

from __future__ import annotations

from dataclasses import fields, replace

from musify.classes import dataclass


@dataclass(frozen=True, init="fields")  # a run makes one or two: no __init__ compiled
class Options:
    """A run's settings, from flags over the configuration over these defaults (a docstring of
    its own: without one the dataclass builds it from its signature at every start-up)."""

    rewrite_comments: bool = False  # also rename CUDA names inside comments
    rewrite_strings: bool = False  # also rename CUDA names inside string literals
    rename_files: bool = True  # .cu -> .mu, .cuh -> .muh
    jobs: int = 1
    exclude: tuple[str, ...] = ()
    respect_gitignore: bool = True
    rules: tuple[str, ...] = ()  # user rule tables, later ones win
    reverse: bool = False  # MUSA -> CUDA
    arch: str = "mp_22"  # target MUSA architecture, for hazard severities
    suppress: tuple[str, ...] = ()  # diagnostic IDs or ranges (MU2010-MU2019) not to report
    shims: bool = True
    arch_map: tuple[tuple[int, int], ...] = ((80, 220), (90, 310))  # sm threshold -> __MUSA_ARCH__
    text_mode: bool = False  # musify-text's everything-is-text behaviour
    semantic: bool = False  # precise mode: resolve names with libclang
    build_dir: str | None = None  # the directory holding compile_commands.json, for precise mode
    json_lite: bool = False  # leave the per-edit list out of the run record
    lock_wait: float = 10.0  # seconds an --in-place run waits for another one on the same tree
    cache: bool = True  # reuse unchanged files' results from the incremental cache (musify/cache.py)

    def with_(self, **changes) -> Options:
        return replace(self, **changes)

    def to_json(self) -> dict:
        out = {}
        for f in fields(self):
            value = getattr(self, f.name)
            out[f.name] = list(value) if isinstance(value, tuple) else value
        return out
