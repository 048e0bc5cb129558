"""Steps per second of the pass-ordering environment against a subprocess per step.

Run::

    LLVM_BIN=/usr/lib/llvm-19/bin .venv/bin/python bench/gym/bench_steps.py [--episodes 3 --steps 30]

Figures are steps per second. For each benchmark (default: the six C examples) and
each seeded episode of random
actions, three ways of stepping are timed side by side, episode after episode, for two
rewards, ``IrInstructionCount`` (no code generation) and ``BinarySize`` (an object each step):

* **env**: ``PassOrderingEnv`` on the in-process engine: each step runs only its new
  pass on the state the previous steps left (prefix states);
* **env, subprocess engine**: the same environment on ``Compiler(engine="subprocess")``,
  which has no prefix states and runs one ``opt`` per element of the pipeline;
* **a process per step**: what a loop without kept state does: each step runs
  ``opt -passes=<the whole pipeline so far>`` on the unoptimized IR (and for the size
  reward ``llc -filetype=obj`` and the object's ``.text + .data``), through the
  project's subprocess runner.

The environments are started (workers up, the benchmark loaded, the -Oz baseline
computed) before the clock starts: the figures are steady-state steps. The first step
of a fresh process (worker start-up) is printed apart. At the end of each episode the
final instruction count of the env and of the whole-pipeline run are compared; a
mismatch (analyses kept between passes in one ``opt`` run can give another module) is
counted and printed, not hidden.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

from llm_compiler.core.compiler import Compiler
from llm_compiler.gym.env import PassOrderingEnv
from llm_compiler.toolchain.elf import berkeley_size
from llm_compiler.toolchain.ir import count_instructions
from llm_compiler.toolchain.runner import run_command

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
REWARDS = ("IrInstructionCount", "BinarySize")


def per_step_processes(compiler: Compiler, ir: str, elements: list[str], sizes: bool) -> tuple[float, int]:
    """Seconds for the episode run as one opt (and llc) per step; the final count."""
    opt, llc = compiler.toolchain.tool("opt"), compiler.toolchain.tool("llc")
    started = time.perf_counter()
    count = 0
    for step in range(1, len(elements) + 1):
        pipeline = ",".join(elements[:step])
        optimized = run_command(
            [opt, f"-passes={pipeline}", "-S", "-o", "-", "-"], input=ir.encode(), timeout=120
        )
        count = count_instructions(optimized.stdout_text)
        if sizes:
            obj = run_command([llc, "-filetype=obj", "-o", "-", "-"], input=optimized.stdout, timeout=120)
            berkeley_size(obj.stdout).binary_size  # noqa: B018  # measured as the env does
    return time.perf_counter() - started, count


def episode(env: PassOrderingEnv, actions: list[int]) -> float:
    started = time.perf_counter()
    for action in actions:
        env.step(action)
    return time.perf_counter() - started


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=3)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("benchmarks", nargs="*", default=sorted(str(p) for p in EXAMPLES.glob("*.c")))
    args = parser.parse_args(argv)

    first = time.perf_counter()
    cold = Compiler(timeout=120, workers=1)
    probe = PassOrderingEnv(
        benchmark=f"file:{args.benchmarks[0]}", observation_space="IrInstructionCount", compiler=cold
    )
    probe.reset()
    started = time.perf_counter()
    probe.step(0)
    print(f"first step of a fresh process: {1000 * (time.perf_counter() - started):.0f} ms "
          f"(environment ready after {time.perf_counter() - first:.1f} s)")  # fmt: skip
    cold.close()

    inprocess = Compiler(timeout=120, workers=1)
    subprocess = Compiler(timeout=120, engine="subprocess")
    shape = f"{len(args.benchmarks)} benchmarks x {args.episodes} episodes x {args.steps} steps"
    print(f"LLVM {inprocess.llvm_version}; {shape}")
    print("| reward | env | env, subprocess engine | a process per step | env vs per step |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for reward in REWARDS:
        sizes = reward == "BinarySize"
        totals = {"env": 0.0, "sub": 0.0, "proc": 0.0}
        steps = mismatches = 0
        for path in args.benchmarks:
            envs = {
                name: PassOrderingEnv(
                    benchmark=f"file:{path}",
                    observation_space="IrInstructionCount",
                    reward_space=reward,
                    compiler=c,
                )
                for name, c in (("env", inprocess), ("sub", subprocess))
            }
            names = envs["env"].action_names
            for number in range(args.episodes):
                rng = random.Random(f"{path}:{number}")
                actions = [rng.randrange(len(names)) for _ in range(args.steps)]
                for name, env in envs.items():
                    env.reset()
                    totals[name] += episode(env, actions)
                program = envs["env"].benchmark.program  # type: ignore[union-attr]
                seconds, count = per_step_processes(inprocess, program.ir, [names[a] for a in actions], sizes)
                totals["proc"] += seconds
                steps += len(actions)
                if count != envs["env"].state.ir_instructions:
                    mismatches += 1
        rates = {name: steps / seconds for name, seconds in totals.items()}
        print(f"| {reward} | {rates['env']:.1f} | {rates['sub']:.1f} | {rates['proc']:.1f} | "
              f"{rates['env'] / rates['proc']:.1f}x |")  # fmt: skip
        episodes = len(args.benchmarks) * args.episodes
        print(f"  ({reward}: final instruction counts of the env and of one opt run differ in {mismatches} "
              f"of {episodes} episodes)", file=sys.stderr)  # fmt: skip
    inprocess.close()
    subprocess.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
