"""The written rules that turn ``opt --print-passes`` into the searchable pass set.

They mirror LLM Compiler's (system notes, section 4): search every default pipeline
and every optimizing transform pass, at its default parameters; leave out analyses,
utility passes (printers, verifiers, graph writers, debugging aids), instrumentation,
and passes that do not preserve a translation unit's meaning under separate
compilation. Each rule has a name and a reason, so ``llm-compiler passes --excluded``
can say why every other pass is not searched. The first rule that matches decides.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from llm_compiler.passes.registry import RegisteredPass


@dataclass(frozen=True)
class Rule:
    """An exclusion rule: passes for which ``matches`` is true are not searched."""

    name: str
    reason: str
    matches: Callable[[RegisteredPass], bool]


def _named(*names: str) -> Callable[[RegisteredPass], bool]:
    chosen = frozenset(names)
    return lambda entry: entry.name in chosen


def _prefixed(*prefixes: str) -> Callable[[RegisteredPass], bool]:
    return lambda entry: entry.name.startswith(prefixes)


def _any(*tests: Callable[[RegisteredPass], bool]) -> Callable[[RegisteredPass], bool]:
    return lambda entry: any(test(entry) for test in tests)


RULES: tuple[Rule, ...] = (
    Rule(
        "analysis",
        "an analysis, not a transform: the pass manager computes analyses on demand",
        lambda entry: entry.kind != "pass",
    ),
    Rule(
        "machine-ir",
        "works on machine IR inside the code generator, not on LLVM-IR in opt",
        lambda entry: entry.level == "machine",
    ),
    Rule(
        "utility",
        "a printer, verifier, graph writer, counter or debugging aid: changes no code, "
        "or only names and debug information",
        _any(
            _prefixed("print", "dot-", "view-", "no-op-", "trigger-", "verify"),
            _named(
                "aa-eval",
                "pa-eval",
                "instcount",
                "lint",
                "helloworld",
                "invalidate",
                "debugify",
                "check-debugify",
                "count-visits",
                "instnamer",
                "annotation-remarks",
                "annotation2metadata",
                "transform-warning",
                "extract-blocks",
                "loop-extract",
                "name-anon-globals",
                "canonicalize-aliases",
                "require",
                "strip-debug-declare",
                "strip-dead-debug-info",
                "strip-nonlinetable-debuginfo",
                "strip-dead-cg-profile",
                "func-properties-stats",
                "kernel-info",
                # Renames values and reorders instructions into a canonical form for diffing IR;
                # seen to miscompile with LLVM 22 (function(normalize), rejected by validation).
                "normalize",
            ),
        ),
    ),
    Rule(
        "instrumentation",
        "adds sanitizer, profiling, coverage or hardening instrumentation (or consumes "
        "profiles): changes what the program does, not how small it is",
        _any(
            _prefixed("pgo-", "memprof", "pseudo-probe", "sancov", "sanmd"),
            _named(
                "asan",
                "hwasan",
                "msan",
                "tsan",
                "tsan-module",
                "dfsan",
                "nsan",
                "insert-gcov-profiling",
                "instrprof",
                "instrorderfile",
                "ctx-instr-lower",
                "sample-profile",
                "synthetic-counts-propagation",
                "bounds-checking",
                "kcfi",
                "cross-dso-cfi",
                "cfguard",
                "ee-instrument",
                "jmc-instrumenter",
                "poison-checking",
                "safe-stack",
                "stack-protector",
                "embed-bitcode",
                "cg-profile",
                "lower-allow-check",
                "add-discriminators",
                "declare-to-assign",
                "rtsan",
                "tysan",
                "alloc-token",
                "ctx-instr-gen",
                "ctx-prof-flatten",
                "assign-guid",
                "noinline-nonprevailing",
                "prof-inject",
            ),
        ),
    ),
    Rule(
        "not-separate-compilation-safe",
        "assumes the whole program is visible, or renames/strips symbols other units "
        "link against: breaks semantics when a translation unit is compiled alone",
        _named(
            "internalize",
            "wholeprogramdevirt",
            "function-import",
            "lowertypetests",
            "rewrite-symbols",
            "strip",
            "strip-nondebug",
            "metarenamer",
            "openmp-opt-postlink",
            "memprof-context-disambiguation",
            "simplify-type-tests",
            "norecurse-lto-inference",
            "fatlto-cleanup",
        ),
    ),
    Rule(
        "codegen-lowering",
        "target lowering that the code generator runs itself before instruction "
        "selection (needs a target machine; running it in opt duplicates codegen work)",
        _named(
            "codegenprepare",
            "atomic-expand",
            "dwarf-eh-prepare",
            "sjlj-eh-prepare",
            "wasm-eh-prepare",
            "win-eh-prepare",
            "callbr-prepare",
            "expand-large-div-rem",
            "expand-large-fp-convert",
            "expand-memcmp",
            "indirectbr-expand",
            "interleaved-access",
            "interleaved-load-combine",
            "pre-isel-intrinsic-lowering",
            "scalarize-masked-mem-intrin",
            "select-optimize",
            "typepromotion",
            "tlshoist",
            "lower-emutls",
            "lower-global-dtors",
            "lower-ifunc",
            "expand-variadics",
            "gc-lowering",
            "shadow-stack-gc-lowering",
            "place-safepoints",
            "rewrite-statepoints-for-gc",
            "strip-gc-relocates",
            "global-merge",
            "hardware-loops",
            "declare-runtime-libcalls",
            "replace-with-veclib",
            "expand-reductions",
            "complex-deinterleaving",
            "unreachableblockelim",
        ),
    ),
    Rule(
        "language-runtime",
        "mandatory lowering for another language's runtime (coroutines, Objective-C ARC, "
        "HIP, DirectX, GPU offloading): not a code-size optimization of C/C++",
        _prefixed("coro-", "objc-arc", "hipstdpar-", "dxil-"),
    ),
    Rule(
        "gpu-structurization",
        "rewrites control flow into the structured form GPU targets need; no size "
        "purpose on CPUs, and seen to break CPU programs (structurizecfg, "
        "unify-loop-exits)",
        _named("structurizecfg", "unify-loop-exits", "fix-irreducible"),
    ),
    Rule(
        "pipeline-fragment",
        "a part of a default pipeline that needs an optimization level; the whole "
        "default<O*> pipelines are searched instead",
        _named("function-simplification"),
    ),
)


def first_matching_rule(entry: RegisteredPass) -> Rule | None:
    """The rule that excludes ``entry`` from the search, or None if it is searchable."""
    for rule in RULES:
        if rule.matches(entry):
            return rule
    return None
