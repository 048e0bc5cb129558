"""The closed vocabulary of validation outcomes (in the manner of LLVM lit's result codes)."""

from __future__ import annotations

import enum


class Outcome(enum.Enum):
    """What happened when a pass list was checked on one program.

    Each outcome knows whether it is a failure; UNSUPPORTED (the program cannot be
    run, e.g. it has no ``main``) is not a failure but proves nothing either.
    """

    PASS = ("pass", False)
    COMPILE_FAIL = ("compile-fail", True)
    LINK_FAIL = ("link-fail", True)
    RUNTIME_FAIL = ("runtime-fail", True)
    OUTPUT_MISMATCH = ("output-mismatch", True)
    TIMEOUT = ("timeout", True)
    UNSUPPORTED = ("unsupported", False)

    def __init__(self, label: str, is_failure: bool) -> None:
        self.label = label
        self.is_failure = is_failure

    def __str__(self) -> str:
        return self.label

    @classmethod
    def from_label(cls, label: str) -> Outcome:
        """The outcome printed as ``label`` (``"link-fail"``...)."""
        for outcome in cls:
            if outcome.label == label:
                return outcome
        raise ValueError(f"unknown outcome {label!r}")
