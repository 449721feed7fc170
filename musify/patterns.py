"""Module-level regular expressions compiled when first used, not when their module is imported.

A run imports every pass and front end of a language, and each compiled its patterns at import,
while most files never reach most of them: the inline-assembly ones need a file that holds "asm",
the pure-Python scanner's are left to the compiled scanner, others wait behind compiled
pre-checks. Of the 49 patterns compiled at import by a run over the replicated benchmark corpus,
37 were never used: about 4 ms of every run's start-up.

`lazy_pattern(globals(), "NAME", pattern, flags)` stands in for `re.compile(pattern, flags)`
bound to `NAME` in a module. Its first use compiles the pattern and binds the compiled one to
`NAME` in its place, so the module's functions then read the compiled pattern itself, with no
cost per use. It suits a pattern the module only calls methods of (`NAME.search(...)`), never
one it hands to other code as an object; a module that imported the name before that first use
keeps the stand-in, which hands every attribute to the compiled pattern.
"""

from __future__ import annotations

import re


class LazyPattern:
    """`re.compile(pattern, flags)`, made at the first attribute read (see the module's text)."""

    __slots__ = ("_args", "_compiled", "_name", "_namespace")

    def __init__(self, namespace: dict, name: str, pattern: str | bytes, flags: int = 0) -> None:
        self._namespace, self._name, self._args, self._compiled = namespace, name, (pattern, flags), None

    def compiled(self) -> re.Pattern:
        """The compiled pattern (compiled now if it was not), bound in the module in this one's place."""
        if self._compiled is None:
            self._compiled = re.compile(*self._args)
            if self._namespace.get(self._name) is self:
                self._namespace[self._name] = self._compiled
        return self._compiled

    def __getattr__(self, attr: str):
        return getattr(self.compiled(), attr)

    def __repr__(self) -> str:
        return repr(self.compiled())


def lazy_pattern(namespace: dict, name: str, pattern: str | bytes, flags: int = 0) -> LazyPattern:
    """A stand-in for `re.compile(pattern, flags)` bound to `name` in `namespace` (a module's
    `globals()`), compiled at its first use."""
    return LazyPattern(namespace, name, pattern, flags)
