"""Training data: the datasets of ``llm-compiler data``, mixed by ratio, tokenized as the models read them.

``--data DIR[:RATIO]`` names a dataset folder (or one split folder, or a shard) and the
share of its training samples to take: ``0.2`` takes a fifth of them (the paper kept a
share of an earlier stage's data in later stages), ``2`` takes each twice, 1 (the
default) takes them all. Which samples a fraction takes is a function of the seed.

A sample is tokenized exactly as the model meets it at inference: the prompt alone with
BOS in front (as the backends send it), then the answer without special tokens and EOS.
The loss falls on the answer and EOS only (``completion_mask``). A sample longer than
the context is never cut: that would teach answers that stop mid-code. It is refused
with the counts (``drop_long`` drops it instead and counts it).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from llm_compiler.errors import InvalidInput, TrainingError
from llm_compiler.evaluation.perplexity import dataset_samples


@dataclass(frozen=True)
class DataSource:
    """A dataset named by ``--data`` and the share of its samples taken.

    Attributes:
        path: The dataset folder, a split folder or a JSONL shard.
        ratio: Samples taken per sample there (0.2: a fifth; 2: each twice).
    """

    path: Path
    ratio: float = 1.0

    @classmethod
    def parse(cls, text: str) -> DataSource:
        """``DIR`` or ``DIR:RATIO``.

        Raises:
            InvalidInput: The ratio is not a positive number.
        """
        path, ratio = text, 1.0
        head, colon, tail = text.rpartition(":")
        if colon and head:
            try:
                ratio = float(tail)
            except ValueError:
                pass  # a colon in the path itself
            else:
                path = head
        if not ratio > 0:
            raise InvalidInput(f"--data {text}: the ratio must be a positive number.")
        return cls(Path(path).expanduser(), ratio)


@dataclass
class TokenizedData:
    """Tokenized samples ready for the trainer, and what was read and dropped.

    Attributes:
        input_ids: Per sample: BOS, prompt, answer, EOS.
        completion_mask: Per sample: 1 where the loss counts (answer and EOS).
        tasks: Per sample: its task.
        read: Samples read per task.
        dropped_long: Samples over the context, per task (with ``drop_long``).
        longest: The longest sample kept, in tokens.
    """

    input_ids: list[list[int]] = field(default_factory=list)
    completion_mask: list[list[int]] = field(default_factory=list)
    tasks: list[str] = field(default_factory=list)
    read: Counter[str] = field(default_factory=Counter)
    dropped_long: Counter[str] = field(default_factory=Counter)
    longest: int = 0

    def __len__(self) -> int:
        return len(self.input_ids)

    @property
    def tokens(self) -> int:
        return sum(len(ids) for ids in self.input_ids)

    @property
    def answer_tokens(self) -> int:
        return sum(sum(mask) for mask in self.completion_mask)

    def to_json(self) -> dict[str, Any]:
        return {
            "samples": len(self),
            "tokens": self.tokens,
            "answer_tokens": self.answer_tokens,
            "per_task": dict(Counter(self.tasks)),
            "read": dict(self.read),
            "dropped_over_context": dict(self.dropped_long),
            "longest": self.longest,
        }


def read_mixture(sources: Sequence[DataSource], split: str, seed: int) -> list[dict[str, Any]]:
    """The samples of ``split`` from every source, each taken ``ratio`` times (fractions by seed).

    Raises:
        InvalidInput: A source holds no samples of the split.
    """
    mixed: list[dict[str, Any]] = []
    for number, source in enumerate(sources):
        samples = list(dataset_samples(source.path, split))
        if not samples:
            raise InvalidInput(
                f"--data {source.path}: no {split} samples there. Give a folder written by "
                f"`llm-compiler data TASK ... --out DIR` (its {split}/ shards), a split folder or a shard."
            )
        whole, fraction = divmod(source.ratio, 1.0)
        taken = samples * int(whole)
        extra = round(fraction * len(samples))
        if extra:
            taken += random.Random(f"{seed}:{number}:{source.path}").sample(samples, extra)
        mixed += taken
    return mixed


def tokenize(
    samples: Sequence[dict[str, Any]], tokenizer: Any, max_length: int, *, drop_long: bool = False
) -> TokenizedData:
    """Tokenizes (prompt, answer) samples as the model meets them; see the module docstring.

    Args:
        samples: Dataset samples (``prompt``, ``answer``, ``task``).
        tokenizer: A transformers tokenizer that adds BOS.
        max_length: The context trained on.
        drop_long: Drop samples longer than ``max_length`` instead of refusing them.

    Raises:
        TrainingError: Samples are longer than the context (without ``drop_long``), or none is left.
    """
    data = TokenizedData()
    eos = tokenizer.eos_token_id
    if eos is None:
        raise TrainingError(
            "the tokenizer has no end-of-sequence token; give a Llama tokenizer (--tokenizer)."
        )
    lengths: list[int] = []
    for sample in samples:
        task = str(sample.get("task", "?"))
        data.read[task] += 1
        prompt = tokenizer(str(sample["prompt"]), add_special_tokens=True)["input_ids"]
        answer = tokenizer(str(sample["answer"]), add_special_tokens=False)["input_ids"]
        ids = [*prompt, *answer, eos]
        lengths.append(len(ids))
        if len(ids) > max_length:
            data.dropped_long[task] += 1
            continue
        data.input_ids.append(ids)
        data.completion_mask.append([0] * len(prompt) + [1] * (len(answer) + 1))
        data.tasks.append(task)
        data.longest = max(data.longest, len(ids))
    over = sum(data.dropped_long.values())
    if over and not drop_long:
        lengths.sort()
        raise TrainingError(
            f"{over} of {len(lengths)} samples are longer than the context of {max_length:,} tokens "
            f"(longest {lengths[-1]:,}; median {lengths[len(lengths) // 2]:,}). Cutting them would teach "
            f"answers that stop mid-code: raise --max-length (the released models take 16,384), or add "
            f"--drop-long to leave them out, or make the data with a lower --prompt-limit."
        )
    if not data.input_ids:
        raise TrainingError(
            f"no sample fits the context of {max_length:,} tokens (all {len(lengths)} are longer); "
            f"raise --max-length."
        )
    return data
