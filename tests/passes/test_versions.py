"""Pass lists written for LLVM 17 (LLM Compiler's models) or by hand, adapted to the installed opt.

Real opt runs throughout: a mapped list must run, a plain instcombine must really abort
on LLVM >= 18 where its rewrite does not, and the shipped map must match the installed
opt's registry.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from llm_compiler.cli import compile as compile_command
from llm_compiler.cli import measure, tune
from llm_compiler.cli.options import common_options
from llm_compiler.core.compiler import Compiler
from llm_compiler.errors import CommandFailed, InvalidPassList, PassSetError
from llm_compiler.passes.pipeline import parse_pipeline
from llm_compiler.passes.registry import PassRegistry, load_registry
from llm_compiler.passes.searchable import PassSet, load_pass_set
from llm_compiler.passes.versions import (
    INSTCOMBINE_REASON,
    adapt_pass_list,
    adapt_user_pass_list,
    load_version_map,
)
from llm_compiler.toolchain.llvm import Toolchain
from llm_compiler.toolchain.runner import run_command

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "src" / "llm_compiler" / "passes" / "data"
SCRIPT = ROOT / "scripts" / "derive_version_map.py"
LLVM17_PASSES = DATA / "llvm-17.0.6-passes.txt"
MAP = DATA / "llvm-17-to-19.json"

#: Reduced by llvm-reduce from a builtin suite program after function(sroa,simplifycfg):
#: one instcombine iteration is not a fixpoint here (the second turns sext into zext nneg).
NO_FIXPOINT_IR = """\
define void @run(ptr %p) {
entry:
  br label %loop

loop:
  %i = phi i32 [ 0, %entry ], [ %next, %latch ]
  %i1 = add nsw i32 %i, 1
  %idx = sext i32 %i to i64
  %addr = getelementptr inbounds i32, ptr %p, i64 %idx
  %v = load i32, ptr %addr, align 4
  switch i32 %v, label %latch [
    i32 0, label %latch
  ]

latch:
  %next = add nsw i32 %i1, 1
  br label %loop
}
"""

SMALL_C = """\
int pick(int x, int *p) {
    int s = 0;
    for (int i = 0; i < x; i++) {
        switch (p[i]) {
        case 0: s += 3; break;
        case 1: s -= 7; break;
        case 5: s ^= i; break;
        default: s += p[i] * 2;
        }
    }
    return s;
}
"""


@pytest.fixture(scope="module")
def pass_set(toolchain: Toolchain) -> PassSet:
    return load_pass_set(toolchain)


@pytest.fixture()
def needs_19(toolchain: Toolchain) -> None:
    if toolchain.major != 19:
        pytest.skip(f"the shipped map is derived against LLVM 19, this is LLVM {toolchain.version}")


def opt(toolchain: Toolchain, pipeline: str, ir: Path) -> str:
    """``opt -S`` output of ``pipeline`` on ``ir`` (raises CommandFailed when opt fails)."""
    result = run_command([toolchain.tool("opt"), f"-passes={pipeline}", "-S", "-o", "-", ir], timeout=120)
    return result.stdout_text


def unoptimized_ir(toolchain: Toolchain, tmp_path: Path) -> Path:
    source = tmp_path / "small.c"
    source.write_text(SMALL_C)
    target = tmp_path / "small.ll"
    run_command(
        [
            toolchain.tool("clang"),
            "-O0",
            "-Xclang",
            "-disable-O0-optnone",
            "-emit-llvm",
            "-S",
            "-o",
            target,
            source,
        ],
        timeout=120,
    )
    return target


# --- the LLVM 17 registry and the shipped map --------------------------------------------


def test_llvm17_registry_is_llvm_17() -> None:
    registry = PassRegistry.parse(LLVM17_PASSES.read_text())
    # LLM Compiler's notes: 346 pass arguments in LLVM 17.0.6's opt.
    assert len(registry.entries) == 346
    assert "flattencfg" in registry and "loop-reroll" in registry
    assert "flatten-cfg" not in registry and "nsan" not in registry  # both arrived after 17
    assert registry.param_options("instcombine") == {"no-use-loop-info", "use-loop-info", "max-iterations=N"}


def test_from_def_prints_what_opt_prints(tmp_path: Path) -> None:
    definition = tmp_path / "PassRegistry.def"
    definition.write_text(
        "#ifndef MODULE_PASS\n#define MODULE_PASS(NAME, CREATE_PASS)\n#endif\n"
        'MODULE_PASS("globalopt", GlobalOptPass()) // a comment\n'
        "#ifndef FUNCTION_ALIAS_ANALYSIS\n#define FUNCTION_ALIAS_ANALYSIS(NAME, CREATE_PASS)   \\\n"
        "  FUNCTION_ANALYSIS(NAME, CREATE_PASS)\n#endif\n"
        'FUNCTION_ANALYSIS("domtree", DominatorTreeAnalysis())\n'
        'FUNCTION_ALIAS_ANALYSIS("basic-aa", BasicAA())\n'
        'FUNCTION_PASS_WITH_PARAMS("gvn", "GVNPass", [](GVNOptions Opts) { return GVNPass(Opts); },\n'
        '                          parseGVNOptions, "no-pre;pre;"\n                          "memdep")\n'
    )
    result = subprocess.run(
        [sys.executable, SCRIPT, "from-def", definition, "--header", "made by a test"],
        capture_output=True,
        text=True,
        check=True,
    )
    lines = result.stdout.splitlines()
    assert lines[0] == "# made by a test"
    assert lines[lines.index("Module passes:") + 1] == "  globalopt"
    assert lines[lines.index("Function passes with params:") + 1] == "  gvn<no-pre;pre;memdep>"
    analyses = lines.index("Function analyses:")
    assert lines[analyses + 1 : analyses + 3] == ["  domtree", "  basic-aa"]
    assert lines[lines.index("Function alias analyses:") + 1] == "  basic-aa"
    registry = PassRegistry.parse(result.stdout)
    assert registry.param_options("gvn") == {"no-pre", "pre", "memdep"}


def test_shipped_map_covers_exactly_the_differences(toolchain: Toolchain, needs_19: None) -> None:
    result = subprocess.run(
        [sys.executable, SCRIPT, "check", LLVM17_PASSES, str(toolchain.tool("opt")), MAP],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "covers all 6 passes, 2 analyses and 1 options" in result.stdout


def test_check_finds_a_missing_decision(toolchain: Toolchain, needs_19: None, tmp_path: Path) -> None:
    table = json.loads(MAP.read_text())
    del table["passes"]["flattencfg"]
    table["passes"]["lowerswitch"]["new"] = "no-such-pass"
    broken = tmp_path / "map.json"
    broken.write_text(json.dumps(table))
    result = subprocess.run(
        [sys.executable, SCRIPT, "check", LLVM17_PASSES, str(toolchain.tool("opt")), broken],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 1
    assert "'flattencfg' is gone in the new version but the table has no decision" in result.stderr
    assert "'lowerswitch' maps to 'no-such-pass'" in result.stderr


def test_every_mapped_target_is_known_to_opt(toolchain: Toolchain) -> None:
    if toolchain.major < 19:
        pytest.skip("the map's targets are LLVM 19 names")
    registry = load_registry(toolchain)
    version_map = load_version_map(17)
    for old, decision in version_map.passes.items():
        assert decision.action in ("rename", "reject"), old
        if decision.action == "rename":
            assert registry.transform_levels(str(decision.new)), f"{old} -> {decision.new}"
    for old, decision in version_map.analyses.items():
        kinds = {entry.kind for entry in registry.lookup(str(decision.new))}
        assert kinds & {"analysis", "alias-analysis"}, f"{old} -> {decision.new}"
    for (name, old), decision in version_map.options.items():
        assert decision.new in registry.param_options(name), f"{name}<{old}> -> {decision.new}"


# --- LLVM 17 lists ----------------------------------------------------------------------------


def test_renamed_llvm17_passes_map_and_run(
    compiler: Compiler, pass_set: PassSet, needs_19: None, tmp_path: Path
) -> None:
    written = (
        "function(flattencfg,lowerswitch,loweratomic,lowerinvoke),cgscc(function-attrs<skip-non-recursive>)"
    )
    ir = unoptimized_ir(compiler.toolchain, tmp_path)
    with pytest.raises(CommandFailed, match="unknown function pass 'flattencfg'"):
        opt(compiler.toolchain, written, ir)
    adapted = adapt_pass_list(parse_pipeline(written), pass_set, source_llvm=17)
    assert adapted.pipeline == (
        "function(flatten-cfg,lower-switch,lower-atomic,lower-invoke),"
        "cgscc(function-attrs<skip-non-recursive-function-attrs>)"
    )
    assert [(c.old, c.new, c.index) for c in adapted.changes] == [
        ("flattencfg", "flatten-cfg", 0),
        ("lowerswitch", "lower-switch", 1),
        ("loweratomic", "lower-atomic", 2),
        ("lowerinvoke", "lower-invoke", 3),
        ("function-attrs<skip-non-recursive>", "function-attrs<skip-non-recursive-function-attrs>", 4),
    ]
    assert all("renamed after LLVM 17" in c.reason for c in adapted.changes)
    compiler.check(adapted.passes)
    assert "switch" not in opt(compiler.toolchain, adapted.pipeline, ir)  # lower-switch ran
    assert compiler.measure(compiler.load(ir), adapted.passes).binary_size > 0


def test_renamed_analysis_in_require(pass_set: PassSet, needs_19: None) -> None:
    adapted = adapt_user_pass_list("function(require<targetlibinfo>,sroa)", pass_set, source_llvm=17)
    assert adapted.pipeline == "function(require<target-lib-info>,sroa)"


def test_removed_pass_is_rejected_naming_it(pass_set: PassSet, needs_19: None) -> None:
    with pytest.raises(InvalidPassList, match="'loop-reroll' is a pass of LLVM 17 that LLVM 19") as caught:
        adapt_user_pass_list("function(sroa,loop(loop-reroll))", pass_set, source_llvm=17)
    assert caught.value.token == "loop-reroll"
    assert caught.value.position == "function(sroa,loop(".__len__()
    assert "Remove loop-reroll from the list" in str(caught.value)


def test_llvm17_instcombine_keeps_iterating_to_a_fixpoint(
    toolchain: Toolchain, pass_set: PassSet, tmp_path: Path
) -> None:
    if toolchain.major < 18:
        pytest.skip("LLVM 17's instcombine is the installed one")
    adapted = adapt_user_pass_list(
        "function(instcombine),function(instcombine<max-iterations=4>)", pass_set, source_llvm=17
    )
    assert adapted.pipeline == (
        "function(instcombine<no-verify-fixpoint;max-iterations=1000>),"
        "function(instcombine<max-iterations=4;no-verify-fixpoint>)"
    )
    assert adapted.changes[0].reason.startswith(INSTCOMBINE_REASON)
    assert "InstCombineDefaultMaxIterations = 1000" in adapted.changes[0].reason
    ir = tmp_path / "no-fixpoint.ll"
    ir.write_text(NO_FIXPOINT_IR)
    once = opt(toolchain, "function(instcombine<no-verify-fixpoint>)", ir)
    twice = opt(toolchain, "function(instcombine<no-verify-fixpoint>,instcombine<no-verify-fixpoint>)", ir)
    assert once != twice  # one iteration is not LLVM 17's instcombine here ...
    assert opt(toolchain, "function(instcombine<no-verify-fixpoint;max-iterations=1000>)", ir) == twice


# --- lists for the installed LLVM ------------------------------------------------------------


def test_plain_instcombine_aborts_and_its_rewrite_runs(
    toolchain: Toolchain, pass_set: PassSet, tmp_path: Path
) -> None:
    if toolchain.major < 18:
        pytest.skip("LLVM 17 does not verify instcombine's fixpoint")
    ir = tmp_path / "no-fixpoint.ll"
    ir.write_text(NO_FIXPOINT_IR)
    with pytest.raises(CommandFailed) as caught:
        opt(toolchain, "function(instcombine)", ir)
    assert "Instruction Combining did not reach a fixpoint after 1 iterations" in caught.value.stderr
    adapted = adapt_user_pass_list("function(sroa,instcombine)", pass_set)
    assert adapted.source_llvm == toolchain.major
    assert adapted.pipeline == "function(sroa,instcombine<no-verify-fixpoint>)"
    assert [(c.old, c.new, c.reason, c.index) for c in adapted.changes] == [
        ("instcombine", "instcombine<no-verify-fixpoint>", INSTCOMBINE_REASON, 1)
    ]
    assert "zext nneg" not in opt(toolchain, adapted.pipeline, ir)  # ran, one iteration


def test_instcombine_rewrite_is_harmless_where_plain_reaches_its_fixpoint(
    toolchain: Toolchain, pass_set: PassSet, tmp_path: Path
) -> None:
    ir = unoptimized_ir(toolchain, tmp_path)
    plain = "function(sroa,instcombine,simplifycfg,instcombine)"
    adapted = adapt_user_pass_list(plain, pass_set)
    assert opt(toolchain, adapted.pipeline, ir) == opt(toolchain, plain, ir)


def test_searchable_lists_and_explicit_settings_are_not_rewritten(pass_set: PassSet) -> None:
    for member in pass_set.member_lists:
        assert (
            adapt_pass_list(member, pass_set, source_llvm=int(pass_set.llvm_version.split(".")[0])).changes
            == ()
        )
    kept = "module(default<Oz>),function(instcombine<verify-fixpoint>,aggressive-instcombine)"
    assert adapt_user_pass_list(kept, pass_set).pipeline == kept


def test_llvm17_name_in_a_list_for_the_installed_llvm_gets_a_hint(pass_set: PassSet, needs_19: None) -> None:
    with pytest.raises(InvalidPassList, match=r"LLVM 17's name for 'flatten-cfg'.*--passes-from-llvm 17"):
        adapt_user_pass_list("function(sroa,flattencfg)", pass_set)


def test_versions_without_a_map_are_refused(pass_set: PassSet) -> None:
    major = int(pass_set.llvm_version.split(".")[0])
    with pytest.raises(InvalidPassList, match=f"written for LLVM {major + 1} cannot be adapted"):
        adapt_user_pass_list("function(sroa)", pass_set, source_llvm=major + 1)
    if major > 18:
        with pytest.raises(InvalidPassList, match="No pass-name map from LLVM 18"):
            adapt_user_pass_list("function(sroa)", pass_set, source_llvm=18)


def test_a_pass_set_without_registry_is_refused(pass_set: PassSet) -> None:
    bare = PassSet(pass_set.llvm_version, pass_set.members)
    with pytest.raises(PassSetError, match="needs the installed opt's registry"):
        adapt_user_pass_list("function(instcombine)", bare)


def test_summary_groups_repeated_changes(pass_set: PassSet) -> None:
    if int(pass_set.llvm_version.split(".")[0]) < 18:
        pytest.skip("no instcombine rewrite before LLVM 18")
    adapted = adapt_user_pass_list("function(instcombine,sroa,instcombine)", pass_set)
    assert [c.index for c in adapted.changes] == [0, 2]
    assert adapted.summary() == (
        f"instcombine -> instcombine<no-verify-fixpoint> (x2): {INSTCOMBINE_REASON}",
    )


# --- the commands that take user lists --------------------------------------------------------


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    subparsers = parser.add_subparsers()
    common = common_options()
    for command in (measure, compile_command, tune):
        command.add_parser(subparsers, common)
    return parser.parse_args(argv)


def test_measure_runs_the_adapted_list_and_says_so(
    toolchain: Toolchain, needs_19: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "small.c"
    source.write_text(SMALL_C)
    written = "function(sroa,instcombine,lowerswitch)"
    options = ("--passes-from-llvm", "17", "--json", "--engine", "subprocess", "--jobs", "1")
    args = parse("measure", str(source), "--passes", written, *options)
    assert args.run(args) == 0
    out, err = capsys.readouterr()
    record = json.loads(out)
    assert record["passes"]["pipeline"] == (
        "function(sroa,instcombine<no-verify-fixpoint;max-iterations=1000>,lower-switch)"
    )
    assert "pass list adapted to LLVM 19" in err and "lowerswitch -> lower-switch: renamed" in err


def test_compile_and_tune_adapt_user_lists(
    toolchain: Toolchain, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if toolchain.major < 18:
        pytest.skip("no instcombine rewrite before LLVM 18")
    source = tmp_path / "small.c"
    source.write_text(SMALL_C)
    output = tmp_path / "small.opt.ll"
    args = parse("compile", str(source), "--passes", "function(sroa,instcombine)", "-o", str(output))
    assert args.run(args) == 0
    assert output.is_file()
    assert "instcombine -> instcombine<no-verify-fixpoint>" in capsys.readouterr().err
    args = parse("tune", str(source), "--passes", "function(instcombine)", "--passes", "module(default<Oz>)")
    with Compiler(toolchain, engine="subprocess") as compiler:
        settings = tune._settings(args, compiler)
    assert settings.extra_lists == ("function(instcombine<no-verify-fixpoint>)", "module(default<Oz>)")
