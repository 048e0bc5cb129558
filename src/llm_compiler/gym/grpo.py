"""Language models in the loop: a reward TRL's ``GRPOTrainer`` can call.

:class:`PassListReward` scores a model's answers to the paper's flag tuning prompt
(:func:`~llm_compiler.tasks.prompts.flag_tuning_prompt`) by what the tool would keep:

1. the pass list is read from the answer by the tasks' one answer reader
   (:func:`~llm_compiler.tasks.answers.extract_pass_list`) and checked against the pass
   grammar and the searchable set; no text reaches ``opt`` unparsed;
2. the list is measured (``.text + .data``, the paper's metric) beside -Oz;
3. a list smaller than -Oz is validated as any kept list is (a determinism check, then
   the gate: the program's link and run, PassListEval);
4. the reward is ``(Oz - kept) / Oz``, where ``kept`` is the list's size if it passed and
   -Oz's otherwise: the fraction of -Oz's bytes the answer saves, 0.0 for an answer that
   cannot be used (no pass list, an unknown pass, a crash of LLVM, a failed check) or is
   not smaller than -Oz, as the tool itself never keeps such a list.

A malformed answer never raises. Measurements and verdicts are kept per (benchmark,
pipeline), so a group of completions that repeat a list costs one compile.

TRL calls a reward function with the prompts, the completions and each dataset column
as a keyword argument; the dataset :func:`prompt_rows` builds has a ``benchmark`` column
(a benchmark URI, :mod:`llm_compiler.gym.benchmarks`) beside the ``prompt``::

    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer
    from llm_compiler.gym.grpo import PassListReward, prompt_rows

    rows = prompt_rows(["file:examples/crc32.c", "file:examples/bitops.c"])
    reward = PassListReward()
    trainer = GRPOTrainer(model="facebook/llm-compiler-7b-ftd", reward_funcs=reward,
                          args=GRPOConfig(output_dir="grpo", max_completion_length=256),
                          train_dataset=Dataset.from_list(rows))
    trainer.train()

On a GPU, start from the training presets (``llm-compiler train --help``,
``configs/accelerate/``): the released 7B model with LoRA (``peft``), bf16, vLLM for
generation (``GRPOConfig(use_vllm=True)``), 8 completions per prompt, and prompts of at
most the preset's context (units whose IR does not fit are left out, as the paper's
datasets leave them out). Validation runs on the CPU beside the GPU; give the reward a
compiler with several workers (``Compiler(workers=N)``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from llm_compiler.core.compiler import Compiler
from llm_compiler.core.program import Program
from llm_compiler.errors import LlmCompilerError
from llm_compiler.gym.benchmarks import load_benchmark
from llm_compiler.selection import Selector, Verdict, make_gate
from llm_compiler.tasks.answers import extract_pass_list
from llm_compiler.tasks.prompts import flag_tuning_prompt


def prompt_rows(uris: Iterable[str], compiler: Compiler | None = None) -> list[dict[str, str]]:
    """One training row per benchmark: the flag tuning prompt of its unoptimized IR and its URI.

    Raises:
        InvalidInput: A URI names nothing.
    """
    compiler = compiler or Compiler()
    return [
        {"prompt": flag_tuning_prompt(load_benchmark(uri, compiler).program.ir), "benchmark": uri}
        for uri in uris
    ]


def _text(completion: Any) -> str:
    """A completion's text, for TRL's plain and conversational formats."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list) and completion and isinstance(completion[-1], dict):
        return str(completion[-1].get("content", ""))
    return ""


class PassListReward:
    """The reward of a model's flag tuning answers (module docstring).

    Args:
        compiler: The compiler to measure with (default: one on the LLVM found).
        suites: The validation suites of the gate (default: the built-in one).
    """

    __name__ = "pass_list_reward"  # what TRL's logs call a reward function

    def __init__(self, compiler: Compiler | None = None, suites: Sequence[str] = ("builtin",)) -> None:
        self.compiler = compiler or Compiler()
        self.selector = Selector(self.compiler, make_gate(self.compiler, suites))
        self._programs: dict[str, Program] = {}
        self._oz: dict[str, int] = {}
        self._rewards: dict[tuple[str, str], float] = {}
        #: How the answers scored so far ended: verdicts and reasons, counted.
        self.outcomes: dict[str, int] = {}

    def __call__(
        self, prompts: Sequence[Any], completions: Sequence[Any], benchmark: Sequence[str], **_: Any
    ) -> list[float]:
        """One reward per completion; ``benchmark`` is the dataset's column of URIs."""
        return [
            self.score(uri, _text(completion)) for uri, completion in zip(benchmark, completions, strict=True)
        ]

    def _count(self, outcome: str) -> None:
        self.outcomes[outcome] = self.outcomes.get(outcome, 0) + 1

    def score(self, uri: str, answer: str) -> float:
        """The reward of ``answer`` for benchmark ``uri`` (module docstring); never raises
        for a malformed answer.

        Raises:
            InvalidInput: ``uri`` names no benchmark (a bad dataset, not a bad answer).
        """
        if uri not in self._programs:
            program = load_benchmark(uri, self.compiler).program
            self._programs[uri] = program
            self._oz[uri] = self.compiler.measure_oz(program).binary_size
        program, oz = self._programs[uri], self._oz[uri]
        try:
            passes = self.compiler.passes(extract_pass_list(answer).pipeline)
        except LlmCompilerError as error:
            self._count(type(error).__name__)
            return 0.0
        key = (uri, passes.pipeline)
        if key not in self._rewards:
            self._rewards[key] = self._judge(program, passes, oz)
        return self._rewards[key]

    def _judge(self, program: Program, passes: Any, oz: int) -> float:
        try:
            measured = self.compiler.measure(program, passes)
        except LlmCompilerError:
            self._count(str(Verdict.COMPILE_FAILURE))
            return 0.0
        size = measured.binary_size
        if size >= oz:
            self._count(str(Verdict.NOT_SMALLER))
            return 0.0
        verdict, *_ = self.selector.check(program, passes, size, measured.ir_hash or "")
        self._count(str(verdict))
        return (oz - size) / oz if verdict is Verdict.VALIDATED else 0.0
