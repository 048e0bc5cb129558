"""The searches as sources of lists: the factories the registry names.

* ``random`` - LLM Compiler's random search (:mod:`llm_compiler.autotune.random_search`);
* ``local`` - local search from the best lists so far (:mod:`llm_compiler.autotune.local_search`);
* ``nevergrad`` or ``nevergrad:OPTIMIZER`` - a nevergrad optimizer
  (:mod:`llm_compiler.autotune.nevergrad_search`, the ``[search]`` extra).

Each is made from a spec by :func:`llm_compiler.selection.registry.make_proposer`.
:data:`DEFAULT_SEARCH` is the default of this layer, chosen by measurement on the
corpus's train split (docs/benchmarks.md). ``tune``'s default starts it from the
built-in predictor's lists (``builtin``, :mod:`llm_compiler.predictor.proposer`).
"""

from __future__ import annotations

from llm_compiler.autotune.local_search import LocalSearch
from llm_compiler.autotune.nevergrad_search import NevergradSearch
from llm_compiler.autotune.random_search import RandomSearch
from llm_compiler.errors import InvalidInput
from llm_compiler.selection.proposer import Proposer
from llm_compiler.selection.registry import ProposerContext, Spec

#: The default search of this layer (made by :func:`default_search`).
DEFAULT_SEARCH = "local"


def default_search(seed: int, max_length: int) -> Proposer:
    """The search :data:`DEFAULT_SEARCH` names, for a run's seed and longest list."""
    return LocalSearch(seed, max_length)


def _no_argument(spec: Spec, context: ProposerContext) -> None:
    """A search takes no argument; in the ``first`` role a number (k) is accepted."""
    spec.refuse_options("k")
    if spec.argument and not (context.role == "first" and spec.argument.isdigit()):
        raise InvalidInput(
            f"{spec.text!r}: {spec.kind} takes no argument (in optimize and evaluate: {spec.kind}:N)."
        )


def random_search(spec: Spec, context: ProposerContext) -> Proposer:
    """``random``: LLM Compiler's random search."""
    _no_argument(spec, context)
    return RandomSearch(context.seed, context.max_length)


def local_search(spec: Spec, context: ProposerContext) -> Proposer:
    """``local``: local search from the best lists so far."""
    _no_argument(spec, context)
    return LocalSearch(context.seed, context.max_length)


def nevergrad_search(spec: Spec, context: ProposerContext) -> Proposer:
    """``nevergrad[:OPTIMIZER]``: a nevergrad optimizer (default: its own default)."""
    spec.refuse_options("k")
    if spec.argument:
        return NevergradSearch(context.seed, spec.argument, context.max_length)
    return NevergradSearch(context.seed, max_length=context.max_length)
