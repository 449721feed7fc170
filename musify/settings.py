"""The hazard and precise-mode settings, from command-line flags over the configuration file.

Outside `musify.passes` so that building the options (which every run does, a replayed one too)
imports no pass."""

from __future__ import annotations

from musify.arch import ARCHES, DEFAULT_MAP, parse_arch_map
from musify.config import ConfigError


def hazard_settings(cfg: dict, arch: str | None, arch_map: str | None, no_shims: bool,
                    semantic: bool, build_dir: str | None) -> dict:
    """Keyword arguments for `Options`: arch, arch_map, shims, and precise mode."""
    chosen_arch = arch or cfg.get("arch", "mp_22")
    if chosen_arch not in ARCHES:
        raise ConfigError(f"unknown arch {chosen_arch!r} (known: {', '.join(ARCHES)})")
    spec = arch_map if arch_map is not None else cfg.get("arch_map")
    try:
        pairs = parse_arch_map(spec) if spec is not None else DEFAULT_MAP
    except ValueError as exc:
        raise ConfigError(f"arch map: {exc}") from None
    if semantic and not build_dir:
        raise ConfigError("--semantic needs -p BUILD_DIR (the directory with compile_commands.json)")
    out = {"arch": chosen_arch, "arch_map": pairs, "shims": not no_shims and cfg.get("shims", True)}
    if semantic:
        out.update(semantic=True, build_dir=build_dir)
    return out
