"""Search strategies by name, as ``tune --search`` names them.

* ``random`` - LLM Compiler's random search (:mod:`llm_compiler.autotune.random_search`);
* ``local`` - local search from the best lists so far (:mod:`llm_compiler.autotune.local_search`);
* ``nevergrad`` or ``nevergrad:OPTIMIZER`` - a nevergrad optimizer
  (:mod:`llm_compiler.autotune.nevergrad_search`, the ``[search]`` extra).

:data:`DEFAULT_SEARCH` is the default of this layer, chosen by measurement on the
corpus's train split (docs/benchmarks.md). ``tune``'s default starts it from the
built-in predictor's lists (``predicted``, :mod:`llm_compiler.predictor.search`, a layer
above, which reads every search name).
"""

from __future__ import annotations

from llm_compiler.autotune.local_search import LocalSearch
from llm_compiler.autotune.nevergrad_search import NevergradSearch
from llm_compiler.autotune.proposer import Proposer
from llm_compiler.autotune.random_search import RandomSearch
from llm_compiler.errors import InvalidInput
from llm_compiler.passes.sampling import MAX_LIST_LENGTH

#: The names ``--search`` accepts (``nevergrad`` also as ``nevergrad:OPTIMIZER``).
SEARCH_NAMES = ("random", "local", "nevergrad")

#: The default search.
DEFAULT_SEARCH = "local"


def make_proposer(name: str, seed: int = 0, max_length: int = MAX_LIST_LENGTH) -> Proposer:
    """The proposer a search name stands for.

    Raises:
        InvalidInput: An unknown name.
    """
    kind, _, argument = name.partition(":")
    if kind == "random" and not argument:
        return RandomSearch(seed, max_length)
    if kind == "local" and not argument:
        return LocalSearch(seed, max_length)
    if kind == "nevergrad":
        return (
            NevergradSearch(seed, argument, max_length)
            if argument
            else NevergradSearch(seed, max_length=max_length)
        )
    raise InvalidInput(f"Unknown search {name!r}: use random, local, nevergrad or nevergrad:OPTIMIZER.")
