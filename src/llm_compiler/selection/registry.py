"""Every source of pass lists by name: one spec grammar, one registry.

A spec is ``kind[:argument][,key=value...]``: ``random``, ``local``, ``nevergrad:OnePlusOne``,
``builtin``, ``builtin:PATH,k=5``, ``common:10``. The argument may itself hold commas
and ``=`` inside brackets (a pipeline); only trailing ``key=value`` items outside
brackets are options. ``tune --search``, ``optimize --model``, ``evaluate --system``
and ``cc --predictor`` all read specs here (models, ``hf:...``, ``gguf:...``, are the
model registry's, :mod:`llm_compiler.models.registry`).

:data:`PROPOSERS` maps each kind to the factory that makes it, as ``module:function``
text, imported only when the kind is used (so this layer stays below the searches, the
predictor and the models it names). A new source of lists is one file with a factory
and one line here; a proposer outside the package is added without editing it through
``LLM_COMPILER_PROPOSERS="kind=module:function;..."``. A factory takes the parsed
:class:`Spec` and a :class:`ProposerContext` and returns a
:class:`~llm_compiler.selection.proposer.Proposer`; it raises
:class:`~llm_compiler.errors.InvalidInput` for settings it does not accept.

The built-in predictor is ``builtin`` everywhere: in ``optimize`` and ``evaluate`` its
first k lists, in ``tune`` its lists and then local search from them. ``predicted``
(the earlier name of the latter) still works and says the new name.
"""

from __future__ import annotations

import difflib
import importlib
import logging
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from llm_compiler.core.compiler import Compiler
from llm_compiler.errors import InvalidInput
from llm_compiler.passes.sampling import MAX_LIST_LENGTH
from llm_compiler.selection.proposer import Proposer

logger = logging.getLogger(__name__)

#: kind -> the factory that makes its proposer. One line per source of lists.
PROPOSERS: dict[str, str] = {
    "random": "llm_compiler.autotune.strategies:random_search",
    "local": "llm_compiler.autotune.strategies:local_search",
    "nevergrad": "llm_compiler.autotune.strategies:nevergrad_search",
    "builtin": "llm_compiler.predictor.proposer:builtin",
    "common": "llm_compiler.predictor.proposer:common",
}

#: Earlier spellings, and the kind each now is.
ALIASES: dict[str, str] = {"predicted": "builtin"}

#: Where proposers outside the package are named (``kind=module:function;...``).
PLUGINS_VARIABLE = "LLM_COMPILER_PROPOSERS"

#: How a proposer is used: ``search`` (``tune``: as many lists as the budget, told how
#: they did) or ``first`` (``optimize``, ``evaluate``, ``cc``: its first k lists).
ROLES = ("search", "first")

#: Lists measured per unit in the ``first`` role unless the spec says ``k=N``.
DEFAULT_K = 10

_OPTION = re.compile(r"^([a-z][a-z0-9_-]*)=([^()<>,]*)$")


@dataclass(frozen=True)
class Spec:
    """A parsed spec.

    Attributes:
        text: The spec as given.
        kind: What it names (aliases resolved).
        argument: The text after ``kind:`` less the options ("" when none).
        options: The trailing ``key=value`` items.
    """

    text: str
    kind: str
    argument: str = ""
    options: Mapping[str, str] = field(default_factory=dict)

    def number(self, key: str, default: int, minimum: int = 1) -> int:
        """Option ``key`` as a whole number (``default`` when absent).

        Raises:
            InvalidInput: The option is not a whole number >= ``minimum``.
        """
        value = self.options.get(key)
        if value is None:
            return default
        if not value.isdigit() or int(value) < minimum:
            raise InvalidInput(f"{self.text!r}: {key} must be a whole number >= {minimum} (got {value!r}).")
        return int(value)

    def refuse_options(self, *allowed: str) -> None:
        """Raises InvalidInput naming an option that is not in ``allowed``."""
        unknown = sorted(set(self.options) - set(allowed))
        if unknown:
            known = ", ".join(allowed) or "none"
            raise InvalidInput(
                f"{self.text!r}: unknown option {unknown[0]!r} for {self.kind} (options: {known})."
            )


@dataclass(frozen=True)
class ProposerContext:
    """What a factory may need besides the spec.

    Attributes:
        compiler: The compiler in use (its LLVM decides which ranker fits).
        role: ``search`` or ``first`` (:data:`ROLES`).
        seed: The run's seed.
        max_length: The longest list a search draws.
    """

    compiler: Compiler
    role: str = "first"
    seed: int = 0
    max_length: int = MAX_LIST_LENGTH


def first_count(spec: Spec) -> int:
    """How many lists the ``first`` role measures per unit at most: ``k=N`` (or ``max=N``,
    an adaptive proposer's most), or the number of ``random:N`` and ``common:N``
    (:data:`DEFAULT_K` when none is given).

    Raises:
        InvalidInput: A count that is not a whole number >= 1.
    """
    if spec.argument.isdigit():
        if int(spec.argument) < 1:
            raise InvalidInput(f"{spec.text!r}: the number of lists must be >= 1.")
        return int(spec.argument)
    if "k" in spec.options and "max" in spec.options:
        raise InvalidInput(
            f"{spec.text!r}: give k=N (a fixed number of lists) or max=N (at most N), not both."
        )
    return spec.number("k", spec.number("max", DEFAULT_K))


def _split_top_level(text: str) -> list[str]:
    """``text`` split at commas outside brackets."""
    parts, depth, start = [], 0, 0
    for index, char in enumerate(text):
        if char in "(<":
            depth += 1
        elif char in ")>":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:index])
            start = index + 1
    parts.append(text[start:])
    return parts


def parse_spec(text: str) -> Spec:
    """Reads ``kind[:argument][,key=value...]`` (module docstring); the kind is not looked up.

    Raises:
        InvalidInput: An empty spec, kind or argument, or a malformed option.

    Example:
        >>> parse_spec("builtin:ranker.json,k=3")
        Spec(text='builtin:ranker.json,k=3', kind='builtin', argument='ranker.json', options={'k': '3'})
    """
    head, colon, rest = text.strip().partition(":")
    kind, *head_options = _split_top_level(head)
    if not kind:
        raise InvalidInput(f"{text!r}: a spec starts with what it names, e.g. builtin, random or local.")
    if colon and not rest.strip():
        raise InvalidInput(f"{text!r}: nothing follows ':'; write {kind} alone or {kind}:ARGUMENT.")
    items = _split_top_level(rest) if colon else []
    options: dict[str, str] = {}
    for item in head_options:
        match = _OPTION.match(item)
        if match is None:
            raise InvalidInput(f"{text!r}: {item!r} is not a key=value option.")
        options[match.group(1)] = match.group(2)
    trailing = 0
    for item in reversed(items):
        match = _OPTION.match(item)
        if match is None:
            break
        options.setdefault(match.group(1), match.group(2))
        trailing += 1
    argument_items = items[: len(items) - trailing]
    return Spec(text, ALIASES.get(kind, kind), ",".join(argument_items), options)


def registered() -> dict[str, str]:
    """:data:`PROPOSERS` with the plugins of ``LLM_COMPILER_PROPOSERS``.

    Raises:
        InvalidInput: A malformed plugin entry.
    """
    kinds = dict(PROPOSERS)
    for entry in filter(None, (e.strip() for e in os.environ.get(PLUGINS_VARIABLE, "").split(";"))):
        kind, equals, target = entry.partition("=")
        if not equals or ":" not in target or not kind:
            raise InvalidInput(f"{PLUGINS_VARIABLE}: {entry!r} is not kind=module:function.")
        kinds[kind.strip()] = target.strip()
    return kinds


def is_proposer_spec(text: str) -> bool:
    """Whether ``text`` starts with a registered proposer's kind (an alias included): the
    spec is then this registry's to read, and to refuse with its reason when malformed."""
    kind = text.strip().partition(":")[0].partition(",")[0]
    return kind in registered() or kind in ALIASES


def check_spec(text: str) -> Spec:
    """Reads a spec of the ``first`` role and checks it without making its proposer: a
    known kind and a valid count, so a command refuses it before any work starts.

    Raises:
        InvalidInput: A malformed spec, an unknown kind (with the nearest names), or a
            count that is not a whole number >= 1.
    """
    spec = parse_spec(text)
    if spec.kind not in registered():
        raise unknown_kind(text)
    first_count(spec)
    return spec


def unknown_kind(text: str, others: tuple[str, ...] = (), what: str = "source of lists") -> InvalidInput:
    """The error for a spec whose kind nothing knows, with the nearest names.

    Args:
        text: The spec.
        others: Names the caller knows besides the proposers (fixed systems, models).
        what: What the spec was meant to name, for the message.
    """
    kind = text.partition(":")[0].partition(",")[0]
    names = sorted({*registered(), *ALIASES, *others})
    near = difflib.get_close_matches(kind, names, n=2, cutoff=0.6)
    hint = f" Did you mean {' or '.join(near)}?" if near else ""
    where = f" in {text!r}" if text != kind else ""
    return InvalidInput(f"Unknown {what} {kind!r}{where}.{hint} Known: {', '.join(names)}.")


def make_proposer(text: str, context: ProposerContext) -> tuple[Proposer, Spec]:
    """The proposer ``text`` names, made for ``context``, and its parsed spec.

    Raises:
        InvalidInput: An unknown kind (with the nearest names), a malformed spec, or a
            setting the proposer does not accept.
    """
    if context.role not in ROLES:
        raise ValueError(f"role must be one of {ROLES}, not {context.role!r}")
    spec = parse_spec(text)
    if spec.kind != text.partition(":")[0].partition(",")[0]:
        logger.warning("%r is now spelled %r; the old name still works.", text.partition(":")[0], spec.kind)
    target = registered().get(spec.kind)
    if target is None:
        raise unknown_kind(text)
    factory = _factory(target)
    proposer = factory(spec, context)
    if not isinstance(proposer, Proposer):
        raise InvalidInput(f"{target} made {type(proposer).__name__}, not a Proposer.")
    return proposer, spec


def _factory(target: str) -> Callable[[Spec, ProposerContext], Any]:
    module_name, _, function = target.partition(":")
    try:
        module = importlib.import_module(module_name)
        made = getattr(module, function)
    except (ImportError, AttributeError) as error:
        raise InvalidInput(f"The proposer factory {target} cannot be loaded: {error}") from error
    if not callable(made):
        raise InvalidInput(f"The proposer factory {target} is not a function.")
    return made  # type: ignore[no-any-return]
