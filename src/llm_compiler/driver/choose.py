"""Where a translation unit's pass list comes from: tuned results, a predictor, or -Oz.

The driver asks a :class:`Chooser` for each unit it compiles. A chooser looks at the
unit's unoptimized IR (a :class:`~llm_compiler.core.program.Program`, whose id is the
hash of that IR) and returns a :class:`Choice`, the ``opt -passes=`` text and where it
came from, or None when it has nothing for this unit, so that the next chooser is
asked. :class:`FirstOf` chains choosers and ends with ``-Oz``:

* :class:`TunedResults` reads ``best.jsonl`` of ``llm-compiler tune --out DIR``: the
  list tune validated for exactly this IR (origin ``tuned``);
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
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, cast

from llm_compiler.core.program import OZ_PIPELINE, Program
from llm_compiler.errors import InvalidInput

#: The file of ``llm-compiler tune --out DIR`` that :class:`TunedResults` reads.
BEST_FILE = "best.jsonl"


@dataclass(frozen=True)
class Choice:
    """The pass list chosen for one unit.

    Attributes:
        pipeline: The exact ``opt -passes=`` text.
        origin: ``"tuned"``, ``"predicted"`` or ``"oz"``.
        reason: Why this list (for the log).
    """

    pipeline: str
    origin: str  # "tuned" | "predicted" | "oz"
    reason: str = ""


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
    the hash of the IR) and finished it (status ``ok``); the list was validated there.
    A unit tune kept at ``-Oz`` gets ``-Oz``, still with origin ``tuned``. Other units
    get None. ``best.jsonl`` is read once, when the chooser is made.

    Args:
        directory: The ``--out`` folder of a tune run.

    Raises:
        InvalidInput: ``directory`` has no readable ``best.jsonl``.
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.results = _read_best(directory / BEST_FILE)

    def choose(self, program: Program) -> Choice | None:
        record = self.results.get(program.id)
        if record is None or record.get("status") != "ok":
            return None
        pipeline = str(record.get("best_pipeline") or OZ_PIPELINE)
        reason = (
            f"tuned in {self.directory}: {record.get('best_size')} bytes vs "
            f"-Oz {record.get('oz_size')} (llc), validation: {record.get('validation') or 'none'}"
        )
        return Choice(pipeline, "tuned", reason)


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
        for chooser in self.choosers:
            choice = chooser.choose(program)
            if choice is not None:
                return choice
        return Choice(OZ_PIPELINE, "oz", "no chooser had a list for this unit")

    def confirm(self, program: Program, choice: Choice, basis: str) -> Choice:
        """``choice``, made for another form of the unit (``basis`` says which), measured
        and validated for ``program`` by the first chooser that can (else -Oz)."""
        for chooser in self.choosers:
            confirm = getattr(chooser, "confirm", None)
            if confirm is not None:
                return cast(Choice, confirm(program, choice, basis))
        return Choice(OZ_PIPELINE, "oz", f"no chooser could check the list chosen for {basis}")
