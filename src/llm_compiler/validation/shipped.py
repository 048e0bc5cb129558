"""Verdicts shipped with the package, for the exact LLVM builds they were made with.

The built-in predictor proposes lists from a fixed pool (its ranker's ``pipelines``),
and a list is kept only after PassListEval passes it on the bundled suite. On a new
machine every list of the pool would be checked once, inside the user's first build:
126 programs compiled, linked and run per list, most of that build's time. Those
checks give the same verdict wherever the same files run them, so the package ships
them: ``validation/data/verdicts-llvm<major>.json`` holds, for one LLVM build, the
verdict of every list of that major's ranker, made by the check the gate runs
(:class:`~llm_compiler.validation.gate.Gate`'s PassListEval: every program, stopping
at the first miscompile).

A shipped verdict is used only where it was made by the same checks on the same
inputs, all of which must match (else the lists are checked here as before, and a
line of the log says why the file did not apply):

* the LLVM version, the suites (names and versions, i.e. their sources) and how the
  check stops;
* the LLVM build's identity (:func:`~llm_compiler.toolchain.identity.build_identity`:
  SHA-256 of clang, opt, llc, lld, the LLVM libraries and the C/C++ runtimes): the
  same files, not only the same version number;
* the suite programs' unoptimized IR on this machine (a digest of the front end's
  output for every program, which also covers the system headers they include).

When all match, the file's verdicts are copied into the local verdict store once
(local verdicts, made on this machine, take precedence) and recalled from there like
any other, marked as shipped. Verdicts that rest on a timeout are never shipped.
``scripts/ship-verdicts.py`` writes the files (:func:`write`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from pathlib import Path
from typing import Any, Protocol

from llm_compiler.core.compiler import Compiler
from llm_compiler.core.program import Program
from llm_compiler.errors import LlmCompilerError
from llm_compiler.files import atomic_write_text
from llm_compiler.passes.pipeline import PassList
from llm_compiler.toolchain.identity import build_identity
from llm_compiler.validation.outcomes import Outcome
from llm_compiler.validation.suites import Suite, TestProgram


class _Verdict(Protocol):
    @property
    def passed(self) -> bool: ...
    @property
    def transient(self) -> bool: ...
    def to_json(self) -> dict[str, Any]: ...


class Evaluator(Protocol):
    """What this module uses of :class:`~llm_compiler.validation.passlisteval.PassListEval`."""

    compiler: Compiler
    suites: tuple[Suite, ...]
    jobs: int

    @property
    def programs(self) -> list[TestProgram]: ...
    @property
    def stop_mode(self) -> str | bool: ...
    def program_ir(self, test: TestProgram) -> Any: ...
    def check(self, passes: PassList, *, use_cache: bool = True) -> _Verdict: ...


logger = logging.getLogger(__name__)

#: The layout of a shipped file.
FORMAT = 1
#: What a shipped verdict's notes say.
SHIPPED_NOTE = "shipped with llm-compiler for this LLVM build (the same files and suite IR)"


def data_dir() -> Path:
    """The folder of the shipped verdict files."""
    return Path(str(resources.files("llm_compiler.validation") / "data"))


def shipped_file(major: int) -> Path:
    """The shipped verdict file for LLVM ``major`` (it may not exist)."""
    return data_dir() / f"verdicts-llvm{major}.json"


def suite_ir_digest(evaluator: Evaluator) -> str | None:
    """A digest of every suite program's unoptimized IR as ``evaluator`` builds it
    (front end once per program, then kept in its store), but the lines naming the
    source's path; None when a front end ran past its time limit (nothing can be
    compared this time)."""
    programs = evaluator.programs
    # Once per store: the front ends use the machine's cores (a driver's check has one job).
    with ThreadPoolExecutor(max_workers=max(evaluator.jobs, min(4, os.cpu_count() or 1))) as pool:
        built = list(pool.map(evaluator.program_ir, programs))
    parts = []
    for test, program in zip(programs, built, strict=True):
        if isinstance(program, Program):
            parts.append([test.key, hashlib.sha256(_without_paths(program.ir).encode()).hexdigest()])
        elif program.outcome is Outcome.TIMEOUT:
            return None
        else:
            parts.append([test.key, str(program.outcome)])
    return hashlib.sha256(json.dumps(sorted(parts)).encode()).hexdigest()


def _without_paths(ir: str) -> str:
    """The IR without the lines that name its source file (a path in the store)."""
    return "\n".join(
        line for line in ir.splitlines() if not line.startswith(("; ModuleID = ", "source_filename = "))
    )


def header(evaluator: Evaluator, digest: str) -> dict[str, Any]:
    """What a shipped file must match for ``evaluator`` (module docstring)."""
    return {
        "format": FORMAT,
        "llvm_version": evaluator.compiler.llvm_version,
        "identity": build_identity(evaluator.compiler.toolchain),
        "suites": {suite.name: suite.version for suite in evaluator.suites},
        "stop": evaluator.stop_mode,
        "suite_ir": digest,
    }


def applicable(evaluator: Evaluator, path: Path) -> tuple[dict[str, dict[str, Any]], str]:
    """The verdicts of the shipped file ``path`` by pipeline, when every condition of
    the module docstring holds for ``evaluator``; else none, and why."""
    try:
        document = json.loads(path.read_text())
    except FileNotFoundError:
        return {}, f"no verdicts are shipped for LLVM {evaluator.compiler.llvm_version}"
    except (OSError, ValueError) as error:
        return {}, f"{path} is unreadable ({error}); reinstall the package"
    want = {
        "format": FORMAT,
        "llvm_version": evaluator.compiler.llvm_version,
        "suites": {suite.name: suite.version for suite in evaluator.suites},
        "stop": evaluator.stop_mode,
    }
    for name, value in want.items():
        if document.get(name) != value:
            return {}, f"{path.name} holds {name} {document.get(name)!r}, this check {value!r}"
    try:
        identity = build_identity(evaluator.compiler.toolchain)
    except LlmCompilerError as error:
        return {}, f"the LLVM build's identity is unknown: {error}"
    if document.get("identity") != identity:
        return {}, (
            f"{path.name} was made with another build of LLVM {evaluator.compiler.llvm_version} "
            "(other files: another package version, vendor or local build)"
        )
    digest = suite_ir_digest(evaluator)
    if digest is None:
        return {}, "a suite program's front end ran past its time limit"
    if document.get("suite_ir") != digest:
        return {}, f"the suite programs' IR differs here from {path.name}'s (other system headers)"
    verdicts = document.get("verdicts")
    if not isinstance(verdicts, dict):
        return {}, f"{path} has no verdicts; reinstall the package"
    return verdicts, ""


def write(
    evaluator: Evaluator, pipelines: Iterable[str], path: Path, *, redo: bool = False
) -> dict[str, int]:
    """Checks each list of ``pipelines`` with ``evaluator`` and writes the shipped file
    ``path`` as it goes (a killed run keeps what it wrote; the lists already in a file
    of the same header are not checked again unless ``redo``). Verdicts that rest on a
    timeout are left out: running it again checks those lists again.

    Returns:
        Counts: ``passed``, ``failed``, ``transient`` (left out) and ``kept`` (from the file).
    """
    digest = suite_ir_digest(evaluator)
    if digest is None:
        raise LlmCompilerError("A suite program's front end ran past its time limit; run it again.")
    document = header(evaluator, digest)
    verdicts: dict[str, Any] = {}
    try:
        old = json.loads(path.read_text())
    except (OSError, ValueError):
        old = {}
    if not redo and all(old.get(name) == value for name, value in document.items()):
        verdicts.update(old.get("verdicts") or {})
    counts = {"passed": 0, "failed": 0, "transient": 0, "kept": len(verdicts)}
    for pipeline in pipelines:
        if pipeline in verdicts:
            continue
        verdict = evaluator.check(evaluator.compiler.passes(pipeline), use_cache=False)
        if verdict.transient:
            counts["transient"] += 1
            continue
        counts["passed" if verdict.passed else "failed"] += 1
        verdicts[pipeline] = _compact(verdict)
        atomic_write_text(
            path, json.dumps({**document, "verdicts": verdicts}, indent=1, sort_keys=True) + "\n"
        )
    atomic_write_text(path, json.dumps({**document, "verdicts": verdicts}, indent=1, sort_keys=True) + "\n")
    return counts


def _compact(verdict: _Verdict) -> dict[str, Any]:
    """The verdict as shipped: its JSON with details cut short and no replay commands
    (they name this machine's files: each store writes its own)."""
    data = verdict.to_json()
    for failure in data["failures"]:
        failure["detail"] = failure["detail"][:300]
        failure["command"] = ""
    data["seconds"] = 0.0
    data["cached"] = False
    return data
