"""Shipped verdicts: recalled only for the same LLVM files, suites, stop rule and suite IR."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from llm_compiler.core.compiler import Compiler
from llm_compiler.predictor.shipped import shipped_ranker
from llm_compiler.toolchain.identity import build_identity, identity_files
from llm_compiler.toolchain.llvm import Toolchain
from llm_compiler.validation import shipped
from llm_compiler.validation.gate import Gate, load_suites
from llm_compiler.validation.passlisteval import PassListEval
from llm_compiler.validation.suites import Suite, builtin_suite

GOOD = "function(sroa),function(instcombine<no-verify-fixpoint>)"
UNSAFE = "module(internalize),module(globaldce)"


def _gate_check(compiler: Compiler, suite: Suite, store: Path) -> PassListEval:
    """PassListEval as the gate runs it, on its own store (a machine of its own)."""
    return PassListEval(
        compiler, [suite], cache_dir=store, stop_at_first_failure=True, stop_on_link_failure=False
    )


def test_shipped_verdicts_are_recalled_only_where_they_were_made(
    unsafe_compiler: Compiler, tmp_path: Path
) -> None:
    suite = Suite("mini", builtin_suite().programs[:3])
    made = tmp_path / "verdicts.json"
    maker = _gate_check(unsafe_compiler, suite, tmp_path / "maker")
    assert shipped.write(maker, [GOOD, UNSAFE], made) == {"passed": 1, "failed": 1, "transient": 0, "kept": 0}
    checks = maker.stats.checks
    assert shipped.write(maker, [GOOD, UNSAFE], made)["kept"] == 2 and maker.stats.checks == checks

    user = _gate_check(unsafe_compiler, suite, tmp_path / "user")
    assert user.import_shipped(made) == 2
    good = user.check(unsafe_compiler.passes(GOOD))
    assert good.passed and good.cached and shipped.SHIPPED_NOTE in good.notes
    bad = user.check(unsafe_compiler.passes(UNSAFE))
    assert not bad.passed and bad.failures
    assert str(tmp_path / "user") in bad.failures[0].command  # replayed with this machine's files
    assert user.stats.checks == 0, "nothing was compiled or run"
    assert user.import_shipped(made) == 0, "copied once per store"

    document = json.loads(made.read_text())
    for field, value in (("identity", "0" * 64), ("suite_ir", "0" * 64), ("stop", False)):
        other = tmp_path / f"other-{field}.json"
        other.write_text(json.dumps({**document, field: value}))
        elsewhere = _gate_check(unsafe_compiler, suite, tmp_path / f"store-{field}")
        assert elsewhere.import_shipped(other) == 0, field
        verdict = elsewhere.check(unsafe_compiler.passes(GOOD))
        assert verdict.passed and not verdict.cached and elsewhere.stats.checks == 3, field

    every_program = PassListEval(unsafe_compiler, [suite], cache_dir=tmp_path / "every")
    assert every_program.import_shipped(made) == 0, "another stop rule: the file does not apply"


def test_the_identity_changes_with_any_file_of_the_build(toolchain: Toolchain, tmp_path: Path) -> None:
    copy = tmp_path / "bin"
    copy.mkdir()
    for name in ("clang", "clang++", "opt", "llc", "ld.lld"):
        (copy / name).symlink_to(toolchain.tool(name))
    same = Toolchain(copy, toolchain.version)
    first = build_identity(same)
    assert {"opt", "llc", "clang", "ld.lld"} <= set(identity_files(same))
    assert any(name.startswith("libLLVM") for name in identity_files(same))
    assert not any(name.startswith("libc.so") for name in identity_files(same))
    (copy / "llc").unlink()
    shutil.copy(toolchain.tool("llc"), copy / "llc")
    with (copy / "llc").open("ab") as stream:
        stream.write(b"\0")  # a rebuilt llc of the same version
    assert build_identity(Toolchain(copy, toolchain.version + " ")) != first


@pytest.mark.slow
def test_the_shipped_verdicts_apply_to_the_reference_llvm(toolchain: Toolchain, tmp_path: Path) -> None:
    path = shipped.shipped_file(toolchain.major)
    if toolchain.major != 19:
        pytest.skip("the reference LLVM of the tests is 19")
    with Compiler(toolchain, workers=2) as compiler:
        gate = Gate(compiler, load_suites(["builtin"], compiler), cache_dir=tmp_path)
        assert gate.evaluator is not None
        verdicts, why = shipped.applicable(gate.evaluator, path)
        pool = json.loads(shipped_ranker(19).read_text())["pipelines"]
        assert why == "", f"{why}: run scripts/ship-verdicts.py for this LLVM build"
        assert set(verdicts) == set(pool)
        assert sum(verdict["passed"] for verdict in verdicts.values()) >= len(pool) // 2
