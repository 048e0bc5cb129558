"""The audit of the searchable set: passes that break programs, kept out of the default search."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from llm_compiler.core.compiler import Compiler
from llm_compiler.errors import InvalidInput
from llm_compiler.passes.safety import (
    BREAKS_PROGRAMS,
    Evidence,
    SafetyReport,
    data_file,
    load_safety,
    safe_subset,
    search_pass_set,
)
from llm_compiler.passes.searchable import load_pass_set
from llm_compiler.toolchain.llvm import Toolchain
from llm_compiler.validation.audit import audit_pass_set
from llm_compiler.validation.suites import Suite, builtin_suite
from tests.conftest import run_cli


def test_an_audit_finds_the_pass_that_breaks_a_program(toolchain: Toolchain, tmp_path: Path) -> None:
    suite = Suite(
        "builtin", tuple(p for p in builtin_suite().programs if p.name in ("c_core_rec_tail", "cpp_exc_std"))
    )
    with Compiler(toolchain, engine="inprocess", workers=2) as compiler:
        report = audit_pass_set(
            compiler, [suite], members=["module(attributor)", "function(sroa)", "module(globaldce)"]
        )
    assert report.unsafe == ("module(attributor)",)
    [evidence, *_] = report.evidence_for("module(attributor)")
    assert evidence.program == "builtin/c_core_rec_tail" and evidence.outcome == "runtime-fail"
    assert "-passes=" in evidence.command and "attributor" in evidence.command
    # globaldce alone leaves cpp_exc_std unlinkable: recorded, but not unsafe.
    assert {item.member for item in report.link_failures} >= {"module(globaldce)"}
    again = SafetyReport.from_json(json.loads(json.dumps(report.to_json())))
    assert again.evidence == report.evidence and again.unsafe == report.unsafe
    # Link failures are kept as who and where only.
    where = [(item.member, item.mode, item.program) for item in report.link_failures]
    assert [(item.member, item.mode, item.program) for item in again.link_failures] == where


def test_the_safe_set_leaves_out_unsafe_passes_with_their_evidence(toolchain: Toolchain) -> None:
    full = load_pass_set(toolchain)
    report = SafetyReport(
        toolchain.version,
        {"builtin": "x"},
        full.members,
        (Evidence("module(attributor)", "alone", "builtin/c_core_rec_tail", "runtime-fail"),),
    )
    safe = safe_subset(full, report)
    assert "module(attributor)" not in safe.members and len(safe) == len(full) - 1
    [exclusion] = [e for e in safe.exclusions if e.name == "module(attributor)"]
    assert exclusion.rule == BREAKS_PROGRAMS and "c_core_rec_tail" in exclusion.detail
    assert search_pass_set(toolchain, "full") == full
    with pytest.raises(InvalidInput, match="--pass-set"):
        search_pass_set(toolchain, "everything")


def test_the_audit_of_llvm_19_ships_and_is_shown(toolchain: Toolchain) -> None:
    if toolchain.major != 19:
        pytest.skip("the bundled audit is LLVM 19's")
    assert data_file(19).is_file()
    report = load_safety(toolchain)
    assert report is not None
    assert {"function(lower-invoke)", "module(attributor)", "cgscc(attributor-cgscc)"} <= set(report.unsafe)
    assert all(report.evidence_for(member) for member in report.unsafe)
    safe = search_pass_set(toolchain)
    assert not set(report.unsafe) & set(safe.members)
    listing = run_cli("passes", "--json")
    assert listing.returncode == 0, listing.stderr
    shown = json.loads(listing.stdout)["seen_to_break_programs"]
    assert set(shown["passes"]) == set(report.unsafe)
    assert all(item["command"] for items in shown["passes"].values() for item in items)
    table = run_cli("passes")
    assert "seen to break" in table.stdout and "attributor" in table.stdout
