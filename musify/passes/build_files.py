"""What every build-file front end shares: nvcc flags to mcc flags, CUDA install paths, library
names, and references to source files that the migration renames.

The vocabulary is data (`rules/build/toolchain.toml`); this module only applies it. Arch flags go
through the same threshold policy as the arch guards (`--arch-map`), so `-arch=sm_80` and
`__CUDA_ARCH__ >= 800` always agree on the MUSA architecture they stand for.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
from dataclasses import dataclass, field
from functools import lru_cache

from musify.arch import offload_arch, translate
from musify.passes._base import PassContext
from musify.rules.vocab import records, toolchain_vocab

_ARCH_NUMBER = re.compile(r"(?:sm|compute|lto)_(\d+)[a-z]?")


@dataclass(frozen=True)
class FlagChange:
    """What becomes of one flag (and maybe the word after it)."""

    replacement: str | None  # None: the flag is dropped
    words: int  # 1, or 2 when the flag's value was the next word
    diag: str  # MU6020 dropped, MU6021 replaced by a guess, MU6022 arch translated, "" documented
    args: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Toolchain:
    """The toolchain vocabulary, compiled once."""

    compiler: tuple[str, str]
    flags: dict[str, dict]
    arch_flags: frozenset[str]
    arch_prefix: str
    host_arches: frozenset[str]  # `-arch arm64`: a host compiler's or linker's flag, not nvcc's
    arch_list: str  # the MUSA name of the variable that lists the architectures to build for
    libraries: dict[str, dict]
    paths: list[dict]
    libdir: tuple[str, str]
    variables: dict[str, dict]
    extensions: tuple[str, ...]
    language: tuple[str, str]
    variable_pattern: re.Pattern[str]


@lru_cache(maxsize=1)
def toolchain() -> Toolchain:
    v = toolchain_vocab()
    variables = {r["cuda"]: r for r in records(v, "variable")}
    return Toolchain(
        compiler=(v["compiler"]["cuda"], v["compiler"]["musa"]),
        flags={r["cuda"]: r for r in records(v, "flag")},
        arch_flags=frozenset(v["arch"]["flags"]),
        arch_prefix=v["arch"]["musa"],
        host_arches=frozenset(v["arch"]["host"]),
        arch_list=v["arch"]["list_variable"],
        libraries={r["cuda"]: r for r in records(v, "library")},
        paths=sorted(records(v, "path"), key=lambda r: -len(r["cuda"])),
        libdir=(v["libdir"]["cuda"], v["libdir"]["musa"]),
        variables=variables,
        extensions=tuple(v["sources"]["extensions"]),
        language=(v["sources"]["language"], v["sources"]["musa_language"]),
        variable_pattern=re.compile(r"(?<![\w])(" + "|".join(sorted(map(re.escape, variables), key=len,
                                                                      reverse=True)) + r")(?![\w])"),
    )


def translate_flag(word: str, following: str | None, arch_map: tuple[tuple[int, int], ...]) -> FlagChange | None:
    """The mcc form of one nvcc flag (`following` is the next word, for `-arch sm_80`), or None
    when the flag is fine as it is."""
    tc = toolchain()
    name, eq, value = word.partition("=")
    if name in tc.arch_flags:
        if (value if eq else following) in tc.host_arches:
            return None  # `-arch arm64`: Apple clang's or ld's, which nvcc's -arch never takes
        if eq:
            return _arch_change(word, value, 1, arch_map)
        if following is not None:
            return _arch_change(f"{word} {following}", following, 2, arch_map)
        return None
    rule = tc.flags.get(name) if (eq and tc.flags.get(name, {}).get("value")) else tc.flags.get(word)
    if rule is None:
        return None
    words = 2 if rule.get("value") and not eq and following is not None else 1
    shown = word if words == 1 else f"{word} {following}"
    if rule["action"] == "drop":
        return FlagChange(None, words, "MU6020", {"flag": shown, "why": _why(rule)})
    return FlagChange(rule["musa"], words, "MU6021" if rule.get("guess") else "",
                      {"flag": shown, "musa": rule["musa"]})


def _why(rule: dict) -> str:
    return "this project's best guess" if rule.get("guess") else f"mcc does not accept it ({rule.get('source', '')})"


def _arch_change(shown: str, value: str, words: int, arch_map: tuple[tuple[int, int], ...]) -> FlagChange:
    numbers = sorted({int(n) for n in _ARCH_NUMBER.findall(value)})
    if not numbers:
        return FlagChange(shown, words, "MU6023", {"flag": shown})
    archs: list[str] = []
    policies = []
    exact = True
    for n in numbers:
        t = translate(n * 10, arch_map)
        if t is None:
            return FlagChange(shown, words, "MU6023", {"flag": shown})
        exact = exact and t.exact
        mp = offload_arch(t.musa)
        if mp not in archs:
            archs.append(mp)
        policies.append(t.policy)
    new = " ".join(toolchain().arch_prefix + a for a in archs)
    return FlagChange(new, words, "MU6022", {"flag": shown, "musa": new, "policy": "; ".join(dict.fromkeys(policies)),
                                             "exact": exact})


_CAPABILITY = re.compile(r"(\d+)\.(\d)[a-z]?(?:\+PTX)?", re.IGNORECASE)  # 8.6, 9.0a, 7.0+PTX
_LIST_SEPARATORS = re.compile(r"[;,\s]+")


def translate_arch_list(value: str, arch_map: tuple[tuple[int, int], ...]) -> FlagChange:
    """TORCH_CUDA_ARCH_LIST's value (compute capabilities: "7.0;8.0+PTX", separated by `;` or
    blanks) as TORCH_MUSA_ARCH_LIST's (the MUSA architectures' mp_XX numbers: "21;22"), through
    the arch policy that translates `-arch=sm_XX`: MU6022 with the policy (a warning where a value
    has no exact entry), or MU6025 with the value kept where a part is not a compute capability
    (a variable, "Ampere", "All")."""
    words = [w for w in _LIST_SEPARATORS.split(value.strip()) if w]
    numbers: list[int] = []
    policies: list[str] = []
    exact = True
    for word in words:
        m = _CAPABILITY.fullmatch(word)
        t = translate((int(m.group(1)) * 10 + int(m.group(2))) * 10, arch_map) if m else None
        if t is None:
            return not_translated(value, f"'{word}' is not a compute capability the arch policy can translate")
        exact = exact and t.exact
        policies.append(t.policy)
        if t.musa // 10 not in numbers:
            numbers.append(t.musa // 10)
    if not words:
        return FlagChange(value, 1, "")  # an empty list (`os.environ.get("…", "")`): nothing to translate
    new = ";".join(map(str, sorted(numbers)))
    return FlagChange(new, 1, "MU6022", {"flag": value, "musa": new, "policy": "; ".join(dict.fromkeys(policies)),
                                         "exact": exact})


def not_translated(value: str, why: str) -> FlagChange:
    """MU6025: an arch list kept as written, and why."""
    return FlagChange(value, 1, "MU6025", {"flag": value, "variable": toolchain().arch_list, "why": why})


def is_arch_list(cuda_name: str) -> bool:
    """Whether `cuda_name` is the variable whose value lists CUDA compute capabilities
    (TORCH_CUDA_ARCH_LIST: its MUSA name is the toolchain's arch list)."""
    rule = toolchain().variables.get(cuda_name)
    return rule is not None and rule["musa"] == toolchain().arch_list


def library_rename(name: str) -> dict | None:
    """The library record for a bare library name (`cudart`), or None."""
    return toolchain().libraries.get(name)


_PATH_CACHE: dict[str, re.Pattern[str]] = {}


def _libdir() -> re.Pattern[str]:
    """`lib64` right after a MUSA install root (a path, or a variable holding one): `lib` there."""
    if "l" not in _PATH_CACHE:
        tc = toolchain()
        names = "|".join(sorted({re.escape(r["musa"]) for r in tc.variables.values()
                                 if r["musa"].endswith("_HOME")}))
        roots = "|".join(sorted({re.escape(r["musa"]) for r in tc.paths}))
        _PATH_CACHE["l"] = re.compile(r"((?:\$\(|\$\{|\$ENV\{|\$)(?:" + names + r")\}?\)?|(?:" + roots
                                      + r")(?:-[\d.]+)?)/" + re.escape(tc.libdir[0]) + r"(?![\w])")
    return _PATH_CACHE["l"]


def path_pattern() -> re.Pattern[str]:
    """CUDA install roots (`/usr/local/cuda`, `/usr/local/cuda-12.1`), each a whole path component."""
    if "p" not in _PATH_CACHE:
        roots = "|".join(re.escape(r["cuda"]) for r in toolchain().paths)
        _PATH_CACHE["p"] = re.compile(r"(?:(?<=-[LIR])|(?<=-isystem)|(?<![\w/.]))(" + roots
                                      + r")(-[\d.]+)?(?=$|[/\s\"':;)}])")
    return _PATH_CACHE["p"]


def path_rule(root: str) -> dict:
    return next(r for r in toolchain().paths if r["cuda"] == root)


# --- references to files the migration renames -----------------------------------------------

def renamed_reference(ctx: PassContext, ref: str) -> str | None:
    """The new spelling of `ref` (a path, a glob, or a bare file name as a build file writes it)
    when it names files that this migration renames; None when it names nothing renamed."""
    renames = ctx.project.renames
    if not renames or not ref.endswith(toolchain().extensions):
        return None
    stem, ext = posixpath.splitext(ref)
    new_ext = _new_ext(renames, ext)
    if new_ext is None:
        return None
    base = posixpath.dirname(ctx.path)
    if any(c in ref for c in "*?[%"):
        pattern = ref.replace("%", "*")
        wanted = [posixpath.normpath(posixpath.join(base, pattern)), pattern, "*/" + pattern.lstrip("./")]
        hit = any(fnmatch.fnmatchcase(old, w) for old in renames for w in wanted)
        return stem + new_ext if hit else None
    for candidate in (posixpath.normpath(posixpath.join(base, ref)), posixpath.normpath(ref)):
        if candidate in renames:
            return stem + posixpath.splitext(renames[candidate])[1]
    tail = "/" + ref.lstrip("./")
    # the files it may name (GPTQModel builds `root / "quantization" / "gemv_cuda.cu"`, a name two
    # of its folders have): where each is renamed to the same extension, that is the reference's
    # new spelling whichever it names
    new_exts = {posixpath.splitext(renames[old])[1] for old in renames if old.endswith(tail)}
    return stem + new_exts.pop() if len(new_exts) == 1 else None


def _new_ext(renames: dict[str, str], ext: str) -> str | None:
    for old, new in renames.items():
        if old.endswith(ext):
            return posixpath.splitext(new)[1]
    return None


def is_source_reference(ref: str) -> bool:
    return ref.endswith(toolchain().extensions)


# --- words of a build line ----------------------------------------------------------------------

_WORDS = re.compile(r"\S+")
_ASSIGNMENT = re.compile(r"^((?:[A-Za-z_][\w.]*)?(?:::?|[+?!])?=)(.*)$", re.DOTALL)
_SOURCE_REF = re.compile(r"[\w./%*?\[\]+${}()-]*\.(?:cuh|cu)(?![\w])")
_SOURCE_REF_LITERAL = ".cu"  # what every match of `_SOURCE_REF` holds


def _quote_peel(word: str) -> tuple[int, int]:
    """How many quote characters open and close `word` as part of a quoted run of words: both
    ends of `"-arch=sm_80"`, the opening one of `"-O3` and the closing one of `-lineinfo"`; none
    for quotes that pair up inside the word (`-Xptxas="-v"`)."""
    if not word:
        return 0, 0
    first, last = word[0], word[-1]
    if first in "\"'" and len(word) > 1 and last == first and word.count(first) == 2:
        return 1, 1
    lead = 1 if first in "\"'" and word.count(first) % 2 else 0
    trail = 1 if last in "\"'" and len(word) > lead and word.count(last) % 2 and not (lead and last == first) else 0
    return lead, trail


@dataclass
class WordResult:
    new: str | None  # None: drop the word(s)
    words: int = 1
    diags: list[tuple[str, dict]] = field(default_factory=list)  # (diag id, args)
    severity: str | None = None


def may_rewrite_word(word: str) -> bool:
    """False only where `rewrite_word(ctx, word, None)` is None: every step of it needs one of a
    few literals in the word (`=` for an assignment, `-` for a flag or `-l`, the compiler's name,
    an install root, a variable's name, `/lib64`, `.cu`), and a step that finds none changes
    nothing and reports nothing. Asked before the word is looked at more closely: most string
    literals of a Python file hold none of them (tests/pytorch/test_build_words.py holds the
    two to it)."""
    made = _PATH_CACHE.get("w")
    if made is None:
        tc = toolchain()
        words = {"=", "-", tc.compiler[0], "/" + tc.libdir[0], _SOURCE_REF_LITERAL, *tc.variables,
                 *(r["cuda"] for r in tc.paths)}
        made = _PATH_CACHE["w"] = re.compile("|".join(sorted(map(re.escape, words))))
    return made.search(word) is not None


def rewrite_word(ctx: PassContext, word: str, following: str | None, hook=None) -> WordResult | None:
    """The MUSA form of one build word (quotes and a `NAME=` prefix are kept), or None."""
    lead, trail = _quote_peel(word)
    prefix, body, suffix = word[:lead], word[lead:len(word) - trail], word[len(word) - trail:]
    m = _ASSIGNMENT.match(body)
    continued = False  # the value opens a quote this word does not close: it goes on in the next words
    if m and not body.startswith("-"):
        prefix, body = prefix + m.group(1), m.group(2)
        inner_lead, inner_trail = _quote_peel(body)
        if inner_trail:
            body, suffix = body[:-inner_trail], body[-inner_trail:] + suffix
        prefix, body = prefix + body[:inner_lead], body[inner_lead:]
        continued = bool(inner_lead and not inner_trail)
    following_body = following.strip("\"'") if following else None
    tc = toolchain()
    diags: list[tuple[str, dict]] = []
    if m and not word.startswith("-"):
        renamed = _variables(prefix, diags)
        if renamed != prefix and body and is_arch_list(m.group(1).rstrip(":+?!=")):
            change = not_translated(body, "a value written over several words is not translated") if continued \
                else translate_arch_list(body, ctx.options.arch_map)
            return _changed_word(renamed, change, suffix, diags)
        if renamed != prefix:
            inner = rewrite_word(ctx, word[len(prefix):] or "", following, hook) if body else None
            if inner is None:
                return WordResult(renamed + word[len(prefix):], 1, diags)
            inner.diags[:0] = diags
            inner.new = renamed + (inner.new if inner.new is not None else "")
            return inner
    change = translate_flag(body, following_body, ctx.options.arch_map) if body.startswith("-") else None
    if change is not None:
        severity = report_change(change, diags)
        if change.replacement is None:  # dropped; a quote it shares with other words and `NAME=` stay
            whole = lead and trail and word[0] == word[-1] and not m
            return WordResult(None if whole or not (prefix or suffix) else prefix + suffix, change.words, diags)
        tail = following[len(following.rstrip("\"'")):] if change.words == 2 and following else suffix
        return WordResult(prefix + change.replacement + tail, change.words, diags, severity)
    if body == "-x" and following_body == tc.language[0]:
        return WordResult(f"{word} {following.replace(tc.language[0], tc.language[1])}", 2)
    new = body
    if new == tc.compiler[0] or new.endswith("/" + tc.compiler[0]):
        new = new[: len(new) - len(tc.compiler[0])] + tc.compiler[1]
    if new.startswith("-l") and (lib := tc.libraries.get(new[2:])):
        new = "-l" + lib["musa"]
        if lib.get("guess"):
            diags.append(("MU6021", {"flag": body, "musa": new}))
    new = _paths(new, diags)
    new = _variables(new, diags)
    new = _libdir().sub(lambda mm: mm.group(1) + "/" + tc.libdir[1], new)
    new = _SOURCE_REF.sub(lambda mm: _source(ctx, mm.group(), diags), new)
    if hook is not None:
        new, more = hook(new)
        diags.extend(more)
    if new == body:
        return None if not diags else WordResult(word, 1, diags)
    return WordResult(prefix + new + suffix, 1, diags)


def report_change(change: FlagChange, diags: list) -> str | None:
    """Add the change's diagnostic to `diags`; the severity it is raised at (None: its own): an
    arch translation with no exact entry in the map is a warning."""
    args = dict(change.args)
    severity = "warning" if change.diag == "MU6022" and not args.pop("exact", True) else None
    if change.diag:
        diags.append((change.diag, args))
    return severity


def warn_change(ctx: PassContext, change: FlagChange, start: int, end: int, origin: str) -> None:
    """Raise the change's diagnostic (if it has one) over text[start:end], at `report_change`'s severity."""
    diags: list = []
    severity = report_change(change, diags)
    for diag, args in diags:
        ctx.warn(diag, start, end=end, severity=severity, origin=origin, **args)


def _changed_word(prefix: str, change: FlagChange, suffix: str, diags: list) -> WordResult:
    """The word `prefix` + the change's replacement + `suffix`, with the change's diagnostic."""
    severity = report_change(change, diags)
    return WordResult(prefix + change.replacement + suffix, 1, diags, severity)


def _paths(word: str, diags: list) -> str:
    def sub(m: re.Match[str]) -> str:
        rule = path_rule(m.group(1))
        if rule.get("guess") or m.group(2):
            diags.append(("MU6021", {"flag": m.group(), "musa": rule["musa"]}))
        return rule["musa"]
    return path_pattern().sub(sub, word)


def _variables(word: str, diags: list) -> str:
    tc = toolchain()

    def sub(m: re.Match[str]) -> str:
        rule = tc.variables[m.group(1)]
        if rule.get("guess"):
            diags.append(("MU6021", {"flag": m.group(1), "musa": rule["musa"]}))
        return rule["musa"]
    return tc.variable_pattern.sub(sub, word)


def _source(ctx: PassContext, ref: str, diags: list) -> str:
    if "$" in ref or "(" in ref:  # `$(SRC:.cu=.o)`: only the extension, when files are renamed
        ext = re.search(r"\.cuh?(?![\w])", ref)
        new_ext = _new_ext(ctx.project.renames, ext.group()) if ext and ctx.project.renames else None
        return ref[:ext.start()] + new_ext + ref[ext.end():] if new_ext else ref
    if posixpath.basename(ref).startswith("."):  # `.cu` in `$(SRC:.cu=.o)`: the extension alone
        new_ext = _new_ext(ctx.project.renames, ref[ref.rindex("."):]) if ctx.project.renames else None
        return ref[:ref.rindex(".")] + new_ext if new_ext else ref
    new = renamed_reference(ctx, ref)
    if new is None:
        if ctx.options.rename_files:
            diags.append(("MU6024", {"ref": ref}))
        return ref
    return new


def rewrite_words(ctx: PassContext, start: int, end: int, hook=None, origin: str = "pass:build_files") -> list:
    """Edits for every word of text[start:end] (whitespace separated); a dropped flag takes the
    blank after it (or before it, at the end) with it."""
    from musify.engine.edits import Edit

    text = ctx.text
    words = [(m.start(), m.end()) for m in _WORDS.finditer(text, start, end)]
    edits = []
    done_to = start  # no edit may reach back before the end of the previous one
    i = 0
    while i < len(words):
        s, e = words[i]
        following = text[words[i + 1][0]:words[i + 1][1]] if i + 1 < len(words) else None
        result = rewrite_word(ctx, text[s:e], following, hook)
        if result is None:
            i += 1
            continue
        last_end = words[i + result.words - 1][1]
        for diag, args in result.diags:
            ctx.warn(diag, s, end=last_end, severity=result.severity if diag == "MU6022" else None,
                     origin=origin, **args)
        if result.new is None:
            nxt = words[i + result.words][0] if i + result.words < len(words) else None
            if nxt is not None and "\n" not in text[last_end:nxt]:
                edits.append(Edit(s, nxt, "", "flag:" + text[s:e], "build", "flag"))
            else:
                back = s
                while back > done_to and text[back - 1] in " \t":
                    back -= 1
                edits.append(Edit(back, last_end, "", "flag:" + text[s:e], "build", "flag"))
            done_to = edits[-1].end
        elif result.new != text[s:last_end]:
            edits.append(Edit(s, last_end, result.new, "word:" + text[s:e], "build", "flag"))
            done_to = last_end
        i += result.words
    return edits
