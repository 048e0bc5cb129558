"""Search spaces: parameter variants derived from opt, grouped pipelines, and the search in them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from llm_compiler.autotune.local_search import LocalSearch
from llm_compiler.core.compiler import Compiler
from llm_compiler.core.program import OZ_PIPELINE
from llm_compiler.errors import InvalidInput
from llm_compiler.passes.pipeline import PassNode, parse_pipeline
from llm_compiler.passes.safety import search_pass_set
from llm_compiler.passes.space import derive_variants, probed_variants, variants_of
from llm_compiler.selection.proposer import Evaluated, ProposalRequest
from llm_compiler.toolchain.llvm import Toolchain
from tests.conftest import EXAMPLES, run_cli


def test_parameter_variants_come_from_opt_and_pass_the_gate(toolchain: Toolchain) -> None:
    paper = search_pass_set(toolchain)
    params = search_pass_set(toolchain, "safe", "params")
    assert params.space == "params" and params.members[: len(paper.members)] == paper.members
    added = params.members[len(paper.members) :]
    # Rule 1: the default pipelines' own spellings (options --print-passes does not list dropped).
    assert "function(sroa<modify-cfg>)" in added and "function(early-cse<memssa>)" in added
    late_simplifycfg = (
        "function(simplifycfg<bonus-inst-threshold=1;forward-switch-cond;switch-range-to-icmp;"
        "switch-to-lookup;no-keep-loops;hoist-common-insts;sink-common-insts>)"
    )
    assert late_simplifycfg in added
    # Rule 2: one option at a time, on top of the member's own parameters.
    assert "function(instcombine<no-verify-fixpoint;use-loop-info>)" in added
    assert "function(loop(loop-rotate<no-header-duplication>))" in added
    # Rule 3: numeric options at their listed values only.
    assert {m for m in added if "bonus-inst-threshold=" in m and ";" not in m} == {
        f"function(simplifycfg<bonus-inst-threshold={n}>)" for n in (0, 2, 4)
    }
    assert not any("verify-fixpoint" in m.replace("no-verify-fixpoint", "") for m in added)
    assert not any("attributor" in m for m in added)  # variants only of the safe set's members
    for member in added:
        params.validate(parse_pipeline(member))
    assert set(probed_variants(paper, toolchain)) <= set(derive_variants(paper, toolchain))
    assert len(variants_of(params)["simplifycfg"]) > 10
    with pytest.raises(InvalidInput, match="--space must be one of"):
        search_pass_set(toolchain, "safe", "huge")


@pytest.mark.parametrize("space", ["params", "nested", "rich"])
def test_local_search_in_a_richer_space_proposes_valid_lists_that_use_it(
    toolchain: Toolchain, space: str
) -> None:
    with Compiler(toolchain, engine="inprocess", workers=1) as compiler:
        program = compiler.load(EXAMPLES / "qsort_ints.c")
        pass_set = search_pass_set(toolchain, "safe", space)
        parents = (
            "function(sroa),function(gvn),function(simplifycfg),function(loop(indvars)),"
            "function(loop(loop-deletion)),cgscc(inline),function(instcombine<no-verify-fixpoint>)"
        )
        history = (Evaluated(OZ_PIPELINE, "ok", 874), Evaluated(parents, "ok", 860))
        search = LocalSearch(seed=2, warmup=0, explore=0.0)
        lists = search.ask(ProposalRequest(program, pass_set, 0, 60, history))
        texts = [str(passes) for passes in lists]
        grouped = [
            t
            for t in texts
            if "function(sroa,gvn" in t or "cgscc(inline,function(" in t or "simplifycfg,loop" in t
        ]
        retuned = [t for t in texts if "<" in t.replace("<no-verify-fixpoint>", "")]
        if space in ("nested", "rich"):
            assert grouped, texts
        else:
            assert not grouped
        if space in ("params", "rich"):
            assert retuned, texts
        for passes in lists[:12]:
            compiler.passes(str(passes))  # the gate accepts them
            assert compiler.count(program, passes).ir_instructions > 0  # and opt runs them


def _groups(node: PassNode) -> bool:
    """Whether ``node`` holds a pass manager with more than one element, at any depth."""
    if node.children is None:
        return False
    return len(node.children) > 1 or any(_groups(child) for child in node.children)


def test_tune_searches_the_rich_space_and_keeps_it_in_the_runs_identity(tmp_path: Path) -> None:
    out = tmp_path / "run"
    source = str(EXAMPLES / "crc32.c")
    args = [source, "--budget", "40", "--broadcast", "0", "--search", "local", "--space", "rich"]
    result = run_cli("tune", *args, "--out", str(out), "--json")
    assert result.returncode == 0, result.stderr
    [entry] = json.loads(result.stdout)["programs"]
    assert entry["best_size"] <= entry["oz_size"]
    again = run_cli("tune", *args[:-2], "--space", "params", "--out", str(out), "--resume")
    assert again.returncode != 0 and "space: stored 'rich', now 'params'" in again.stderr


def test_variants_an_audit_saw_break_a_program_are_left_out_of_the_safe_space(
    tmp_path: Path, toolchain: Toolchain, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    report = {
        "llvm_version": toolchain.version,
        "suites": {"builtin": "1"},
        "checked": ["function(sroa<preserve-cfg>)", "function(gvn<no-pre>)"],
        "unsafe": ["function(sroa<preserve-cfg>)"],
        "evidence": [
            {
                "member": "function(sroa<preserve-cfg>)",
                "mode": "alone",
                "program": "builtin/c_core_rec_tail",
                "outcome": "runtime-fail",
                "detail": "exit status 134 (reference 0)",
                "command": "replay",
            }
        ],
        "link_failures": [],
    }
    audit = cache / "llm-compiler" / "passes" / f"llvm-{toolchain.version}-variants-safety.json"
    audit.parent.mkdir(parents=True)
    audit.write_text(json.dumps(report))
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    safe = search_pass_set.__wrapped__(toolchain, "safe", "params")  # past the per-process cache
    full = search_pass_set.__wrapped__(toolchain, "full", "params")
    assert "function(sroa<preserve-cfg>)" not in safe.members and "function(gvn<no-pre>)" in safe.members
    assert "function(sroa<preserve-cfg>)" in full.members
    listed = run_cli("passes", "--space", "params", "--json", env={"XDG_CACHE_HOME": str(cache)})
    assert listed.returncode == 0, listed.stderr
    record = json.loads(listed.stdout)
    assert "function(sroa<preserve-cfg>)" in record["seen_to_break_programs"]["passes"]
    assert len(record["passes"]) == len(full.members)
