"""Search spaces: the paper's flat list of passes, and richer ones derived by rule.

LLM Compiler searched flat lists of fully wrapped passes at their default parameters.
What ``opt`` can run is larger, and the default pipelines themselves use it: they run
``simplifycfg`` in five spellings, ``sroa<modify-cfg>`` and ``sroa<preserve-cfg>``,
``loop-rotate<no-header-duplication>``, and they interleave inlining with function
simplification inside ``cgscc(...)`` groups. A *space* says what a search may write:

* ``paper``: the searchable set as it is (:mod:`llm_compiler.passes.searchable`), flat;
* ``params``: the same passes plus **parameter variants**, derived by three rules from
  ``opt`` itself and kept only if ``opt`` runs them on the bundled sample program:

  1. every spelling the default pipelines use (``opt -passes=default<Ox>
     -print-pipeline-passes`` for O2, O3, Os and Oz), with the options
     ``--print-passes`` does not list dropped (those are their defaults);
  2. every enum or flag option ``--print-passes`` lists for a searchable pass, one at a
     time, added to the member's own parameters (``instcombine`` keeps
     ``no-verify-fixpoint``; an option replaces its ``no-`` opposite);
  3. numeric options at the few values listed in :data:`NUMERIC_VALUES`;

  options that make ``opt`` abort rather than optimize (:data:`REFUSED_OPTIONS`) are
  never used. A variant is written like its member (``function(sroa<preserve-cfg>)``),
  so any sequence of members is still a valid pipeline;
* ``nested``: the paper's members, and searches may **group** neighbouring elements
  into one pass manager (``function(sroa),function(gvn)`` -> ``function(sroa,gvn)``,
  which runs both on each function before the next; ``cgscc(inline),function(x)`` ->
  ``cgscc(inline,function(x))``, which simplifies each SCC right after inlining into it,
  as the default pipelines do) and ungroup them again
  (:mod:`llm_compiler.autotune.local_search`);
* ``rich``: both.

The gate (:class:`~llm_compiler.passes.searchable.PassSet`) checks every list of every
space the same way, and validation checks every kept list whatever space found it.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import tempfile
from dataclasses import replace
from pathlib import Path

from llm_compiler.errors import InvalidInput
from llm_compiler.files import atomic_write_text, cache_dir
from llm_compiler.passes.pipeline import PassList, PassNode
from llm_compiler.passes.searchable import PassSet, compile_sample, probe_pipeline
from llm_compiler.toolchain.llvm import Toolchain
from llm_compiler.toolchain.runner import run_command

logger = logging.getLogger(__name__)

#: The spaces, in order of size.
SPACES = ("paper", "params", "nested", "rich")

#: The space searches use unless told otherwise.
DEFAULT_SPACE = "paper"

#: Values tried for numeric options (rule 3); other numeric options are not searched.
NUMERIC_VALUES = {"bonus-inst-threshold": (0, 2, 4)}

#: Options that make opt abort instead of optimizing.
REFUSED_OPTIONS = frozenset({"verify-fixpoint"})

#: The default pipelines whose spellings rule 1 takes.
_PIPELINES = ("O2", "O3", "Os", "Oz")


def has_parameters(space: str) -> bool:
    """Whether ``space`` holds parameter variants."""
    return space in ("params", "rich")


def has_groups(space: str) -> bool:
    """Whether searches in ``space`` may group elements into nested pipelines."""
    return space in ("nested", "rich")


def check_space(space: str) -> str:
    """``space`` when it names a space.

    Raises:
        InvalidInput: It does not.
    """
    if space not in SPACES:
        raise InvalidInput(f"--space must be one of {', '.join(SPACES)}, not {space!r}.")
    return space


def _options(params: str | None) -> list[str]:
    return [option for option in (params or "").split(";") if option]


def _key(option: str) -> str:
    return option.partition("=")[0].removeprefix("no-")


def _with_option(params: str | None, option: str) -> str:
    """``params`` with ``option`` added, replacing an option of the same key."""
    kept = [existing for existing in _options(params) if _key(existing) != _key(option)]
    return ";".join([*kept, option])


def _rewrap(member: PassList, leaf_params: str) -> str:
    """``member`` (one fully wrapped pass) with its innermost pass's parameters replaced."""

    def rewrite(node: PassNode) -> PassNode:
        if node.children is None:
            return PassNode(node.name, leaf_params or None)
        return PassNode(node.name, node.params, tuple(rewrite(child) for child in node.children))

    return str(PassList([rewrite(member[0])]))


def _pipeline_spellings(toolchain: Toolchain) -> dict[str, set[str]]:
    """Rule 1: each pass's parameter spellings in the default pipelines."""
    spellings: dict[str, set[str]] = {}
    with tempfile.TemporaryDirectory(prefix="llm-compiler-space-") as scratch:
        empty = Path(scratch) / "empty.ll"
        empty.write_text("define void @f() {\n  ret void\n}\n")
        for level in _PIPELINES:
            text = run_command(
                [
                    toolchain.tool("opt"),
                    f"-passes=default<{level}>",
                    "-print-pipeline-passes",
                    "-disable-output",
                    empty,
                ],
                timeout=60,
            ).stdout_text.strip()
            for piece in text.replace("(", ",").replace(")", ",").split(","):
                name, _, rest = piece.partition("<")
                if rest.endswith(">") and name:
                    spellings.setdefault(name, set()).add(rest[:-1])
    return spellings


def derive_variants(pass_set: PassSet, toolchain: Toolchain) -> list[str]:
    """The parameter variants of ``pass_set``'s members by the three rules (not yet probed)."""
    registry = pass_set.registry
    if registry is None:
        return []
    from_pipelines = _pipeline_spellings(toolchain)
    variants: list[str] = []
    for member in pass_set.member_lists:
        leaves = list(member.leaves())
        if len(leaves) != 1 or (member[0].name == "module" and leaves[0].name == "default"):
            continue
        leaf = leaves[0]
        options = {option for option in registry.param_options(leaf.name) if option not in REFUSED_OPTIONS}
        if not options:
            continue
        wanted: list[str] = []
        for spelling in sorted(from_pipelines.get(leaf.name, ())):
            known = [option for option in _options(spelling) if _known(option, options)]
            params = leaf.params
            for option in known:
                params = _with_option(params, option)
            wanted.append(params or "")
        for option in sorted(options):
            key, equals, _ = option.partition("=")
            if equals:
                wanted += [
                    _with_option(leaf.params, f"{key}={value}") for value in NUMERIC_VALUES.get(key, ())
                ]
            else:
                wanted.append(_with_option(leaf.params, option))
        for params in wanted:
            text = _rewrap(member, params)
            if text not in pass_set.members and text not in variants:
                variants.append(text)
    return variants


def _known(option: str, options: set[str]) -> bool:
    key, equals, value = option.partition("=")
    return (option in options and not equals) or (bool(equals) and f"{key}=N" in options and value.isdigit())


@functools.lru_cache(maxsize=16)
def probed_variants(pass_set: PassSet, toolchain: Toolchain) -> tuple[str, ...]:
    """The variants ``opt`` runs on the bundled sample program, derived once per LLVM
    version and set and cached on disk (a few seconds of probing)."""
    digest = hashlib.sha256("\n".join(pass_set.members).encode()).hexdigest()[:12]
    cached = cache_dir("passes") / f"llvm-{toolchain.version}-variants-{digest}.txt"
    if cached.is_file():
        return tuple(line for line in cached.read_text().splitlines() if line)
    kept = []
    with tempfile.TemporaryDirectory(prefix="llm-compiler-probe-") as scratch:
        sample = compile_sample(toolchain, Path(scratch))
        for variant in derive_variants(pass_set, toolchain):
            failure = probe_pipeline(toolchain, variant, sample, 60.0)
            if failure is None:
                kept.append(variant)
            else:
                logger.info("parameter variant %s left out: %s", variant, failure)
    atomic_write_text(cached, "".join(f"{variant}\n" for variant in kept))
    return tuple(kept)


def widen(pass_set: PassSet, toolchain: Toolchain, space: str) -> PassSet:
    """``pass_set`` as the search space ``space`` (module docstring).

    Raises:
        InvalidInput: ``space`` names no space.
    """
    check_space(space)
    members = pass_set.members
    if has_parameters(space):
        members = members + probed_variants(pass_set, toolchain)
    return replace(pass_set, members=members, space=space)


def variants_of(pass_set: PassSet) -> dict[str, tuple[PassList, ...]]:
    """Members by their innermost pass's name: the spellings a search may swap for each other."""
    found: dict[str, list[PassList]] = {}
    for member in pass_set.member_lists:
        leaves = list(member.leaves())
        if len(leaves) == 1:
            found.setdefault(leaves[0].name, []).append(member)
    return {name: tuple(lists) for name, lists in found.items() if len(lists) > 1}


__all__ = [
    "DEFAULT_SPACE",
    "SPACES",
    "check_space",
    "derive_variants",
    "has_groups",
    "has_parameters",
    "probed_variants",
    "variants_of",
    "widen",
]
