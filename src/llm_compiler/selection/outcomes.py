"""The closed vocabulary of what becomes of a proposed pass list (in the manner of lit's result codes).

Every list any source proposes (a model's answer, the built-in predictor's ranking, a
search, a fixed list, a user's file) ends with exactly one :class:`Verdict`, and a unit
that keeps -Oz says which verdict stopped its best candidate. The labels are what
result records and reports store; ``is_failure`` says whether the list could not be used.
"""

from __future__ import annotations

import enum


class Verdict(enum.StrEnum):
    """What became of one proposed list, or why a unit kept -Oz."""

    VALIDATED = "validated"
    PARSE_ERROR = "parse-error"
    UNKNOWN_PASS = "unknown-pass"
    ALREADY_OPTIMAL = "model-says-optimal"
    COMPILE_FAILURE = "compile-failure"
    NOT_SMALLER = "not-smaller-than-oz"
    VALIDATION_FAILURE = "validation-failure"
    NONDETERMINISTIC = "nondeterministic"
    SAME_AS_REJECTED = "same-ir-as-rejected"
    NOT_CHECKED = "not-checked"
    OVER_BUDGET = "over-budget"

    @property
    def is_failure(self) -> bool:
        """Whether the list could not be used (everything but validated and not-checked)."""
        return self not in (Verdict.VALIDATED, Verdict.NOT_CHECKED)

    @classmethod
    def parse(cls, label: str) -> Verdict:
        """The verdict stored as ``label``, accepting the spellings older records used.

        Raises:
            ValueError: ``label`` names no verdict.
        """
        label = _OLD_LABELS.get(label, label)
        try:
            return cls(label)
        except ValueError:
            known = ", ".join(v.value for v in cls)
            raise ValueError(f"unknown verdict {label!r}; known: {known}") from None


#: Labels earlier versions wrote for the same outcomes.
_OLD_LABELS = {"compile-fail": "compile-failure", "parse-failure": "parse-error"}

#: The order in which a unit's fallback reason is chosen: the furthest stage any
#: candidate reached says most about why -Oz was kept.
FALLBACK_ORDER = (
    Verdict.NONDETERMINISTIC,
    Verdict.VALIDATION_FAILURE,
    Verdict.SAME_AS_REJECTED,
    Verdict.NOT_SMALLER,
    Verdict.COMPILE_FAILURE,
    Verdict.ALREADY_OPTIMAL,
    Verdict.UNKNOWN_PASS,
    Verdict.PARSE_ERROR,
)
