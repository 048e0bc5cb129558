"""The searchable pass set of an LLVM version, and the gate every pass list goes through.

LLM Compiler searched 167 of the 346 pass arguments of LLVM 17.0.6's ``opt``: every
default pipeline and every optimizing transform pass at its default parameters
(system notes, section 4). :func:`derive_pass_set` rebuilds such a set for any
LLVM >= 17 from ``opt --print-passes`` with the rules of
:mod:`llm_compiler.passes.rules`, then probe-runs every candidate on a bundled sample
program and drops (with the reason) those ``opt`` rejects. Each member is written
fully wrapped for its IR level, so any sequence of members is a valid pipeline:
``module(constmerge)``, ``cgscc(argpromotion)``, ``function(sroa)``,
``function(loop(indvars))``, ``function(loop-mssa(licm<allowspeculation>))``.

The result is stored as ``passes/data/llvm-<major>.txt``. :class:`PassSet` is the
gate: :meth:`PassSet.parse` and :meth:`PassSet.validate` accept only pipelines made of
the set's passes (or extras named explicitly) in placements ``opt`` accepts, with
parameters from ``opt``'s own grammar. Anything else raises
:class:`~llm_compiler.errors.InvalidPassList` before a process starts.
"""

from __future__ import annotations

import functools
import logging
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from llm_compiler.errors import CommandFailed, InvalidPassList, PassSetError
from llm_compiler.files import atomic_write_text, cache_dir
from llm_compiler.passes.pipeline import PassList, PassNode, parse_pipeline
from llm_compiler.passes.registry import LEVEL_RANK, PassRegistry, RegisteredPass, load_registry
from llm_compiler.passes.rules import first_matching_rule
from llm_compiler.toolchain.llvm import Toolchain
from llm_compiler.toolchain.runner import run_command

logger = logging.getLogger(__name__)

#: The number of searchable passes in LLM Compiler (LLVM 17.0.6), for comparison.
PAPER_SEARCHABLE_COUNT = 167

#: The default pipelines, all searchable.
DEFAULT_PIPELINES = ("O0", "O1", "O2", "O3", "Os", "Oz")

#: Passes that need MemorySSA: opt aborts unless they run inside ``loop-mssa(...)``.
_NEEDS_MEMORY_SSA = frozenset({"licm", "lnicm"})

#: Parameters that replace a pass's default in the searchable set, and why.
_SEARCH_PARAMS = {
    # The paper's own example: LICM is searched as licm<allowspeculation>.
    "licm": "allowspeculation",
    "lnicm": "allowspeculation",
    # Since LLVM 18 a bare instcombine verifies that it reached a fixpoint and
    # aborts when it did not; the default pipelines use this spelling.
    "instcombine": "no-verify-fixpoint",
}

#: Adaptors: the contexts (as ranks) they may appear in, and the rank inside them.
_ADAPTOR_PLACEMENT = {
    "module": ({3}, 3),
    "cgscc": ({3}, 2),
    "function": ({3, 2}, 1),
    "loop": ({1}, 0),
    "loop-mssa": ({1}, 0),
}
_ADAPTOR_PARAMS = {"function": {"eager-inv"}}
_RANK_NAME = {0: "loop", 1: "function", 2: "cgscc", 3: "module"}


@dataclass(frozen=True)
class Exclusion:
    """A pass of ``opt`` that is not searched, and why.

    Attributes:
        name: The pass name (with its fixed parameters, e.g. ``print<domtree>``).
        level: Its IR level.
        rule: The rule's name, or ``"probe-failed"``.
        detail: The rule's reason, or what ``opt`` said on the sample program.
    """

    name: str
    level: str
    rule: str
    detail: str


@dataclass(frozen=True)
class PassSet:
    """The searchable passes of one LLVM version, and the pass-list gate.

    Attributes:
        llvm_version: The version the set was derived for, e.g. ``"19.1.7"``.
        members: The searchable passes, each a fully wrapped pipeline element.
        exclusions: Every other pass of ``opt`` with the rule that excluded it.
        registry: ``opt --print-passes`` of the toolchain in use (names, levels and
            parameter grammar); None only for a set read without a toolchain.
        space: The search space the members make (:mod:`llm_compiler.passes.space`):
            ``paper`` for the set itself; searches read it to know which moves they may make.
    """

    llvm_version: str
    members: tuple[str, ...]
    exclusions: tuple[Exclusion, ...] = ()
    registry: PassRegistry | None = field(default=None, compare=False, repr=False)
    space: str = "paper"

    def __post_init__(self) -> None:
        if not self.members:
            raise PassSetError(f"The searchable pass set for LLVM {self.llvm_version} is empty.")
        if len(set(self.members)) != len(self.members):
            duplicates = [name for name, n in Counter(self.members).items() if n > 1]
            raise PassSetError(f"Duplicate searchable passes: {', '.join(duplicates)}.")

    def __len__(self) -> int:
        return len(self.members)

    @functools.cached_property
    def member_lists(self) -> tuple[PassList, ...]:
        """Each member as a one-element :class:`PassList`, in set order."""
        return tuple(parse_pipeline(member) for member in self.members)

    @functools.cached_property
    def _leaf_levels(self) -> dict[str, str]:
        levels = {}
        for member in self.member_lists:
            node = member[0]
            depth_names = []
            while node.children is not None:
                depth_names.append(node.name)
                node = node.children[0]
            innermost = depth_names[-1] if depth_names else "module"
            levels[node.name] = {"loop-mssa": "loop"}.get(innermost, innermost)
        return levels

    @functools.cached_property
    def _member_params(self) -> dict[str, set[str | None]]:
        params: dict[str, set[str | None]] = {}
        for member in self.member_lists:
            for leaf in member.leaves():
                params.setdefault(leaf.name, set()).add(leaf.params)
        return params

    def level_of(self, member: str) -> str:
        """The IR level of a member: ``module``, ``cgscc``, ``function`` or ``loop``."""
        leaf = next(parse_pipeline(member).leaves())
        return self._leaf_levels[leaf.name]

    def counts_by_level(self) -> dict[str, int]:
        """How many members work at each IR level (default pipelines count as module)."""
        counts = Counter(self.level_of(member) for member in self.members)
        return {level: counts.get(level, 0) for level in ("module", "cgscc", "function", "loop")}

    def parse(self, text: str, allow_extra: Iterable[str] = ()) -> PassList:
        """Parses and validates a pipeline text; see :meth:`validate`.

        Raises:
            InvalidPassList: Bad syntax, an unknown or unsearchable pass, a bad
                parameter or a placement opt would reject; the message names the token.
        """
        passes = parse_pipeline(text)
        self.validate(passes, allow_extra)
        return passes

    def validate(self, passes: PassList, allow_extra: Iterable[str] = ()) -> None:
        """Checks that ``passes`` only uses allowed passes, in places opt accepts.

        Args:
            passes: The pass list.
            allow_extra: Names of passes outside the searchable set to accept too
                (e.g. ``no-op-module``); each must still be a pass ``opt`` knows.

        Raises:
            InvalidPassList: Naming the first offending token.
        """
        if not isinstance(passes, PassList) or not passes:
            raise InvalidPassList("An empty pass list cannot be run; give at least one pass.")
        text = str(passes)
        extras = set(allow_extra)
        for extra in extras:
            if self.registry is not None and extra not in self.registry:
                raise InvalidPassList(
                    f"Allowed extra pass {extra!r} is not a pass of opt {self.llvm_version}.",
                    text=text,
                    token=extra,
                )
        first = passes[0]
        if first.children is None and first.name in _ADAPTOR_PLACEMENT:
            raise _invalid(text, first.name, f"adaptor {first.name!r} needs a nested pipeline")
        if first.children is not None:
            context = 3 if first.name in ("module", "cgscc", "function") else 1
        else:
            context = max(LEVEL_RANK[level] for level in self._levels(first, extras, text))
        for node in passes:
            self._check_node(node, context, extras, text, in_mssa=False)

    def _levels(self, node: PassNode, extras: set[str], text: str) -> set[str]:
        if node.name in self._leaf_levels and node.name not in extras:
            levels = {self._leaf_levels[node.name]}
            if self.registry is not None:
                levels |= {lv for lv in self.registry.transform_levels(node.name) if lv != "machine"}
            return levels
        if node.name in extras and self.registry is not None:
            levels = {lv for lv in self.registry.transform_levels(node.name) if lv != "machine"}
            if levels:
                return levels
            raise _invalid(text, node.name, f"{node.name!r} is not a transform pass of opt")
        if self.registry is not None and node.name in self.registry:
            raise _invalid(
                text,
                node.name,
                f"{node.name!r} is a pass of opt {self.llvm_version} but not in the searchable "
                "set (see `llm-compiler passes --excluded` for why); allow it explicitly "
                "with --allow-pass if you really mean it",
            )
        raise _invalid(text, node.name, f"unknown pass {node.name!r}")

    def _check_node(self, node: PassNode, context: int, extras: set[str], text: str, in_mssa: bool) -> None:
        if node.children is not None:
            if node.name not in _ADAPTOR_PLACEMENT:
                raise _invalid(text, node.name, f"{node.name!r} does not take a nested pipeline")
            allowed_contexts, inner = _ADAPTOR_PLACEMENT[node.name]
            if context not in allowed_contexts:
                raise _invalid(
                    text,
                    node.name,
                    f"{node.name}(...) cannot appear in a {_RANK_NAME[context]} pipeline",
                )
            if node.params is not None and node.params not in _ADAPTOR_PARAMS.get(node.name, ()):
                raise _invalid(text, node.params, f"{node.name} takes no parameter {node.params!r}")
            for child in node.children:
                self._check_node(child, inner, extras, text, in_mssa or node.name == "loop-mssa")
            return
        if node.name in _ADAPTOR_PLACEMENT:
            raise _invalid(text, node.name, f"adaptor {node.name!r} needs a nested pipeline")
        levels = self._levels(node, extras, text)
        if min(LEVEL_RANK[level] for level in levels) > context:
            raise _invalid(
                text,
                node.name,
                f"{node.name!r} is a {'/'.join(sorted(levels))} pass and cannot run inside a "
                f"{_RANK_NAME[context]} pipeline (opt parses a text that starts with a "
                f"{_RANK_NAME[context]} pass as a {_RANK_NAME[context]} pipeline; wrap it in "
                "module(...) or function(...))",
            )
        if node.name in _NEEDS_MEMORY_SSA and not in_mssa:
            raise _invalid(
                text,
                node.name,
                f"{node.name} needs MemorySSA and must be written "
                f"function(loop-mssa({node.name}<allowspeculation>)) (opt aborts otherwise)",
            )
        self._check_params(node, extras, text)

    def _check_params(self, node: PassNode, extras: set[str], text: str) -> None:
        if node.params is None or node.params in self._member_params.get(node.name, ()):
            return
        if self.registry is None:
            raise _invalid(text, node.params, f"parameters {node.params!r} of {node.name}")
        fixed = {
            entry.params[0]
            for entry in self.registry.lookup(node.name)
            if entry.fixed_params and node.name in extras
        }
        if node.params in fixed:
            return
        options = self.registry.param_options(node.name)
        for option in node.params.split(";"):
            key, equals, value = option.partition("=")
            if option in options and not equals:
                continue
            if equals and f"{key}=N" in options and value.isdigit():
                continue
            raise _invalid(
                text,
                option,
                f"{node.name} does not take the parameter {option!r} "
                f"(opt accepts: {', '.join(sorted(options)) or 'none'})",
            )

    def to_text(self) -> str:
        """Serialises the set in the format of ``passes/data/llvm-<major>.txt``."""
        counts = self.counts_by_level()
        lines = [
            f"# llm-compiler searchable pass set for LLVM {self.llvm_version}",
            "# Regenerate with: llm-compiler passes --regenerate --llvm-bin <LLVM bin dir>",
            f"# {len(self.members)} searchable passes ("
            + ", ".join(f"{n} {level}" for level, n in counts.items())
            + f"); LLM Compiler searched {PAPER_SEARCHABLE_COUNT} with LLVM 17.0.6.",
            f"llvm-version {self.llvm_version}",
            "[searchable]",
            *self.members,
            "[excluded]",
            "# name\tlevel\trule\tdetail",
        ]
        lines += [f"{e.name}\t{e.level}\t{e.rule}\t{e.detail}" for e in self.exclusions]
        return "\n".join(lines) + "\n"

    @classmethod
    def from_text(cls, text: str, registry: PassRegistry | None = None) -> PassSet:
        """Reads the format written by :meth:`to_text`.

        Raises:
            PassSetError: The text is not a pass set file.
        """
        version = None
        section = None
        members: list[str] = []
        exclusions: list[Exclusion] = []
        for number, raw in enumerate(text.splitlines(), 1):
            line = raw.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            if line.startswith("llvm-version "):
                version = line.split(None, 1)[1].strip()
            elif line in ("[searchable]", "[excluded]"):
                section = line
            elif section == "[searchable]":
                try:
                    parse_pipeline(line.strip())
                except InvalidPassList as error:
                    raise PassSetError(f"Line {number} of the pass set: {error}") from error
                members.append(line.strip())
            elif section == "[excluded]":
                parts = line.split("\t")
                if len(parts) != 4:
                    raise PassSetError(f"Line {number} of the pass set: expected 4 tab-separated fields.")
                exclusions.append(Exclusion(*parts))
            else:
                raise PassSetError(f"Line {number} of the pass set is outside any section: {line!r}")
        if version is None:
            raise PassSetError("The pass set file has no 'llvm-version' line.")
        return cls(version, tuple(members), tuple(exclusions), registry)


def _invalid(text: str, token: str, what: str) -> InvalidPassList:
    position = text.find(token)
    return InvalidPassList(
        f"Invalid pass list {text!r}: {what}.",
        text=text,
        token=token,
        position=position if position >= 0 else None,
    )


def _member_text(entry: RegisteredPass, options: set[str]) -> str:
    params = _SEARCH_PARAMS.get(entry.name)
    element = entry.name if params is None or params not in options else f"{entry.name}<{params}>"
    if entry.name in _NEEDS_MEMORY_SSA:
        return f"function(loop-mssa({element}))"
    if entry.level in ("loop", "loopnest"):
        return f"function(loop({element}))"
    return f"{entry.level}({element})"


def _candidates(registry: PassRegistry) -> tuple[list[RegisteredPass], list[Exclusion]]:
    """Splits the registry into candidates (one per name, widest level) and exclusions."""
    chosen: dict[str, RegisteredPass] = {}
    excluded: dict[tuple[str, str], Exclusion] = {}
    for entry in registry.entries:
        rule = first_matching_rule(entry)
        if rule is not None:
            name = entry.spelling if entry.fixed_params else entry.name
            excluded.setdefault((name, entry.level), Exclusion(name, entry.level, rule.name, rule.reason))
            continue
        current = chosen.get(entry.name)
        if current is None or LEVEL_RANK[entry.level] > LEVEL_RANK[current.level]:
            chosen[entry.name] = entry
    # A name that is a candidate at some level is not "excluded" at another.
    exclusions = [e for key, e in excluded.items() if key[0] not in chosen]
    return list(chosen.values()), exclusions


def derive_pass_set(
    toolchain: Toolchain,
    *,
    probe: bool = True,
    timeout: float = 60.0,
    progress: Callable[[int, int], None] | None = None,
) -> PassSet:
    """Derives the searchable set of ``toolchain`` from ``opt --print-passes``.

    Args:
        toolchain: The LLVM installation.
        probe: Run every candidate on the bundled sample program and drop those opt
            rejects (disable only in tests of the rules).
        timeout: Seconds allowed for each probe run.
        progress: Called with (done, total) after each probe.

    Returns:
        The set, with every excluded pass and its rule.
    """
    registry = load_registry(toolchain)
    candidates, exclusions = _candidates(registry)
    members = [f"module(default<{level}>)" for level in DEFAULT_PIPELINES]
    members += [_member_text(entry, registry.param_options(entry.name)) for entry in candidates]
    levels = ["module"] * len(DEFAULT_PIPELINES) + [entry.level for entry in candidates]
    if probe:
        kept = []
        with tempfile.TemporaryDirectory(prefix="llm-compiler-probe-") as scratch:
            sample = compile_sample(toolchain, Path(scratch))
            for index, (member, level) in enumerate(zip(members, levels, strict=True)):
                failure = probe_pipeline(toolchain, member, sample, timeout)
                if failure is None:
                    kept.append(member)
                else:
                    leaf = next(parse_pipeline(member).leaves())
                    logger.info("dropping %s: %s", member, failure)
                    exclusions.append(Exclusion(leaf.name, level, "probe-failed", failure))
                if progress is not None:
                    progress(index + 1, len(members))
        members = kept
    exclusions.sort(key=lambda e: (e.rule, e.name, e.level))
    return PassSet(toolchain.version, tuple(members), tuple(exclusions), registry)


def compile_sample(toolchain: Toolchain, scratch: Path) -> Path:
    """The bundled sample program as unoptimized IR in ``scratch`` (what probes run on)."""
    source = resources.files("llm_compiler.passes") / "data" / "sample.c"
    target = scratch / "sample.ll"
    with resources.as_file(source) as path:
        run_command(
            [
                toolchain.tool("clang"),
                "-Oz",
                "-Xclang",
                "-disable-llvm-passes",
                "-emit-llvm",
                "-S",
                "-o",
                target,
                path,
            ],
            timeout=120,
            subject=str(path),
        )
    return target


def probe_pipeline(toolchain: Toolchain, member: str, sample: Path, timeout: float) -> str | None:
    """Why ``opt`` fails to run the pipeline ``member`` on ``sample``, or None when it runs."""
    try:
        run_command(
            [toolchain.tool("opt"), f"-passes={member}", "-disable-output", sample],
            timeout=timeout,
            subject="the bundled sample program",
        )
    except CommandFailed as error:
        lines = [line.strip() for line in error.stderr.splitlines() if line.strip()]
        reason = lines[0] if lines else str(error)
        if error.crashed:
            reason = f"opt crashed ({error.signal_name}): {reason}"
        return reason.replace("\t", " ")[:300]
    return None


def data_file(major: int) -> Path:
    """Where the bundled set for LLVM ``major`` lives (it may not exist)."""
    return Path(str(resources.files("llm_compiler.passes"))) / "data" / f"llvm-{major}.txt"


def cache_file(version: str) -> Path:
    """Where a derived set for an LLVM without a bundled file is cached."""
    return cache_dir("passes") / f"llvm-{version}.txt"


@functools.lru_cache(maxsize=8)
def load_pass_set(toolchain: Toolchain) -> PassSet:
    """The searchable set for ``toolchain``: bundled, cached or derived now.

    The bundled ``passes/data/llvm-<major>.txt`` is used when its major version
    matches; otherwise a set derived earlier and cached is used; otherwise it is
    derived (about ten seconds) and cached.
    """
    registry = load_registry(toolchain)
    for path in (data_file(toolchain.major), cache_file(toolchain.version)):
        if path.is_file():
            pass_set = PassSet.from_text(path.read_text(), registry)
            if pass_set.llvm_version.split(".")[0] == str(toolchain.major):
                return pass_set
    logger.warning("No searchable pass set is bundled for LLVM %s; deriving one now.", toolchain.version)
    pass_set = derive_pass_set(toolchain)
    atomic_write_text(cache_file(toolchain.version), pass_set.to_text())
    return pass_set
