"""``llm-compiler passes``: the searchable pass set of an LLVM, what it excludes and why."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from llm_compiler.files import atomic_write_text
from llm_compiler.passes import safety
from llm_compiler.passes.rules import RULES
from llm_compiler.passes.searchable import (
    PAPER_SEARCHABLE_COUNT,
    PassSet,
    data_file,
    derive_pass_set,
    load_pass_set,
)
from llm_compiler.passes.space import DEFAULT_SPACE, SPACES, has_parameters, probed_variants, widen
from llm_compiler.toolchain.llvm import Toolchain, find_toolchain

EXAMPLES = """examples:
  llm-compiler passes                      # the searchable set, with counts per IR level
  llm-compiler passes --excluded           # every other pass of opt and the rule that excluded it
  llm-compiler passes --json
  llm-compiler passes --regenerate --llvm-bin /usr/lib/llvm-19/bin   # rewrite passes/data/llvm-19.txt
  llm-compiler passes --audit              # which passes break programs alone or after -Oz
"""


def add_parser(subparsers: Any, common: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "passes",
        parents=[common],
        help="list the searchable pass set of the LLVM in use",
        description=(
            "The searchable pass set: every default<O*> pipeline and the optimizing transform "
            "passes of opt, derived from `opt --print-passes` by written rules and probe-run "
            f"on a sample program (LLM Compiler searched {PAPER_SEARCHABLE_COUNT} passes of LLVM 17)."
        ),
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--excluded", action="store_true", help="list the excluded passes with their rules")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument(
        "--regenerate",
        action="store_true",
        help="derive the set again from opt (probing each pass) and write it",
    )
    parser.add_argument(
        "--audit",
        action="store_true",
        help="run each searchable pass alone and after default<Oz> on the suites; passes that break "
        "a program are left out of the default search (--pass-set safe)",
    )
    parser.add_argument(
        "--space",
        choices=SPACES,
        default=DEFAULT_SPACE,
        help="list the members of this search space (params, rich: with the parameter variants); with "
        "--audit, audit the variants alone (their own report)",
    )
    parser.add_argument(
        "--suite",
        action="append",
        default=[],
        metavar="NAME",
        help="with --audit: suite to run (default: builtin; repeatable)",
    )
    parser.add_argument(
        "--output",
        metavar="PATH",
        help="with --regenerate: where to write (default: the bundled passes/data/llvm-<major>.txt); "
        "with --audit: default: this machine's cache (bundled: passes/data/llvm-<major>-safety.json)",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    toolchain = find_toolchain(args.llvm_bin)
    pass_set = _regenerate(toolchain, args) if args.regenerate else load_pass_set(toolchain)
    variants = has_parameters(args.space)
    if args.audit and variants:
        members = probed_variants(safety.search_pass_set(toolchain), toolchain)
        variant_report: safety.SafetyReport | None = _audit(toolchain, args, members)
    else:
        variant_report = safety.load_variant_safety(toolchain) if variants else None
    report = _audit(toolchain, args) if args.audit and not variants else safety.load_safety(toolchain)
    if variants:
        pass_set = widen(pass_set, toolchain, args.space)
        report = _joined(report, variant_report)
    if args.json:
        json.dump(_as_json(pass_set, args.excluded, report), sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    console = Console()
    if args.excluded:
        _print_excluded(console, pass_set)
    else:
        _print_members(console, pass_set, report)
    return 0


def _joined(
    report: safety.SafetyReport | None, variants: safety.SafetyReport | None
) -> safety.SafetyReport | None:
    """The set's audit and its variants' as one report (for listing)."""
    if report is None or variants is None:
        return report or variants
    return replace(
        report,
        checked=report.checked + variants.checked,
        evidence=report.evidence + variants.evidence,
        link_failures=report.link_failures + variants.link_failures,
    )


def _audit(
    toolchain: Toolchain, args: argparse.Namespace, members: Sequence[str] | None = None
) -> safety.SafetyReport:
    from llm_compiler.cli.options import make_compiler
    from llm_compiler.validation.audit import audit_pass_set
    from llm_compiler.validation.gate import load_suites

    with make_compiler(args) as compiler, Progress(console=Console(stderr=True), transient=True) as progress:
        task = progress.add_task("auditing passes (alone and after -Oz)", total=None)
        report = audit_pass_set(
            compiler,
            load_suites(args.suite, compiler),
            members=members,
            progress=lambda done, total: progress.update(task, completed=done, total=total),
        )
    default = safety.variants_cache_file if members is not None else safety.cache_file
    output = Path(args.output) if args.output else default(toolchain.version)
    output.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(output, json.dumps(report.to_json(), indent=1) + "\n")
    Console(stderr=True).print(
        f"{len(report.unsafe)} of {len(report.checked)} passes broke a program: "
        f"{', '.join(report.unsafe) or 'none'}; wrote {output}",
        highlight=False,
    )
    return report


def _regenerate(toolchain: Any, args: argparse.Namespace) -> PassSet:
    with Progress(console=Console(stderr=True), transient=True) as progress:
        task = progress.add_task("probing passes", total=None)
        pass_set = derive_pass_set(
            toolchain,
            timeout=args.timeout,
            progress=lambda done, total: progress.update(task, completed=done, total=total),
        )
    output = Path(args.output) if args.output else data_file(toolchain.major)
    output.write_text(pass_set.to_text())
    Console(stderr=True).print(f"wrote {len(pass_set)} passes to {output}", highlight=False)
    return pass_set


def _as_json(pass_set: PassSet, excluded: bool, report: safety.SafetyReport | None) -> dict[str, Any]:
    result: dict[str, Any] = {
        "llvm_version": pass_set.llvm_version,
        "count": len(pass_set),
        "paper_count": PAPER_SEARCHABLE_COUNT,
        "counts_by_level": pass_set.counts_by_level(),
        "passes": [{"pass": member, "level": pass_set.level_of(member)} for member in pass_set.members],
    }
    result["seen_to_break_programs"] = (
        None
        if report is None
        else {
            "llvm_version": report.llvm_version,
            "suites": report.suites,
            "passes": {
                member: [vars(item) for item in report.evidence_for(member)] for member in report.unsafe
            },
        }
    )
    if excluded:
        result["excluded"] = [
            {"name": e.name, "level": e.level, "rule": e.rule, "detail": e.detail}
            for e in pass_set.exclusions
        ]
    return result


def _print_members(console: Console, pass_set: PassSet, report: safety.SafetyReport | None) -> None:
    table = Table(title=f"Searchable passes of LLVM {pass_set.llvm_version}")
    table.add_column("level")
    table.add_column("pass (as written in a pipeline)")
    table.add_column("seen to break (left out of --pass-set safe)", overflow="fold")
    unsafe = set(report.unsafe) if report is not None else set()
    for member in pass_set.members:
        note = ""
        if member in unsafe and report is not None:
            evidence = report.evidence_for(member)
            first = evidence[0]
            note = f"{first.outcome} on {first.program} ({first.mode})"
            if len(evidence) > 1:
                note += f" and {len(evidence) - 1} more"
        table.add_row(pass_set.level_of(member), member, note)
    console.print(table, markup=False)
    if report is None:
        console.print(
            f"No audit for LLVM {pass_set.llvm_version}: the search draws from every pass "
            "(run llm-compiler passes --audit).",
            highlight=False,
        )
    else:
        console.print(
            f"{len(unsafe)} passes were seen to break a program (audit of LLVM {report.llvm_version} on "
            f"{', '.join(report.suites)}); replay commands: llm-compiler passes --json.",
            highlight=False,
        )
    counts = ", ".join(f"{n} {level}" for level, n in pass_set.counts_by_level().items())
    space = (
        ""
        if pass_set.space == DEFAULT_SPACE
        else f" in the {pass_set.space} space, parameter variants included"
    )
    console.print(
        f"{len(pass_set)} searchable passes{space} ({counts}); LLM Compiler searched "
        f"{PAPER_SEARCHABLE_COUNT} with LLVM 17.0.6.",
        highlight=False,
    )


def _print_excluded(console: Console, pass_set: PassSet) -> None:
    table = Table(title=f"Passes of LLVM {pass_set.llvm_version} that are not searched")
    for column in ("pass", "level", "rule", "detail"):
        table.add_column(column, overflow="fold")
    reasons = {rule.name: rule.reason for rule in RULES}
    for exclusion in pass_set.exclusions:
        detail = "" if reasons.get(exclusion.rule) == exclusion.detail else exclusion.detail
        table.add_row(exclusion.name, exclusion.level, exclusion.rule, detail)
    console.print(table, markup=False)
    console.print("rules:", highlight=False)
    for rule in RULES:
        console.print(f"  {rule.name}: {rule.reason}", highlight=False, markup=False)
    console.print(f"{len(pass_set.exclusions)} excluded, {len(pass_set)} searchable.", highlight=False)
