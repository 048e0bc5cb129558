"""The evaluation that follows a training run: each trained task on its held-out split.

:func:`evaluation_commands` lists, per task trained, the ``llm-compiler evaluate``
command that measures the new model on the test split of the data it was trained
from, as a user would type it, writing under ``OUT/eval/TASK``:

* flag tuning: ``evaluate flag-tuning`` on the test samples' programs (their IR, read
  back from the prompts into ``OUT/eval/flag-tuning/programs``), the model beside
  ``oz`` and the built-in predictor, every list measured and validated;
* compiler emulation: ``evaluate emulation`` on the test split (does the code compile,
  does it match the compiler's output, how far off are the sizes);
* disassembly: ``evaluate perplexity`` on the test split (a round trip needs the
  programs' sources, which a dataset does not keep).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from llm_compiler.evaluation.perplexity import dataset_samples
from llm_compiler.files import atomic_write_text
from llm_compiler.tasks.prompts import parse_flag_tuning_prompt
from llm_compiler.training.data import DataSource

EVAL = "eval"


@dataclass(frozen=True)
class EvaluationCommand:
    """One evaluation of the trained model.

    Attributes:
        task: The task evaluated.
        argv: ``llm-compiler`` arguments.
        out: Where it writes its reports.
    """

    task: str
    argv: tuple[str, ...]
    out: Path


def _test_samples(sources: Sequence[DataSource], task: str, limit: int) -> list[dict[str, object]]:
    samples: list[dict[str, object]] = []
    for source in sources:
        for sample in dataset_samples(source.path, "test"):
            if sample.get("task") == task:
                samples.append(sample)
                if len(samples) >= limit:
                    return samples
    return samples


def evaluation_commands(
    sources: Sequence[DataSource], tasks: Sequence[str], model_dir: Path, limit: int, device: str
) -> list[EvaluationCommand]:
    """The evaluations of ``model_dir`` on the test split of each task in ``tasks`` (module docstring).

    Args:
        sources: The datasets trained on.
        tasks: The tasks trained.
        model_dir: The trained model.
        limit: Test samples (flag tuning: programs) per task.
        device: The model's device (``cpu``, ``cuda``, ``auto``).

    Returns:
        The commands; a task without test samples has none.
    """
    model = f"hf:{model_dir}"
    common = ("--model", model, "--device", device)
    commands = []
    for task in sorted(set(tasks)):
        out = model_dir / EVAL / task
        if task == "flag-tuning":
            samples = _test_samples(sources, task, limit)
            if not samples:
                continue
            programs = out / "programs"
            programs.mkdir(parents=True, exist_ok=True)
            for sample in samples:
                ir = parse_flag_tuning_prompt(str(sample["prompt"])).ir
                atomic_write_text(programs / f"{sample.get('program', 'unit')}.ll", ir)
            argv = ["evaluate", "flag-tuning", str(programs), "--system", "oz", "--system", "builtin"]
            argv += ["--system", model, "--device", device, "--out", str(out), "--resume"]
        else:
            found = next(
                (
                    (source, samples)
                    for source in sources
                    if (samples := _test_samples([source], task, limit))
                ),
                None,
            )
            if found is None:
                continue
            source, samples = found
            kind = "emulation" if task == "emulation" else "perplexity"
            argv = ["evaluate", kind, str(source.path), "--split", "test", "--limit", str(limit), *common]
            if kind == "emulation":
                # A model that has not learnt to stop would otherwise write until the context ends.
                longest = max(int(str(sample.get("answer_tokens") or 0)) for sample in samples)
                argv += ["--max-tokens", str(max(64, longest + longest // 4))]
            argv += ["--out", str(out), "--resume"]
        commands.append(EvaluationCommand(task, tuple(argv), out))
    return commands
