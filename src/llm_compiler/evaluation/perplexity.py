"""Next-token perplexity of a model on held-out text, and reading a dataset split as text.

The paper reports how well each model predicts held-out IR and assembly: the
**perplexity** ``exp(total NLL / predicted tokens)``, where each text is tokenized as
the model reads a prompt (BOS first, no EOS), every token after BOS is predicted from
the tokens before it, and the NLL is the natural-log cross-entropy of the model's
logits summed over all texts together (so long texts weigh in proportion to their
length, as in the paper's token-level figure). Only the ``hf:`` backend gives logits;
the others are refused.

A text longer than the window (the model's context, or ``max_tokens`` when smaller) is
**cut into windows** rather than refused: window ``k`` holds tokens ``k(W-1)`` to
``k(W-1)+W-1``, each window after the first starting on the last token of the one
before, so every token after BOS is predicted exactly once; a token at the start of a
window is predicted from that window's tokens only (the context is cut there, which
raises the perplexity a little). The report says how many texts were cut.

:func:`dataset_texts` reads a split of a task dataset (``llm-compiler data``) as the
texts a model is trained on: ``prompt + " " + answer``. The space is where a model
writes it: the prompt ends with ``[/INST]`` and the answer's first token is ``▁The``
(or ``▁Run``, ``▁<code>``), so the text tokenizes as the prompt's tokens followed by
the answer's (see :func:`~llm_compiler.models.base.without_leading_space`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from llm_compiler.corpus.store import SPLITS
from llm_compiler.errors import InvalidInput
from llm_compiler.models.backends.hf import HFModel
from llm_compiler.models.base import Model
from llm_compiler.tasks.dataset import read_samples


@dataclass(frozen=True)
class TextScore:
    """The NLL of one text under a model.

    Attributes:
        nll: The summed NLL of its predicted tokens (nats).
        tokens: Tokens predicted (its length with BOS, less one).
        windows: Windows it was read in (1 unless it was longer than the window).
    """

    nll: float
    tokens: int
    windows: int

    def to_json(self) -> dict[str, Any]:
        record = asdict(self)
        record["mean_nll"] = self.nll / self.tokens if self.tokens else None
        return record


def _hf(model: Model) -> HFModel:
    if not isinstance(model, HFModel):
        raise InvalidInput(
            f"{model.spec}: perplexity needs the model's logits, which only the hf: backend gives. "
            "Load the same weights as hf:PATH_OR_ID (e.g. hf:facebook/llm-compiler-7b)."
        )
    if model.model is None:
        raise InvalidInput(f"{model.spec}: the model was closed; load it again.")
    return model


def _window(model: HFModel, max_tokens: int | None) -> int:
    window = min(max_tokens or model.context_length, model.context_length)
    if window < 2:
        raise InvalidInput(f"max_tokens must be at least 2 (a token and the one it predicts), not {window}.")
    return window


def score_text(model: Model, text: str, *, max_tokens: int | None = None) -> TextScore:
    """The summed NLL of ``text``'s tokens under ``model`` (an ``hf:`` model; module docstring).

    Raises:
        InvalidInput: Not an ``hf:`` model, or ``max_tokens`` below 2.
    """
    import torch

    hf = _hf(model)
    window = _window(hf, max_tokens)
    ids = list(hf.tokenizer(text)["input_ids"])
    total, windows = 0.0, 0
    with torch.inference_mode():
        for start in range(0, max(len(ids) - 1, 0), window - 1):
            chunk = torch.tensor([ids[start : start + window]], device=hf.device)
            logits = hf.model(input_ids=chunk, use_cache=False).logits[0, :-1].float()
            loss = torch.nn.functional.cross_entropy(logits, chunk[0, 1:], reduction="sum")
            total += float(loss)
            windows += 1
    return TextScore(total, max(len(ids) - 1, 0), windows)


def perplexity(model: Model, texts: Iterable[str], *, max_tokens: int | None = None) -> dict[str, Any]:
    """The next-token perplexity of ``model`` over ``texts`` (module docstring).

    Args:
        model: An ``hf:`` model (:class:`~llm_compiler.models.backends.hf.HFModel`).
        texts: The texts; each is tokenized with BOS.
        max_tokens: The window, in tokens (default and most: the model's context).
            Longer texts are cut into windows.

    Returns:
        ``system`` (the spec), ``texts``, ``tokens`` (predicted), ``nll`` (summed, nats),
        ``mean_nll`` (per predicted token), ``perplexity`` (``exp(mean_nll)``),
        ``window`` and ``cut_texts`` (texts read in more than one window).

    Raises:
        InvalidInput: Not an ``hf:`` model, ``max_tokens`` below 2, or no token to predict.
    """
    return summarize_scores(
        model, [score_text(model, text, max_tokens=max_tokens) for text in texts], max_tokens
    )


def summarize_scores(
    model: Model, scores: Sequence[TextScore], max_tokens: int | None = None
) -> dict[str, Any]:
    """The report of :func:`perplexity` from per-text scores.

    Raises:
        InvalidInput: The texts hold no token to predict.
    """
    tokens = sum(score.tokens for score in scores)
    if tokens == 0:
        raise InvalidInput(
            f"{model.spec}: no token to predict ({len(scores)} texts, all empty); give texts with content."
        )
    nll = sum(score.nll for score in scores)
    return {
        "system": model.spec,
        "texts": len(scores),
        "tokens": tokens,
        "nll": nll,
        "mean_nll": nll / tokens,
        "perplexity": math.exp(nll / tokens),
        "window": _window(_hf(model), max_tokens),
        "cut_texts": sum(score.windows > 1 for score in scores),
    }


def evaluate_perplexity(
    model: Model,
    path: str | Path,
    split: str = "test",
    *,
    max_tokens: int | None = None,
    limit: int | None = None,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The perplexity of ``model`` on a dataset split, as rows per sample and a summary.

    Args:
        model: An ``hf:`` model.
        path: A dataset folder (``llm-compiler data --out``), one of its split folders, or a shard.
        split: The split to read.
        max_tokens: The window (see :func:`perplexity`).
        limit: Read at most this many samples.

    Returns:
        Rows (``task`` ``"perplexity"``, ``unit``, ``system``, ``sample_task``, ``split``,
        and :class:`TextScore`'s fields with ``mean_nll``) and the summary ``{"task":
        "perplexity", "split", "systems": {spec: perplexity report}}``.

    Raises:
        InvalidInput: As :func:`perplexity` and :func:`dataset_samples`.
    """
    rows, scores = [], []
    for sample in dataset_samples(path, split, limit=limit):
        score = score_text(model, sample_text(sample), max_tokens=max_tokens)
        scores.append(score)
        rows.append(
            {
                "task": "perplexity",
                "unit": sample.get("program_name") or sample.get("program"),
                "system": model.spec,
                "sample_task": sample.get("task"),
                "split": sample.get("split"),
                **score.to_json(),
            }
        )
    summary = {
        "task": "perplexity",
        "split": split,
        "systems": {model.spec: summarize_scores(model, scores, max_tokens)},
    }
    return rows, summary


# ---------------------------------------------------------------------------------------
# Reading datasets


def _shards(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise InvalidInput(f"{path}: no such dataset file or folder (give `llm-compiler data --out DIR`).")
    shards = sorted(path.glob("*/shard-*.jsonl")) or sorted(path.glob("shard-*.jsonl"))
    if not shards:
        raise InvalidInput(
            f"{path}: no shard-*.jsonl in it or in its split folders; is it a dataset folder "
            "written by `llm-compiler data`?"
        )
    return shards


def dataset_samples(
    path: str | Path, split: str | None = None, *, task: str | None = None, limit: int | None = None
) -> Iterator[dict[str, Any]]:
    """The samples of a task dataset, read lazily shard by shard.

    Args:
        path: A dataset folder, one of its split folders (``DIR/test``), or a JSONL shard.
        split: Keep only samples of this split (None: all).
        task: Every sample must be of this task (None: any).
        limit: Stop after this many samples.

    Raises:
        InvalidInput: No dataset there, an unknown split, or a sample of another task.
    """
    if split is not None and split not in SPLITS:
        raise InvalidInput(f"split must be one of {', '.join(SPLITS)}, not {split!r}.")
    if limit is not None and limit < 1:
        raise InvalidInput(f"limit must be at least 1, not {limit}.")
    count = 0
    for shard in _shards(Path(path).expanduser()):
        for sample in read_samples(shard):
            if split is not None and sample.get("split") != split:
                continue
            if task is not None and sample.get("task") != task:
                raise InvalidInput(
                    f"{shard}: a sample of task {sample.get('task')!r} where {task} samples were expected; "
                    f"give a dataset made with `llm-compiler data {task}`."
                )
            yield sample
            count += 1
            if limit is not None and count >= limit:
                return


def sample_text(sample: dict[str, Any]) -> str:
    """A sample as one text: ``prompt + " " + answer`` (module docstring).

    Raises:
        InvalidInput: The sample has no prompt or answer.
    """
    prompt, answer = sample.get("prompt"), sample.get("answer")
    if not isinstance(prompt, str) or not isinstance(answer, str):
        raise InvalidInput(
            "a dataset sample needs 'prompt' and 'answer' texts (docs/datasets.md); "
            f"this one has {sorted(sample)}."
        )
    return f"{prompt} {answer}"


def dataset_texts(path: str | Path, split: str, *, limit: int | None = None) -> list[str]:
    """The samples of a dataset split as texts (``prompt + " " + answer``), in order.

    Raises:
        InvalidInput: As :func:`dataset_samples`, or the split has no sample.
    """
    texts = [sample_text(sample) for sample in dataset_samples(path, split, limit=limit)]
    if not texts:
        raise InvalidInput(f"{path}: no sample of split {split!r}; choose one of {', '.join(SPLITS)}.")
    return texts
