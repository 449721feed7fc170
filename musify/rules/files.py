"""Which files make the rule database, and its digest, without loading a record.

Kept apart from the loader so that what every run needs (the digest the caches key on) costs
no import of the record model or the validation tables: a fully cached run stops here.
"""

from __future__ import annotations

import os
from pathlib import Path

from musify import digests, resources

LOADER_VERSION = "5"  # bump when Rule or RuleSet change shape, to invalidate caches


class RuleFileError(ValueError):
    """A rule file that cannot be used; the message starts with `path:line:`."""


def default_rules_dir() -> Path:
    env = os.environ.get("MUSIFY_RULES_DIR")
    if env:
        return Path(env)
    return resources.data_dir("rules")


def rule_files(rules_dir: Path) -> list[Path]:
    """Every `*.yaml` file under `rules_dir`, sorted (what `rglob` finds that is a file: links to
    files count, links to folders are not followed); by `os.scandir`, which every run pays."""
    found = []
    folders = [str(rules_dir)]
    while folders:
        try:
            entries = list(os.scandir(folders.pop()))
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                folders.append(entry.path)
            elif entry.name.endswith(".yaml") and entry.is_file():
                found.append(Path(entry.path))
    return sorted(found)


def ruleset_digest(rules_dir: Path | None = None, extra: list[Path] | None = None) -> str:
    """The digest `load_ruleset` would give, without compiling or unpickling anything (the
    incremental cache keys on it, so a fully cached run never loads the rules)."""
    rules_dir = rules_dir or default_rules_dir()
    return builtin_digest(rules_dir) + "".join(user_suffix(Path(p)) for p in extra or [])


def builtin_digest(rules_dir: Path) -> str:
    """`rules_digest` of the files under `rules_dir`, memoised by their stat data
    (`musify.digests`): an unchanged database is not read again to be hashed."""
    files = rule_files(rules_dir)
    return digests.memoised("rules", rules_dir, files,
                            lambda: rules_digest([(path, path.read_bytes()) for path in files], rules_dir))


def user_suffix(path: Path) -> str:
    """What a user table adds to the digest."""
    return "+" + digests.sha256(path.read_bytes()).hexdigest()[:8]


def rules_digest(blobs: list[tuple[Path, bytes]], rules_dir: Path) -> str:
    """Content hash of the rule files (names and bytes) and the loader's shape version. Megabytes,
    hashed where the stat memo misses: hashlib's (OpenSSL's) SHA-256, imported only then."""
    import hashlib

    h = hashlib.sha256(LOADER_VERSION.encode())
    for path, data in blobs:
        h.update(path.relative_to(rules_dir).as_posix().encode() + b"\0" + data + b"\0")
    return h.hexdigest()[:20]
