"""Acceptance: `llm-compiler measure` sizes equal a by-hand opt | llc | llvm-size pipeline.

For every example program and for -O0, -Oz and three random pass lists, the binary
size printed by the CLI must equal text + data printed by ``llvm-size`` on an object
made by running clang's front end, ``opt -passes=...`` and ``llc -filetype=obj`` by hand.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from llm_compiler.core.compiler import Compiler
from llm_compiler.passes.sampling import random_pass_list
from llm_compiler.toolchain.frontend import language_of
from llm_compiler.toolchain.llvm import Toolchain
from llm_compiler.toolchain.runner import run_command
from tests.conftest import EXAMPLE_FILES, run_cli


def by_hand(toolchain: Toolchain, source: Path, pipeline: str, scratch: Path) -> int:
    """text + data of the object made by hand (raises CommandFailed when a tool fails)."""
    clang = toolchain.tool("clang++" if language_of(source) == "c++" else "clang")
    ir, optimized, obj = scratch / "in.ll", scratch / "out.ll", scratch / "out.o"
    run_command(
        [clang, "-Oz", "-Xclang", "-disable-llvm-passes", "-emit-llvm", "-S", source, "-o", ir], timeout=120
    )
    run_command([toolchain.tool("opt"), f"-passes={pipeline}", ir, "-S", "-o", optimized], timeout=120)
    run_command([toolchain.tool("llc"), "-filetype=obj", optimized, "-o", obj], timeout=120)
    out = run_command([toolchain.tool("llvm-size"), obj], timeout=30).stdout_text
    text, data = map(int, re.split(r"\s+", out.splitlines()[1].strip())[:2])
    return text + data


#: Sizes made by hand, by (source, pipeline): the same for either engine, so the second
#: engine's run checks its CLI figures against the first one's hand-made objects.
HAND_MADE: dict[tuple[Path, str], int] = {}


def hand_made(toolchain: Toolchain, source: Path, pipeline: str, scratch: Path) -> int:
    if (source, pipeline) not in HAND_MADE:
        HAND_MADE[source, pipeline] = by_hand(toolchain, source, pipeline, scratch)
    return HAND_MADE[source, pipeline]


def pipelines(compiler: Compiler) -> list[str]:
    rng = random.Random(20240702)
    lists = [str(random_pass_list(rng, compiler.pass_set, max_length=12)) for _ in range(3)]
    return ["default<O0>", "default<Oz>", *lists]


@pytest.mark.slow
def test_cli_sizes_equal_hand_made_objects(compiler: Compiler, tmp_path: Path) -> None:
    for pipeline in pipelines(compiler):
        engine = ("--engine", compiler.engine)
        result = run_cli("measure", *map(str, EXAMPLE_FILES), "--passes", pipeline, "--json", *engine)
        assert result.returncode == 0, result.stderr
        records = {Path(r["file"]).name: r for r in map(json.loads, result.stdout.splitlines())}
        assert set(records) == {path.name for path in EXAMPLE_FILES}
        for source in EXAMPLE_FILES:
            record = records[source.name]
            assert record["llvm_version"] == compiler.llvm_version
            assert record["passes"]["pipeline"] == pipeline
            expected = hand_made(compiler.toolchain, source, pipeline, tmp_path)
            measured = record["passes"]
            assert measured["binary_size"] == expected, (source.name, pipeline)
            assert measured["binary_size"] == measured["text"] + measured["data"]
            if pipeline == "default<Oz>":
                assert record["oz"] == measured


def test_unoptimized_is_the_front_end_output_lowered(compiler: Compiler, tmp_path: Path) -> None:
    source = EXAMPLE_FILES[0]
    record = json.loads(run_cli("measure", str(source), "--json", "--engine", compiler.engine).stdout)
    assert record["passes"] is None
    # Lowering the front-end IR through an empty module pipeline changes nothing.
    assert record["unoptimized"]["binary_size"] == by_hand(
        compiler.toolchain, source, "no-op-module", tmp_path
    )
    assert record["unoptimized"]["pipeline"] is None and record["oz"]["pipeline"] == "default<Oz>"
