"""Where a translation unit's pass list comes from: tuned results, a predictor, or -Oz.

The driver asks a :class:`Chooser` for each unit it compiles. A chooser looks at the
unit's unoptimized IR (a :class:`~llm_compiler.core.program.Program`, whose id is the
hash of that IR) and returns a :class:`Choice`, the ``opt -passes=`` text and where it
came from, or None when it has nothing for this unit, so that the next chooser is
asked. :class:`FirstOf` chains choosers and ends with ``-Oz``:

* :class:`TunedResults` reads ``best.jsonl`` of ``llm-compiler tune --out DIR``: the
  list tune validated for exactly this IR, in the build's objective (origin ``tuned``);
  a record it may not use (not validated, another objective, per-function lists) is
  refused with its reason, in the unit's log line and once on standard error;
* :class:`OzOnly` always answers ``-Oz`` (origin ``oz``), for a baseline build;
* a predictor (origin ``predicted``) is one more class with a ``choose`` method.

Whatever a chooser says, the driver keeps the object only when it is no larger than
``-Oz``'s, so a chooser cannot make a unit bigger; it can only fail to make it smaller.

Example::

    chooser = FirstOf(TunedResults(Path("tuned")))
    chooser.choose(program)   # Choice(pipeline=..., origin='tuned', ...) or -Oz
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

from llm_compiler.core.objective import DEFAULT_OBJECTIVE, Objective
from llm_compiler.core.program import OZ_PIPELINE, Program
from llm_compiler.errors import InvalidInput

if TYPE_CHECKING:
    from llm_compiler.selection import Selector

logger = logging.getLogger(__name__)

#: The file of ``llm-compiler tune --out DIR`` that :class:`TunedResults` reads.
BEST_FILE = "best.jsonl"


@dataclass(frozen=True)
class Choice:
    """The pass list chosen for one unit.

    Attributes:
        pipeline: The exact ``opt -passes=`` text.
        origin: ``"tuned"``, ``"predicted"`` or ``"oz"``.
        reason: Why this list (for the log).
        transient: A list checked for it was rejected by a timeout alone (a busy
            machine): the choice holds for this build only, and the driver caches
            neither it nor the unit's object.
    """

    pipeline: str
    origin: str  # "tuned" | "predicted" | "oz"
    reason: str = ""
    transient: bool = False


class Chooser(Protocol):
    """Picks a unit's pass list, or None to let the next chooser answer."""

    def choose(self, program: Program) -> Choice | None:
        """The list for ``program`` (its unoptimized IR), or None when this chooser has none."""
        ...


class OzOnly:
    """Always ``-Oz``: a build that never optimizes beyond it (``llm-compiler cc --oz``)."""

    def choose(self, program: Program) -> Choice:
        return Choice(OZ_PIPELINE, "oz", "--oz: never beyond -Oz")


class TunedResults:
    """The lists ``llm-compiler tune --out DIR`` found, by program id.

    A unit gets a tuned list only when tune ran on exactly its IR (the program id is
    the hash of the IR), finished it (status ``ok``), validated what it kept
    (``validated``: not a ``tune --no-validate`` run), in the build's objective, as one
    list for the whole unit (no ``function_lists``, which the driver does not build). A
    unit tune kept at ``-Oz`` gets ``-Oz``, still with origin ``tuned``. For any other
    record of the unit the chooser answers None, so the next chooser (or ``-Oz``)
    answers, and :meth:`refusal` says why: :class:`FirstOf` puts it in the unit's log
    line, and it is logged once per record as a warning (one line on standard error:
    ``llm-compiler cc: tuned list for UNIT not used: WHY``). Records written before
    tune recorded ``validated`` are refused: run tune again. Units tune did not see get
    None without a word. ``best.jsonl`` is read once, when the chooser is made.

    Args:
        directory: The ``--out`` folder of a tune run.
        objective: The build's objective (``binary-size`` or ``text-size``): a record
            of another is refused, its sizes being in another unit.
        warn: Where a refusal's line goes (default: this module's logger, as a warning).

    Raises:
        InvalidInput: ``directory`` has no readable ``best.jsonl``.
    """

    def __init__(
        self,
        directory: Path,
        objective: Objective = DEFAULT_OBJECTIVE,
        warn: Callable[[str], None] | None = None,
    ) -> None:
        self.directory = directory
        self.objective = objective
        self.results = _read_best(directory / BEST_FILE)
        self.warn = warn or logger.warning
        self._warned: set[str] = set()

    def refusal(self, program: Program) -> str | None:
        """Why the record of ``program`` may not be used (None: it may, or there is none)."""
        record = self.results.get(program.id)
        if record is None:
            return None
        why = _unusable(record, self.objective)
        if why is None:
            return None
        unit = record.get("program") or program.name
        return f"tuned list for {unit} ({self.directory / BEST_FILE}) not used: {why}"

    def choose(self, program: Program) -> Choice | None:
        record = self.results.get(program.id)
        if record is None:
            return None
        refusal = self.refusal(program)
        if refusal is not None:
            if program.id not in self._warned:
                self._warned.add(program.id)
                self.warn(refusal)
            return None
        pipeline = str(record.get("best_pipeline") or OZ_PIPELINE)
        objective = Objective.parse(str(record.get("objective") or DEFAULT_OBJECTIVE.value))
        verdict = record.get("verdict") or "validated"
        reason = (
            f"tuned in {self.directory}: {record.get('best_size')} {objective.unit} vs "
            f"-Oz {record.get('oz_size')} (llc, {objective.value}), {verdict}: "
            f"{record.get('validation') or 'no detail'}"
        )
        return Choice(pipeline, "tuned", reason)


def _unusable(record: dict[str, Any], objective: Objective) -> str | None:
    """Why a tune record may not build a unit of a build in ``objective`` (None: it may)."""
    if record.get("status") != "ok":
        detail = str(record.get("detail") or "")[:200]
        return f"tune did not finish this unit (status {record.get('status')}{': ' * bool(detail)}{detail})"
    if "validated" not in record:
        return (
            "the record predates validation records (it has no 'validated' field); "
            "run llm-compiler tune again"
        )
    if record.get("validated") is not True:
        return "it was not validated (tune --no-validate); run tune without --no-validate"
    # Here, not at the top: the selection layer's package loads the compiler and the
    # gate, which a cache hit of `cc` (that imports this module) does not need.
    from llm_compiler.selection.outcomes import Verdict

    pipeline = str(record.get("best_pipeline") or OZ_PIPELINE)
    verdict = str(record.get("verdict") or "")
    if pipeline != OZ_PIPELINE and verdict != Verdict.VALIDATED.value:
        return f"its verdict is {verdict or 'missing'}, not validated; run tune again"
    recorded = str(record.get("objective") or DEFAULT_OBJECTIVE.value)
    if recorded != objective.value:
        unit = Objective(recorded).unit if recorded in set(Objective) else "units"
        sizes = f"{record.get('best_size')} {unit} against -Oz's {record.get('oz_size')}"
        return (
            f"it was tuned for {recorded} ({sizes}) and this build compares {objective.value}; "
            f"run tune --objective {objective.value}"
        )
    if record.get("function_lists"):
        return (
            "it keeps per-function lists (tune --per-function), which cc does not build; "
            "run tune without --per-function"
        )
    return None


def _read_best(path: Path) -> dict[str, dict[str, Any]]:
    try:
        lines = path.read_text().splitlines()
    except OSError as error:
        raise InvalidInput(
            f"{path}: cannot read tuned results ({error.strerror or error}). --results names the "
            "--out folder of `llm-compiler tune` (it holds best.jsonl)."
        ) from error
    results: dict[str, dict[str, Any]] = {}
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise InvalidInput(f"{path}:{number}: not a JSON line ({error.msg}).") from error
        if not isinstance(record, dict) or "program_id" not in record:
            raise InvalidInput(f"{path}:{number}: not a tune result (no program_id).")
        results.setdefault(str(record["program_id"]), record)
    return results


class FirstOf:
    """Asks choosers in turn; the first that answers wins, else ``-Oz``.

    An error of a chooser is not caught here: the driver falls back to ``clang -Oz``
    for that unit and logs it.

    Example:
        >>> FirstOf().choose(Program(name="p", ir="")).origin
        'oz'
    """

    def __init__(self, *choosers: Chooser) -> None:
        self.choosers = choosers

    def choose(self, program: Program) -> Choice:
        """The first chooser's answer, else -Oz; the refusals of the choosers before it
        (:meth:`TunedResults.refusal`) lead its reason."""
        refused: list[str] = []
        for chooser in self.choosers:
            choice = chooser.choose(program)
            if choice is not None:
                break
            refusal = getattr(chooser, "refusal", None)
            why = refusal(program) if refusal is not None else None
            if why:
                refused.append(why)
        else:
            choice = Choice(OZ_PIPELINE, "oz", "no chooser had a list for this unit")
        if not refused:
            return choice
        return replace(choice, reason="; ".join([*refused, choice.reason]))

    @property
    def confirmer(self) -> Selector | None:
        """The selection layer of the first chooser that has one (it checks objects the
        driver makes otherwise, :mod:`llm_compiler.driver.frames`); None if none has."""
        for chooser in self.choosers:
            selector = getattr(chooser, "confirmer", None)
            if selector is not None:
                return cast("Selector", selector)
        return None

    def confirm(self, program: Program, choice: Choice, basis: str) -> Choice:
        """``choice``, made for another form of the unit (``basis`` says which), measured
        and validated for ``program`` by the first chooser that can (else -Oz)."""
        for chooser in self.choosers:
            confirm = getattr(chooser, "confirm", None)
            if confirm is not None:
                return cast(Choice, confirm(program, choice, basis))
        return Choice(OZ_PIPELINE, "oz", f"no chooser could check the list chosen for {basis}")
