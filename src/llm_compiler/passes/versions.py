"""Pass lists written for one LLVM version, adapted to run on the installed one.

LLM Compiler's released models learned the pass names of LLVM 17.0.6's ``opt``; this
project runs any LLVM >= 17. Between versions a few passes are renamed
(``flattencfg`` is ``flatten-cfg`` in LLVM 19), a few are removed (``loop-reroll``), an
option can change its spelling, and plain ``instcombine`` changed its meaning: LLVM 17
repeated it until nothing changed, LLVM >= 18 runs one iteration and, when written
plainly in ``-passes``, aborts (``LLVM ERROR: Instruction Combining did not reach a
fixpoint``) if that iteration was not a fixpoint.

:func:`adapt_pass_list` returns the list the installed ``opt`` should run for a list
written for ``source_llvm``, with a :class:`Change` (old text, new text, reason) for
every element it rewrote, or raises :class:`~llm_compiler.errors.InvalidPassList`
naming a pass that has no sound equivalent. Two kinds of rewrite exist:

* A version map, for lists from an older LLVM (the models: ``source_llvm=17``). It is
  data, ``passes/data/llvm-17-to-19.json``, with one decision for each difference
  between the two versions' pass registries (``passes/data/llvm-17.0.6-passes.txt``
  and ``opt --print-passes``), as printed and checked by
  ``scripts/derive_version_map.py``. A name the installed ``opt`` still knows is kept.
* The instcombine rule, for any list on an LLVM >= 18: an ``instcombine`` without a
  ``verify-fixpoint`` setting runs as ``instcombine<no-verify-fixpoint>``, the spelling
  of LLVM's own pipelines and of the searchable set. Where plain ``instcombine``
  reaches its fixpoint the output is the same; where it does not, ``opt`` no longer
  aborts.

Lists the tuner builds from the searchable set need neither: they use the installed
version's names, and their only instcombine is ``instcombine<no-verify-fixpoint>``.
Validation stays the job of the pass-list gate: check the adapted list with
``Compiler.check(adapted.passes)`` (or ``PassSet.validate``). Example::

    adapted = adapt_pass_list(model_list, compiler.pass_set, source_llvm=17)
    compiler.check(adapted.passes)
    for line in adapted.summary():
        print(line)  # "flattencfg -> flatten-cfg: renamed after LLVM 17: ..."
"""

from __future__ import annotations

import functools
import itertools
import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from types import MappingProxyType

from llm_compiler.errors import InvalidPassList, PassSetError
from llm_compiler.passes.pipeline import PassList, PassNode, parse_pipeline
from llm_compiler.passes.registry import PassRegistry
from llm_compiler.passes.searchable import PassSet

#: The LLVM whose pass names LLM Compiler's models learned.
MODEL_LLVM = 17

#: Why plain instcombine is rewritten on LLVM >= 18.
INSTCOMBINE_REASON = (
    "LLVM >= 18 aborts when instcombine misses its fixpoint; the paper's LLVM 17 did not verify it "
    "(LLVM's own pipelines and the searchable set run instcombine<no-verify-fixpoint>)"
)
_VERIFY_OPTIONS = ("verify-fixpoint", "no-verify-fixpoint")
_ANALYSIS_USERS = ("require", "invalidate")


@dataclass(frozen=True)
class Change:
    """One rewritten element (plain pass) of a pass list.

    Attributes:
        old: The element as written, e.g. ``"flattencfg"`` or ``"instcombine"``.
        new: The element the installed ``opt`` runs instead.
        reason: Why, for the person reading the log (several reasons joined by "; ").
        index: The element's position among the list's plain passes (0-based).
    """

    old: str
    new: str
    reason: str
    index: int


@dataclass(frozen=True)
class Adapted:
    """A pass list adapted to the installed LLVM.

    Attributes:
        passes: The list to run (not yet checked by the pass-list gate).
        original: The list as written.
        changes: Every rewrite, in the list's order (empty when none was needed).
        source_llvm: The major version the list was written for.
        llvm_version: The installed LLVM's version.
    """

    passes: PassList
    original: PassList
    changes: tuple[Change, ...]
    source_llvm: int
    llvm_version: str

    @property
    def pipeline(self) -> str:
        """The exact text to give ``opt -passes=``."""
        return self.passes.pipeline

    def summary(self) -> tuple[str, ...]:
        """One line per distinct change, ``old -> new (xN): reason``, for logs and stderr."""
        counts = Counter((c.old, c.new, c.reason) for c in self.changes)
        return tuple(
            f"{old} -> {new}{f' (x{n})' if n > 1 else ''}: {reason}"
            for (old, new, reason), n in counts.items()
        )


@dataclass(frozen=True)
class Decision:
    """What to do with a name (or option) of the older version that the newer lacks.

    Attributes:
        action: ``"rename"`` (run ``new`` instead) or ``"reject"`` (no sound equivalent).
        new: The new name or option, for a rename.
        reason: Why, in words.
    """

    action: str
    new: str | None
    reason: str


@dataclass(frozen=True)
class VersionMap:
    """A shipped map from one LLVM major version's pass lists to a newer one's.

    Attributes:
        source_llvm: The older major version.
        target_llvm: The newer major version the map was derived against.
        passes: Decisions for transform pass names (or fixed spellings) by old name.
        analyses: Decisions for analysis names (inside ``require<>``/``invalidate<>``).
        options: Decisions for parameter options, by (pass name, old option).
        defaults: Options to add, by pass name: (option, skipped when this key is set, reason).
    """

    source_llvm: int
    target_llvm: int
    passes: MappingProxyType[str, Decision]
    analyses: MappingProxyType[str, Decision]
    options: MappingProxyType[tuple[str, str], Decision]
    defaults: MappingProxyType[str, tuple[str, str, str]]


def _decisions(section: dict[str, dict[str, str]]) -> dict[str, Decision]:
    return {old: Decision(d["action"], d.get("new"), d["reason"]) for old, d in section.items()}


@functools.lru_cache(maxsize=4)
def load_version_map(source_llvm: int) -> VersionMap:
    """The shipped map for lists written for LLVM ``source_llvm``.

    Raises:
        InvalidPassList: No map is shipped for that version.
    """
    data = resources.files("llm_compiler.passes") / "data"
    found = sorted(p.name for p in data.iterdir() if p.name.startswith(f"llvm-{source_llvm}-to-"))
    if not found:
        raise InvalidPassList(
            f"No pass-name map from LLVM {source_llvm} is shipped (maps exist for LLVM {MODEL_LLVM}); "
            "write the list for the installed LLVM instead."
        )
    raw = json.loads((data / found[-1]).read_text())
    options = {
        (name, option): decision
        for name, entries in raw.get("options", {}).items()
        for option, decision in _decisions(entries).items()
    }
    defaults = {name: (d["option"], d["unless"], d["reason"]) for name, d in raw.get("defaults", {}).items()}
    return VersionMap(
        source_llvm,
        int(raw["target"]["llvm"].split(".")[0]),
        MappingProxyType(_decisions(raw.get("passes", {}))),
        MappingProxyType(_decisions(raw.get("analyses", {}))),
        MappingProxyType(options),
        MappingProxyType(defaults),
    )


@dataclass(frozen=True)
class _Installed:
    """What the installed ``opt`` knows, from its registry."""

    version: str
    passes: frozenset[str]
    analyses: frozenset[str]
    registry: PassRegistry

    @classmethod
    def of(cls, pass_set: PassSet) -> _Installed:
        if pass_set.registry is None:
            raise PassSetError(
                "Adapting a pass list needs the installed opt's registry: use the pass set of a "
                "toolchain (Compiler.pass_set or load_pass_set(toolchain))."
            )
        names: dict[bool, set[str]] = {True: set(), False: set()}
        for entry in pass_set.registry.entries:
            names[entry.kind == "pass"].add(entry.spelling if entry.fixed_params else entry.name)
        return cls(pass_set.llvm_version, frozenset(names[True]), frozenset(names[False]), pass_set.registry)

    def options(self, name: str) -> frozenset[str]:
        return frozenset(self.registry.param_options(name))


def adapt_pass_list(passes: PassList, pass_set: PassSet, *, source_llvm: int = MODEL_LLVM) -> Adapted:
    """The list the installed LLVM runs for ``passes``, written for LLVM ``source_llvm``.

    Args:
        passes: The list as written (syntax already parsed, e.g. by ``parse_pipeline``).
        pass_set: The installed LLVM's pass set (``Compiler.pass_set``); its registry
            says which names the installed ``opt`` knows.
        source_llvm: The major version the list was written for: 17 for LLM Compiler's
            models, the installed major version for lists written by hand for it.

    Returns:
        The adapted list and every change made. Check it with the pass-list gate
        before running it.

    Raises:
        InvalidPassList: A pass (named in the error) was removed after ``source_llvm``
            with no sound equivalent, a renamed pass is unknown to the installed
            ``opt`` too, or no map from ``source_llvm`` is shipped.
    """
    text = str(passes)
    installed_major = int(pass_set.llvm_version.split(".")[0])
    if source_llvm > installed_major:
        raise InvalidPassList(
            f"A pass list written for LLVM {source_llvm} cannot be adapted to the older installed "
            f"LLVM {pass_set.llvm_version}; use LLVM >= {source_llvm} (--llvm-bin).",
            text=text,
        )
    version_map = load_version_map(source_llvm) if source_llvm < installed_major else None
    installed = _Installed.of(pass_set)
    rules: list[Callable[[PassNode], tuple[PassNode, str] | None]] = []
    if version_map is not None:
        rules.append(lambda n: _rename(n, version_map, installed, text))
    if "verify-fixpoint" in installed.options("instcombine"):  # LLVM >= 18
        rules.append(_no_verify_fixpoint)
        if version_map is not None:
            rules.append(lambda n: _add_default(n, version_map))
    changes: list[Change] = []
    counter = itertools.count()

    def adapt_leaf(leaf: PassNode) -> PassNode:
        index = next(counter)
        if version_map is None and installed_major > MODEL_LLVM:
            _hint_older_name(leaf, installed, text)
        new, reasons = leaf, []
        for rule in rules:
            result = rule(new)
            if result is not None:
                new = result[0]
                reasons.append(result[1])
        if reasons:
            changes.append(Change(str(leaf), str(new), "; ".join(reasons), index))
        return new

    adapted = PassList(_map_leaves(node, adapt_leaf) for node in passes)
    return Adapted(adapted, passes, tuple(changes), source_llvm, pass_set.llvm_version)


def adapt_user_pass_list(text: str, pass_set: PassSet, *, source_llvm: int | None = None) -> Adapted:
    """Parses a pass list from outside (a user, a file) and adapts it; see :func:`adapt_pass_list`.

    Args:
        text: ``opt -passes=`` text.
        pass_set: The installed LLVM's pass set.
        source_llvm: The major version the list was written for (default: the installed one,
            so that only the instcombine rule applies).

    Raises:
        InvalidPassList: Bad syntax, or see :func:`adapt_pass_list`.
    """
    source = int(pass_set.llvm_version.split(".")[0]) if source_llvm is None else source_llvm
    return adapt_pass_list(parse_pipeline(text), pass_set, source_llvm=source)


def _map_leaves(node: PassNode, adapt: Callable[[PassNode], PassNode]) -> PassNode:
    if node.children is None:
        return adapt(node)
    return PassNode(node.name, node.params, tuple(_map_leaves(child, adapt) for child in node.children))


def _options(node: PassNode) -> list[str]:
    return node.params.split(";") if node.params else []


def _rename(
    node: PassNode, vmap: VersionMap, installed: _Installed, text: str
) -> tuple[PassNode, str] | None:
    """The map's renames of one element: its name, its options, the analysis it requires."""
    name, options, reasons = node.name, _options(node), []
    decision = vmap.passes.get(name)
    if decision is not None and name not in installed.passes:
        if decision.action != "rename" or decision.new is None:
            raise _invalid(
                text,
                name,
                f"{name!r} is a pass of LLVM {vmap.source_llvm} that LLVM {installed.version} lacks: "
                f"{decision.reason}",
            )
        if decision.new not in installed.passes:
            raise _invalid(
                text,
                name,
                f"{name!r} of LLVM {vmap.source_llvm} is {decision.new!r} in LLVM {vmap.target_llvm}, "
                f"and opt {installed.version} knows neither",
            )
        name = decision.new
        reasons.append(decision.reason)
    for i, option in enumerate(options):
        if name in _ANALYSIS_USERS:
            decision, known = vmap.analyses.get(option), installed.analyses
        else:
            decision, known = vmap.options.get((name, option)), installed.options(name)
        if decision is not None and option not in known and decision.new in known:
            options[i] = str(decision.new)
            reasons.append(decision.reason)
    return (PassNode(name, ";".join(options) if options else None), "; ".join(reasons)) if reasons else None


def _no_verify_fixpoint(node: PassNode) -> tuple[PassNode, str] | None:
    options = _options(node)
    if node.name != "instcombine" or any(option in _VERIFY_OPTIONS for option in options):
        return None
    return PassNode(node.name, ";".join([*options, "no-verify-fixpoint"])), INSTCOMBINE_REASON


def _add_default(node: PassNode, vmap: VersionMap) -> tuple[PassNode, str] | None:
    if node.name not in vmap.defaults:
        return None
    option, unless, reason = vmap.defaults[node.name]
    options = _options(node)
    if any(o.partition("=")[0] == unless for o in options):
        return None
    return PassNode(node.name, ";".join([*options, option])), reason


def _hint_older_name(node: PassNode, installed: _Installed, text: str) -> None:
    """Names an LLVM 17 pass the installed opt knows under another name, before the gate
    calls it unknown."""
    if node.name in installed.registry:
        return
    decision = load_version_map(MODEL_LLVM).passes.get(node.name)
    if decision is not None and decision.action == "rename" and decision.new in installed.passes:
        raise _invalid(
            text,
            node.name,
            f"unknown pass {node.name!r}: it is LLVM {MODEL_LLVM}'s name for {decision.new!r}; write "
            f"{decision.new!r}, or say that the list is written for LLVM {MODEL_LLVM} (--passes-from-llvm "
            f"{MODEL_LLVM})",
        )


def _invalid(text: str, token: str, what: str) -> InvalidPassList:
    position = text.find(token)
    return InvalidPassList(
        f"Invalid pass list {text!r}: {what}.",
        text=text,
        token=token,
        position=position if position >= 0 else None,
    )
