"""The in-process engine: same answers as opt and llc, crash and hang isolation, prefix states."""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from llm_compiler.core.compiler import Compiler
from llm_compiler.core.program import Program
from llm_compiler.corpus.functions import extract_function, module_bitcode
from llm_compiler.errors import CommandFailed, CompileTimeout, ToolchainError
from llm_compiler.passes.sampling import random_pass_list
from llm_compiler.toolchain.frontend import FrontendOptions
from llm_compiler.toolchain.ir import defined_functions
from llm_compiler.toolchain.llvm import Toolchain
from llm_compiler.validation.suites import builtin_suite
from tests.conftest import EXAMPLE_FILES


@pytest.fixture(scope="module")
def engines(toolchain: Toolchain) -> Iterator[tuple[Compiler, Compiler]]:
    with (
        Compiler(toolchain, engine="subprocess") as subprocess_engine,
        Compiler(toolchain, engine="inprocess", workers=2) as inprocess_engine,
    ):
        yield subprocess_engine, inprocess_engine


@pytest.fixture(scope="module")
def programs(engines: tuple[Compiler, Compiler]) -> list[Program]:
    return [engines[0].load(path) for path in EXAMPLE_FILES]


@pytest.fixture(scope="module")
def function_modules(engines: tuple[Compiler, Compiler], programs: list[Program]) -> list[Program]:
    """50 function-sized modules extracted from the examples."""
    rng = random.Random(11)
    modules = []
    for program in programs:
        bitcode = module_bitcode(engines[0], program)
        modules += [extract_function(engines[0], program, f, bitcode) for f in defined_functions(program.ir)]
    return rng.sample(modules, 50)


def assert_same(engines: tuple[Compiler, Compiler], program: Program, pipeline: str, asm: bool) -> None:
    reference, inprocess = engines
    passes = reference.passes(pipeline)
    assert inprocess.optimize(program, passes) == reference.optimize(program, passes), (
        program.name,
        pipeline,
    )
    assert inprocess.measure(program, passes) == reference.measure(program, passes), (program.name, pipeline)
    assert inprocess.object_code(program, passes)[0] == reference.object_code(program, passes)[0]
    if asm:
        assert inprocess.assemble(program, passes) == reference.assemble(program, passes), (
            program.name,
            pipeline,
        )


@pytest.mark.slow
def test_identical_answers_on_the_examples(
    engines: tuple[Compiler, Compiler], programs: list[Program]
) -> None:
    rng = random.Random(4)
    pipelines = ["default<O0>", "default<Oz>", "default<O3>"]
    pipelines += [str(random_pass_list(rng, engines[0].pass_set, 25)) for _ in range(2)]
    for program in programs:
        assert engines[1].measure(program) == engines[0].measure(program)
        for pipeline in pipelines:
            assert_same(engines, program, pipeline, asm=True)


@pytest.mark.slow
def test_identical_answers_on_function_modules(
    engines: tuple[Compiler, Compiler], function_modules: list[Program]
) -> None:
    rng = random.Random(5)
    for module in function_modules:
        pipeline = rng.choice(["default<Oz>", str(random_pass_list(rng, engines[0].pass_set, 15))])
        assert_same(engines, module, pipeline, asm=module is function_modules[0])


@pytest.mark.parametrize("name", ["cpp_class_matrix", "c_core_sw_chars", "cpp_class_vec2", "cpp_exc_unwind"])
def test_identical_objects_where_the_c_api_emitter_differs_from_llc(
    engines: tuple[Compiler, Compiler], tmp_path: Path, name: str
) -> None:
    """Static constructors (.init_array, not .ctors) and library-dependent lowering
    (memcmp/bcmp expansion) must come out as llc makes them."""
    test = next(program for program in builtin_suite().programs if program.name == name)
    source = tmp_path / f"{name}{test.suffix}"
    source.write_text(test.source)
    program = engines[0].load(source, FrontendOptions(extra_flags=test.flags))
    for pipeline in ("function(sroa)", "default<Oz>"):
        assert_same(engines, program, pipeline, asm=True)


def test_a_crashing_worker_is_replaced_and_recorded(toolchain: Toolchain, programs: list[Program]) -> None:
    with Compiler(toolchain, engine="inprocess", workers=1, allow_extra=["trigger-crash-module"]) as compiler:
        good = compiler.passes("module(default<Oz>)")
        before = compiler.measure(programs[0], good)
        with pytest.raises(CommandFailed) as caught:
            compiler.measure(programs[0], compiler.passes("module(trigger-crash-module)"))
        assert caught.value.crashed and caught.value.signal_name == "SIGABRT"
        assert "trigger-crash-module" in caught.value.command_line
        assert "crash" in caught.value.stderr.lower() or "stack dump" in caught.value.stderr.lower()
        assert compiler.measure(programs[0], good) == before
        assert compiler.pool.stats.crashes == 1 and compiler.pool.stats.workers_started == 2


def test_a_hanging_worker_is_killed_and_replaced(toolchain: Toolchain, programs: list[Program]) -> None:
    shapes = next(program for program in programs if program.name.endswith("shapes.cpp"))
    with Compiler(toolchain, engine="inprocess", workers=1, timeout=0.02) as compiler:
        slow = compiler.passes(",".join(["module(default<O3>)"] * 4))
        with pytest.raises(CompileTimeout) as caught:
            compiler.measure(shapes, slow)
        assert "shapes.cpp" in str(caught.value) and "worker was killed" in str(caught.value)
        compiler.pool.timeout = 120
        assert compiler.measure(shapes, slow).binary_size > 0
        assert compiler.pool.stats.timeouts == 1


def test_a_rejected_pipeline_is_an_error_not_a_crash(toolchain: Toolchain, programs: list[Program]) -> None:
    with Compiler(toolchain, engine="inprocess", workers=1, allow_extra=["globaldce"]) as compiler:
        with pytest.raises(CommandFailed, match="LLVM rejected") as caught:
            compiler.measure(programs[0], compiler.passes("globaldce<in-lto-post-link>"))
        assert not caught.value.crashed and compiler.pool.stats.crashes == 0


def test_prefix_states_give_the_same_results(toolchain: Toolchain, programs: list[Program]) -> None:
    rng = random.Random(8)
    with (
        Compiler(toolchain, engine="inprocess", workers=1) as cached,
        Compiler(toolchain, engine="inprocess", workers=1) as uncached,
    ):
        base = random_pass_list(rng, cached.pass_set, 12)
        for program in programs[:3]:
            variants = [base] + [base[:i] + base[i + 1 :] for i in range(len(base))]
            for passes in variants:
                assert cached.measure_stepwise(program, passes) == uncached.measure_stepwise(
                    program, passes, use_cache=False
                )
            # Almost always equal to the whole pipeline, too (analyses are not kept between steps).
            assert (
                cached.measure_stepwise(program, base).binary_size
                == cached.measure(program, base).binary_size
            )


def test_prefix_states_are_reused_within_a_memory_bound(
    toolchain: Toolchain, programs: list[Program]
) -> None:
    from llm_compiler.toolchain.inprocess import InProcessLLVM
    from llm_compiler.toolchain.ir import count_instructions

    engine = InProcessLLVM(toolchain, prefix_cache_instructions=count_instructions(programs[0].ir) * 3)
    engine.add_program(programs[0].id, programs[0].ir.encode())
    elements = ("function(sroa)", "module(globalopt)", "function(instcombine<no-verify-fixpoint>)")
    first = engine.evaluate_stepwise(programs[0].id, elements)
    again = engine.evaluate_stepwise(programs[0].id, (*elements[:2], "function(simplifycfg)"))
    assert first.cached_steps == 0 and again.cached_steps == 2
    state = engine._state(programs[0].id)
    assert engine._cached_instructions <= engine.prefix_cache_instructions
    assert len(state.prefixes) == 3 and elements[:1] not in state.prefixes


def test_auto_falls_back_to_subprocess_when_the_library_is_missing(
    toolchain: Toolchain, tmp_path: Path
) -> None:
    (tmp_path / "bin").mkdir()
    (tmp_path / "lib").mkdir()
    for tool in os.listdir(toolchain.bin_dir):
        (tmp_path / "bin" / tool).symlink_to(toolchain.bin_dir / tool)
    stripped = Toolchain(tmp_path / "bin", toolchain.version)
    compiler = Compiler(stripped, engine="auto")
    assert compiler.engine == "subprocess" and "libLLVM" in compiler.engine_note
    with pytest.raises(ToolchainError, match="--engine subprocess"):
        Compiler(stripped, engine="inprocess")


@pytest.mark.parametrize("engine", ["subprocess", "inprocess"])
def test_keep_ir_lowers_a_measured_list_without_compiling_it_again(
    toolchain: Toolchain, engines: tuple[Compiler, Compiler], programs: list[Program], engine: str
) -> None:
    reference = engines[0]
    passes = reference.passes("module(default<Oz>)")
    with Compiler(toolchain, engine=engine, workers=1, keep_ir=True) as compiler:
        measured = compiler.measure(programs[0], passes)
        compiles = compiler.counts["compiles"]
        ir = compiler.optimize(programs[0], passes)
        assert compiler.counts["compiles"] == compiles and compiler.counts["ir-hits"] == 1
        assert ir == reference.optimize(programs[0], passes)
        assert measured == reference.measure(programs[0], passes)
        other = compiler.passes("function(sroa)")
        assert compiler.optimize(programs[0], other) == reference.optimize(programs[0], other)
        assert compiler.counts["ir-hits"] == 1  # compiled by optimize itself, then kept:
        assert compiler.optimize(programs[0], other) == reference.optimize(programs[0], other)
        assert compiler.counts["ir-hits"] == 2
