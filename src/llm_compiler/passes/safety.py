"""Which searchable passes were seen to break programs, and the safe set search draws from.

Some passes of the searchable set break correct programs on their own with a given
LLVM (with LLVM 19: ``lower-invoke`` turns ``invoke`` into ``call`` so exceptions are
no longer caught; ``attributor`` miscompiles a recursive function). A random list of
25 passes holds one of them about half the time, and validation then throws the list
away. ``llm-compiler passes --audit`` finds them by running each pass alone and after
``default<Oz>`` on the bundled suites (:mod:`llm_compiler.validation.audit`) and
stores the result here, per LLVM version, with the evidence: the program, the
outcome and a command that replays it. ``passes --audit --space params`` does the same
for the parameter variants of the richer search spaces (:mod:`llm_compiler.passes.space`),
in a report of their own.

:func:`search_pass_set` is what the search draws from: by default the searchable set
without the passes seen to break a program (``"safe"``), or the paper's whole set
(``"full"``). Validation still checks every list either way, and a user's own list
may use any searchable pass.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from typing import Any

from llm_compiler.errors import InvalidInput
from llm_compiler.files import cache_dir
from llm_compiler.passes.searchable import Exclusion, PassSet, load_pass_set
from llm_compiler.passes.space import DEFAULT_SPACE, widen
from llm_compiler.toolchain.llvm import Toolchain

#: The choices of ``--pass-set``.
PASS_SET_CHOICES = ("safe", "full")

#: The exclusion rule of passes seen to break programs.
BREAKS_PROGRAMS = "breaks-programs"


@dataclass(frozen=True)
class Evidence:
    """One program a pass broke.

    Attributes:
        member: The pass, as written in the pass set.
        mode: ``"alone"`` or ``"after-oz"`` (``default<Oz>`` then the pass).
        program: The suite program (``suite/name``).
        outcome: The failing outcome (``runtime-fail``, ``output-mismatch``...).
        detail: What went wrong, shortened.
        command: A shell command that replays it.
    """

    member: str
    mode: str
    program: str
    outcome: str
    detail: str = ""
    command: str = ""


@dataclass(frozen=True)
class SafetyReport:
    """The result of an audit of one LLVM version's searchable set.

    Attributes:
        llvm_version: The LLVM version audited.
        suites: The suites used, name to version.
        checked: Every member audited.
        evidence: Failures other than link failures, per member (a member with any is
            unsafe).
        link_failures: Members whose only failures were link failures (kept: whether a
            link failure can happen depends on the target, which the gate checks).
    """

    llvm_version: str
    suites: dict[str, str]
    checked: tuple[str, ...]
    evidence: tuple[Evidence, ...] = ()
    link_failures: tuple[Evidence, ...] = ()

    @property
    def unsafe(self) -> tuple[str, ...]:
        """Members seen to break a program, in pass-set order."""
        broken = {item.member for item in self.evidence}
        return tuple(member for member in self.checked if member in broken)

    def evidence_for(self, member: str) -> tuple[Evidence, ...]:
        return tuple(item for item in self.evidence if item.member == member)

    def to_json(self) -> dict[str, Any]:
        return {
            "llvm_version": self.llvm_version,
            "suites": self.suites,
            "checked": list(self.checked),
            "unsafe": list(self.unsafe),
            "evidence": [vars(item) for item in self.evidence],
            # Only who and where: the gate's own linkage check decides link failures.
            "link_failures": [
                {"member": i.member, "mode": i.mode, "program": i.program, "outcome": i.outcome}
                for i in self.link_failures
            ],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SafetyReport:
        """Reads what :meth:`to_json` wrote.

        Raises:
            InvalidInput: A field is missing.
        """
        try:
            return cls(
                llvm_version=data["llvm_version"],
                suites=dict(data["suites"]),
                checked=tuple(data["checked"]),
                evidence=tuple(Evidence(**item) for item in data["evidence"]),
                link_failures=tuple(Evidence(**item) for item in data.get("link_failures", [])),
            )
        except (KeyError, TypeError) as error:
            raise InvalidInput(f"Not a pass-safety file: {error}") from error


def data_file(major: int) -> Path:
    """Where the bundled audit for LLVM ``major`` lives (it may not exist)."""
    return Path(str(resources.files("llm_compiler.passes"))) / "data" / f"llvm-{major}-safety.json"


def cache_file(version: str) -> Path:
    """Where ``passes --audit`` writes an audit by default."""
    return cache_dir("passes") / f"llvm-{version}-safety.json"


def variants_data_file(major: int) -> Path:
    """Where the bundled audit of LLVM ``major``'s parameter variants lives (it may not exist)."""
    return data_file(major).with_name(f"llvm-{major}-variants-safety.json")


def variants_cache_file(version: str) -> Path:
    """Where ``passes --audit --space params`` writes an audit of the variants by default."""
    return cache_file(version).with_name(f"llvm-{version}-variants-safety.json")


def load_variant_safety(toolchain: Toolchain) -> SafetyReport | None:
    """The audit of the parameter variants (:mod:`llm_compiler.passes.space`) for
    ``toolchain``, found as :func:`load_safety` finds the set's."""
    return _load_report(
        variants_cache_file(toolchain.version), variants_data_file(toolchain.major), toolchain
    )


def load_safety(toolchain: Toolchain) -> SafetyReport | None:
    """The audit for ``toolchain``: one made on this machine for its exact version,
    else the bundled one for its major version, else None (never audited)."""
    return _load_report(cache_file(toolchain.version), data_file(toolchain.major), toolchain)


def _load_report(cached: Path, bundled: Path, toolchain: Toolchain) -> SafetyReport | None:
    for path in (cached, bundled):
        if path.is_file():
            report = SafetyReport.from_json(json.loads(path.read_text()))
            if report.llvm_version.split(".")[0] == str(toolchain.major):
                return report
    return None


def safe_subset(pass_set: PassSet, report: SafetyReport | None) -> PassSet:
    """``pass_set`` without the members ``report`` saw break a program."""
    if report is None:
        return pass_set
    unsafe = [member for member in report.unsafe if member in pass_set.members]
    if not unsafe:
        return pass_set
    exclusions = list(pass_set.exclusions)
    for member in unsafe:
        first = report.evidence_for(member)[0]
        detail = f"{first.outcome} on {first.program} ({first.mode}; llm-compiler passes --audit)"
        exclusions.append(Exclusion(member, pass_set.level_of(member), BREAKS_PROGRAMS, detail))
    members = tuple(member for member in pass_set.members if member not in unsafe)
    return replace(pass_set, members=members, exclusions=tuple(exclusions))


@functools.lru_cache(maxsize=8)
def search_pass_set(toolchain: Toolchain, choice: str = "safe", space: str = DEFAULT_SPACE) -> PassSet:
    """What the search draws from: ``"safe"`` (default) or ``"full"`` (the paper's set),
    as the search space ``space`` (:mod:`llm_compiler.passes.space`; default: the paper's).

    Made once per process (every search job asks for it).

    Raises:
        InvalidInput: ``choice`` is neither, or ``space`` names no space.
    """
    if choice not in PASS_SET_CHOICES:
        raise InvalidInput(f"--pass-set must be one of {', '.join(PASS_SET_CHOICES)}, not {choice!r}.")
    full = load_pass_set(toolchain)
    chosen = full if choice == "full" else safe_subset(full, load_safety(toolchain))
    if space == DEFAULT_SPACE:
        return chosen
    widened = widen(chosen, toolchain, space)
    return widened if choice == "full" else safe_subset(widened, load_variant_safety(toolchain))
