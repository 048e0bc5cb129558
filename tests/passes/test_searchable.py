"""The searchable pass set: its derivation, the bundled file, and the pass-list gate."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from llm_compiler.errors import CommandFailed, InvalidPassList, PassSetError
from llm_compiler.passes.rules import RULES
from llm_compiler.passes.searchable import (
    DEFAULT_PIPELINES,
    PassSet,
    compile_sample,
    data_file,
    derive_pass_set,
    load_pass_set,
)
from llm_compiler.toolchain.llvm import Toolchain
from llm_compiler.toolchain.runner import run_command


@pytest.fixture(scope="module")
def pass_set(toolchain: Toolchain) -> PassSet:
    return load_pass_set(toolchain)


@pytest.fixture(scope="module")
def sample(toolchain: Toolchain) -> Path:
    scratch = Path(tempfile.mkdtemp(prefix="sample-"))
    return compile_sample(toolchain, scratch)


def opt_accepts(toolchain: Toolchain, pipeline: str, sample: Path) -> bool:
    try:
        run_command([toolchain.tool("opt"), f"-passes={pipeline}", "-disable-output", sample], timeout=60)
    except CommandFailed:
        return False
    return True


def test_bundled_file_is_used_and_matches_this_llvm(toolchain: Toolchain, pass_set: PassSet) -> None:
    if not data_file(toolchain.major).is_file():
        pytest.skip(f"no bundled set for LLVM {toolchain.major}")
    assert pass_set.llvm_version.split(".")[0] == str(toolchain.major)
    assert PassSet.from_text(data_file(toolchain.major).read_text()).members == pass_set.members


@pytest.mark.slow
def test_regeneration_reproduces_the_bundled_file(toolchain: Toolchain, pass_set: PassSet) -> None:
    derived = derive_pass_set(toolchain)
    assert derived.members == pass_set.members
    assert derived.exclusions == pass_set.exclusions


@pytest.mark.slow
def test_every_member_runs_on_the_sample(toolchain: Toolchain, pass_set: PassSet, sample: Path) -> None:
    failing = [member for member in pass_set.members if not opt_accepts(toolchain, member, sample)]
    assert failing == []


def test_contents_follow_the_rules(pass_set: PassSet) -> None:
    members = set(pass_set.members)
    assert {f"module(default<{level}>)" for level in DEFAULT_PIPELINES} <= members
    assert "function(loop-mssa(licm<allowspeculation>))" in members
    assert "function(instcombine<no-verify-fixpoint>)" in members
    assert {"module(globalopt)", "cgscc(inline)", "function(sroa)", "function(loop(indvars))"} <= members
    rules = {e.name: e.rule for e in pass_set.exclusions}
    assert rules["internalize"] == "not-separate-compilation-safe"
    assert rules["structurizecfg"] == "gpu-structurization"
    assert rules["unify-loop-exits"] == "gpu-structurization"
    assert rules["dot-cfg"] == "utility" and rules["asan"] == "instrumentation"
    assert rules["domtree"] == "analysis"
    known_rules = {rule.name for rule in RULES} | {"probe-failed"}
    assert {e.rule for e in pass_set.exclusions} <= known_rules
    excluded_names = {e.name for e in pass_set.exclusions}
    searchable_names = {next(pass_set.parse(m).leaves()).name for m in pass_set.members}
    assert not excluded_names & searchable_names
    assert 100 <= len(pass_set) <= 200
    assert sum(pass_set.counts_by_level().values()) == len(pass_set)


def test_text_round_trip_and_malformed_files(pass_set: PassSet) -> None:
    again = PassSet.from_text(pass_set.to_text())
    assert again == pass_set
    with pytest.raises(PassSetError, match="llvm-version"):
        PassSet.from_text("[searchable]\nfunction(sroa)\n")
    with pytest.raises(PassSetError, match="Line 3"):
        PassSet.from_text("llvm-version 19.1.7\n[searchable]\nsroa;evil\n")
    with pytest.raises(PassSetError, match="empty"):
        PassSet.from_text("llvm-version 19.1.7\n[searchable]\n")


@pytest.mark.parametrize(
    "pipeline",
    [
        "globalopt,sroa",
        "instcombine<no-verify-fixpoint>,globalopt",
        "cgscc(globalopt)",
        "function(argpromotion)",
        "loop(indvars),instcombine<no-verify-fixpoint>",
        "loop(indvars),globalopt",
        "module(loop(indvars))",
        "function(cgscc(inline))",
        "inline,sroa",
        "inline,globalopt",
        "indvars,inline",
        "module(inline),function(sroa,loop-mssa(licm<allowspeculation>),loop(indvars))",
        "simplifycfg<switch-to-lookup;bonus-inst-threshold=2>",
        "simplifycfg<bonus-inst-threshold=x>",
        "loop-unroll<O3>",
        "default<O9>",
        "module(default<Oz>),cgscc(function-attrs),function(loop(loop-deletion))",
        "function<eager-inv>(sroa)",
        "loop-mssa(licm<allowspeculation>),sroa",
    ],
)
def test_gate_agrees_with_opt(toolchain: Toolchain, pass_set: PassSet, sample: Path, pipeline: str) -> None:
    try:
        pass_set.parse(pipeline)
        accepted = True
    except InvalidPassList:
        accepted = False
    assert accepted == opt_accepts(toolchain, pipeline, sample)


@pytest.mark.parametrize(
    ("pipeline", "token", "message"),
    [
        ("function(sroa),frobnicate", "frobnicate", "unknown pass"),
        ("structurizecfg", "structurizecfg", "not in the searchable set"),
        ("module(internalize)", "internalize", "--excluded"),
        ("function(loop(licm<allowspeculation>))", "licm", "MemorySSA"),
        ("licm", "licm", "MemorySSA"),
        ("instcombine<max-iterations=1;evil>", "evil", "does not take the parameter"),
        ("memprof-use<profile-filename=/etc/passwd>", "/", "parameters of 'memprof-use' must end"),
        ("memprof-use<profile-filename=passwd>", "memprof-use", "not in the searchable set"),
        ("sroa(dce)", "sroa", "does not take a nested pipeline"),
        ("function", "function", "needs a nested pipeline"),
    ],
)
def test_gate_rejections_name_the_token(pass_set: PassSet, pipeline: str, token: str, message: str) -> None:
    with pytest.raises(InvalidPassList, match=message) as caught:
        pass_set.parse(pipeline)
    assert caught.value.token == token


def test_allowed_extras(pass_set: PassSet) -> None:
    assert str(
        pass_set.parse("module(no-op-module,trigger-crash-module)", ["no-op-module", "trigger-crash-module"])
    )
    with pytest.raises(InvalidPassList, match="not a pass of opt"):
        pass_set.parse("sroa", ["no-such-pass"])
