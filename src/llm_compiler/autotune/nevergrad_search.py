"""Black-box search with nevergrad's optimizers (``pip install 'llm-compiler[search]'``).

A pass list of at most ``max_length`` passes is encoded as a vector of
``max_length`` numbers in [0, 1]: a slot below ``empty_share`` holds no pass,
otherwise it selects a pass of the searchable set by where it falls in the rest of
the interval. Any nevergrad optimizer works on that vector (default:
``DiscreteLenglerOnePlusOne``, a (1+1) evolution strategy with a mutation rate that
adapts to success, strong on discrete problems); its loss is the size relative to
-Oz (a list that fails to compile scores 10).

The optimizer lives for one program's search in one job (the proposer is adaptive,
see :mod:`llm_compiler.selection.proposer`): it first hears the lists measured before
(the -Oz baseline, extra lists), then asks and is told batch by batch. It is seeded
from (seed, program id), so a re-run of the job proposes the same lists.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from llm_compiler.core.program import OZ_PIPELINE, Program
from llm_compiler.errors import LlmCompilerError
from llm_compiler.passes.pipeline import PassList, parse_pipeline
from llm_compiler.passes.sampling import MAX_LIST_LENGTH
from llm_compiler.selection.proposer import Evaluated, ProposalRequest, Proposer

#: The loss of a list that did not compile.
FAILURE_LOSS = 10.0


class _Session:
    """One program's optimizer and the candidates it is waiting to hear about."""

    def __init__(self, optimizer: Any, members: Sequence[str], empty_share: float) -> None:
        self.optimizer = optimizer
        self.members = list(members)
        self.index = {member: position for position, member in enumerate(members)}
        self.empty_share = empty_share
        self.pending: dict[str, list[Any]] = {}
        self.losses: dict[str, float] = {}
        self.oz_size: int | None = None

    def decode(self, vector: Sequence[float]) -> str:
        width = (1.0 - self.empty_share) / len(self.members)
        chosen = [
            self.members[min(len(self.members) - 1, int((value - self.empty_share) / width))]
            for value in vector
            if value >= self.empty_share
        ]
        return ",".join(chosen)

    def encode(self, pipeline: str, length: int) -> list[float] | None:
        nodes = [str(node) for node in parse_pipeline(pipeline)]
        if len(nodes) > length or any(node not in self.index for node in nodes):
            return None
        width = (1.0 - self.empty_share) / len(self.members)
        values = [self.empty_share + (self.index[node] + 0.5) * width for node in nodes]
        return values + [self.empty_share / 2] * (length - len(values))

    def loss(self, item: Evaluated) -> float:
        if not item.ok or item.size is None:
            return FAILURE_LOSS
        return item.size / self.oz_size if self.oz_size else float(item.size)


@dataclass(frozen=True)
class NevergradSearch(Proposer):
    """Pass lists proposed by a nevergrad optimizer (module docstring).

    Args:
        seed: The run's seed.
        optimizer: The name of a nevergrad optimizer (``nevergrad.optimizers.registry``).
        max_length: The longest list.
        empty_share: The share of each slot's range that means "no pass" (0.5 gives
            lists of ``max_length / 2`` passes on average, as random search's).
    """

    seed: int = 0
    optimizer: str = "DiscreteLenglerOnePlusOne"
    max_length: int = MAX_LIST_LENGTH
    empty_share: float = 0.5
    name: str = field(default="nevergrad", init=False)
    _sessions: dict[str, _Session] = field(default_factory=dict, init=False, compare=False, repr=False)
    adaptive: ClassVar[bool] = True
    batch_size: ClassVar[int] = 10

    def _start(self, request: ProposalRequest, budget: int) -> _Session:
        try:
            import nevergrad as ng
        except ImportError as error:
            raise LlmCompilerError(
                "The nevergrad proposer needs nevergrad: pip install 'llm-compiler[search]'."
            ) from error
        if self.optimizer not in ng.optimizers.registry:
            raise LlmCompilerError(f"nevergrad has no optimizer named {self.optimizer!r}.")
        parametrization = ng.p.Array(shape=(self.max_length,), lower=0.0, upper=1.0)
        digest = hashlib.sha256(f"{self.seed}:{request.program.id}".encode()).digest()
        parametrization.random_state.seed(int.from_bytes(digest[:4], "little"))
        optimizer = ng.optimizers.registry[self.optimizer](parametrization=parametrization, budget=budget)
        members = [str(member) for member in request.pass_set.member_lists]
        session = _Session(optimizer, members, self.empty_share)
        for item in request.history:
            if item.pipeline == OZ_PIPELINE and item.ok:
                session.oz_size = item.size
        for item in request.history:
            vector = session.encode(item.pipeline, self.max_length)
            if vector is not None:
                candidate = optimizer.parametrization.spawn_child(new_value=vector)
                optimizer.tell(candidate, session.loss(item))
            session.losses[item.pipeline] = session.loss(item)
        return session

    def ask(self, request: ProposalRequest) -> list[PassList]:
        session = self._sessions.get(request.program.id)
        if session is None or request.start == 0 or not request.history:
            session = self._sessions[request.program.id] = self._start(request, 10 * request.count + 1000)
        lists: list[PassList] = []
        for _ in range(request.count):
            for _attempt in range(20):
                candidate = session.optimizer.ask()
                pipeline = session.decode(candidate.value) or session.members[0]
                if pipeline in session.losses or pipeline in session.pending:
                    # Measured already: tell what it scored and ask again.
                    known = session.losses.get(pipeline, FAILURE_LOSS)
                    session.optimizer.tell(candidate, known)
                    continue
                session.pending.setdefault(pipeline, []).append(candidate)
                lists.append(PassList(parse_pipeline(pipeline)))
                break
        return lists

    def tell(self, program: Program, outcomes: Sequence[Evaluated]) -> None:
        session = self._sessions.get(program.id)
        if session is None:
            return
        for item in outcomes:
            loss = session.loss(item)
            session.losses[item.pipeline] = loss
            for candidate in session.pending.pop(item.pipeline, []):
                session.optimizer.tell(candidate, loss)

    def identity(self) -> dict[str, Any]:
        return {
            "proposer": type(self).__qualname__,
            "seed": self.seed,
            "optimizer": self.optimizer,
            "max_length": self.max_length,
            "empty_share": self.empty_share,
        }
