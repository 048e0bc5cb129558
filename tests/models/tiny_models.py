"""Tiny models of LLM Compiler's architecture, built on this machine for the backends' tests.

Meta's LLM Compiler models (``facebook/llm-compiler-7b`` and the rest) are Code Llama
models: the Llama architecture with a 16,384-token context and RoPE base 10^6, and Code
Llama's tokenizer, Llama 2's sentencepiece BPE vocabulary of 32,000 pieces plus 16 pieces
for infilling (32,016 in all). Seven billion parameters are too many for a test, so this
module builds models of the same shape in miniature (a hidden size of 64, two layers) and
caches them outside the repository; nothing is downloaded from a model hub:

* :func:`tokenizer_dir` (from :mod:`tests.models.tiny_tokenizer`): the *real* tokenizer,
  Llama 2's vocabulary and merges taken from the npm package ``llama-tokenizer-js`` 1.2.2
  (fetched with ``npm pack`` and checked against a pinned SHA-256) and written as a
  ``tokenizers`` BPE ``tokenizer.json`` laid out like Llama 2's own, plus Code Llama's 16
  extra pieces (see :data:`CODE_LLAMA_EXTRA_PIECES`). Token counts equal Llama 2's.
* :func:`hf_model_dir`: a ``LlamaForCausalLM`` with random weights from a fixed seed,
  saved with ``save_pretrained`` (safetensors) next to the tokenizer files and a greedy
  generation config.
* :func:`finetuned_model_dir`: that model trained on a handful of (prompt, answer)
  pairs until greedy decoding of each prompt gives its answer and then ``</s>``, so a
  backend's output can be checked to the character. Training (AdamW on the CPU, loss on
  the answer tokens only) stops as soon as every answer token wins by a margin in the
  logits under teacher forcing, which greedy decoding then confirms. On two cores the
  three :data:`DEMO_SAMPLES` (prompts of 130 to 650 tokens) take about 5 s; four
  prompts of 2,000 to 3,400 tokens about 35 s, as a step costs what the prompts cost.
* :func:`gguf_file` (from :mod:`tests.models.tiny_gguf`): a saved model converted to
  GGUF (f32 or f16) for llama.cpp, the way llama.cpp's ``convert_hf_to_gguf.py``
  converts a Llama, with a vocabulary that llama.cpp tokenizes as ``tokenizer.json``
  does (but for text reaching Code Llama's extra pieces; see that module).

Every artifact lives under :func:`cache_root` (``$LLM_COMPILER_TEST_CACHE``, else
``~/.cache/llm-compiler-tests``) in a folder named by a hash of what it was built from,
built once, atomically and under a lock (see :mod:`tests.models.tiny_cache`). Needs
``tokenizers`` for the tokenizer; ``torch`` and ``transformers`` for the models;
``gguf`` (and ``safetensors``) for GGUF files; ``llama-cpp-python`` only to run one.

This is the module to import: it re-exports the public names of
:mod:`tests.models.tiny_cache`, :mod:`tests.models.tiny_tokenizer`,
:mod:`tests.models.tiny_gguf` and :mod:`tests.models.tiny_samples`. Run it as a
script to build everything (the demo fine-tune included) into a folder::

    .venv/bin/python -m tests.models.tiny_models --out DIR
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Final

from tests.models.tiny_cache import (
    BUILD_VERSION,
    CACHE_ENV,
    TinyModelError,
    _build_once,
    _digest,
    _write_json,
    cache_root,
)
from tests.models.tiny_gguf import gguf_file, write_gguf
from tests.models.tiny_samples import DEMO_SAMPLES, FLAG_TUNING_PROMPT
from tests.models.tiny_tokenizer import (
    BOS,
    BOS_ID,
    CODE_LLAMA_EXTRA_PIECES,
    CONTEXT_LENGTH,
    EOS,
    EOS_ID,
    INFILLING_TOKENS,
    LLAMA2_MERGES,
    LLAMA2_VOCAB_SIZE,
    NPM_PACKAGE,
    NPM_SHA256,
    NPM_SOURCE,
    NPM_TARBALL_URL,
    NPM_VERSION,
    TARBALL_ENV,
    UNK,
    UNK_ID,
    VOCAB_SIZE,
    TokenizerUnavailable,
    llama2_vocabulary,
    npm_tarball,
    tokenizer_dir,
    write_tokenizer,
)

__all__ = [
    "BOS",
    "BOS_ID",
    "BUILD_VERSION",
    "CACHE_ENV",
    "CODE_LLAMA_EXTRA_PIECES",
    "CONTEXT_LENGTH",
    "DEMO_SAMPLES",
    "EOS",
    "EOS_ID",
    "FLAG_TUNING_PROMPT",
    "INFILLING_TOKENS",
    "LLAMA2_MERGES",
    "LLAMA2_VOCAB_SIZE",
    "NPM_PACKAGE",
    "NPM_SHA256",
    "NPM_SOURCE",
    "NPM_TARBALL_URL",
    "NPM_VERSION",
    "ROPE_THETA",
    "TARBALL_ENV",
    "UNK",
    "UNK_ID",
    "VOCAB_SIZE",
    "FinetuneSettings",
    "TinyConfig",
    "TinyModelError",
    "TokenizerUnavailable",
    "TrainingReport",
    "cache_root",
    "finetuned_model_dir",
    "generate_hf",
    "generate_llama_cpp",
    "gguf_file",
    "hf_model_dir",
    "llama2_vocabulary",
    "load_samples",
    "main",
    "npm_tarball",
    "tokenizer_dir",
    "write_gguf",
    "write_tokenizer",
]

#: The released models' RoPE base (their context is :data:`CONTEXT_LENGTH`).
ROPE_THETA: Final = 1_000_000.0


@dataclass(frozen=True)
class TinyConfig:
    """The shape of a tiny model and the seed of its random weights.

    Attributes:
        hidden_size: Width of the residual stream.
        num_layers: Decoder layers.
        num_heads: Attention heads (as many key/value heads: no grouped-query attention).
        intermediate_size: Width of the feed-forward layers.
        seed: Seeds the random initial weights.
    """

    hidden_size: int = 64
    num_layers: int = 2
    num_heads: int = 4
    intermediate_size: int = 128
    seed: int = 0


@dataclass(frozen=True)
class FinetuneSettings:
    """How :func:`finetuned_model_dir` trains.

    Attributes:
        model: The shape and initial seed of the model trained.
        learning_rate: AdamW's learning rate (no weight decay).
        margin: Training stops once every answer token's logit beats all others by this
            much under teacher forcing, so that greedy decoding reproduces the answers in
            f32 and f16 alike, in transformers and in llama.cpp.
        max_steps: Full passes over the samples (with their whole prompts) before giving up.
        warmup_context: The prompt tokens kept (after BOS) in the warm-up stage.
        warmup_steps: The most warm-up steps: passes over the answers behind only the last
            ``warmup_context`` tokens of their prompts, which are cheap however long the
            prompts, and teach most of the answers before the full prompts are used. 0
            skips the warm-up.
    """

    model: TinyConfig = field(default_factory=TinyConfig)
    learning_rate: float = 7.5e-3
    margin: float = 1.0
    max_steps: int = 400
    warmup_context: int = 32
    warmup_steps: int = 100


# ---------------------------------------------------------------------------------------
# Hugging Face models


def _transformers_major() -> str:
    import transformers

    return str(transformers.__version__).split(".")[0]


def _new_model(config: TinyConfig) -> Any:
    """A ``LlamaForCausalLM`` of the released models' kind with random weights from ``config.seed``."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    llama = LlamaConfig(
        vocab_size=VOCAB_SIZE,
        hidden_size=config.hidden_size,
        intermediate_size=config.intermediate_size,
        num_hidden_layers=config.num_layers,
        num_attention_heads=config.num_heads,
        num_key_value_heads=config.num_heads,
        max_position_embeddings=CONTEXT_LENGTH,
        rope_theta=ROPE_THETA,
        rms_norm_eps=1e-5,
        bos_token_id=BOS_ID,
        eos_token_id=EOS_ID,
        tie_word_embeddings=False,
    )
    torch.manual_seed(config.seed)
    model = LlamaForCausalLM(llama)
    return model.float().eval()


@contextlib.contextmanager
def _no_progress_bars() -> Iterator[None]:
    """Keeps transformers from drawing progress bars (saving and loading shards) in the block."""
    from transformers.utils import logging

    enabled = logging.is_progress_bar_enabled()
    logging.disable_progress_bar()
    try:
        yield
    finally:
        if enabled:
            logging.enable_progress_bar()


def _save_model(model: Any, folder: Path) -> None:
    """Saves the weights (safetensors), the config, a greedy generation config and the tokenizer."""
    from transformers import GenerationConfig

    model.generation_config = GenerationConfig(
        bos_token_id=BOS_ID, eos_token_id=EOS_ID, pad_token_id=EOS_ID, do_sample=False
    )
    with _no_progress_bars():
        model.save_pretrained(folder)
    # transformers 5 writes RoPE's base only under "rope_parameters"; transformers 4 (and
    # the released models' config.json) read it from "rope_theta".
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    config.setdefault("rope_theta", (config.get("rope_parameters") or {}).get("rope_theta", ROPE_THETA))
    _write_json(folder / "config.json", config)
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        shutil.copyfile(tokenizer_dir() / name, folder / name)


def hf_model_dir(kind: str = "untrained", config: TinyConfig | None = None) -> Path:
    """A saved tiny ``LlamaForCausalLM`` with Code Llama's tokenizer, ready for ``from_pretrained``.

    Args:
        kind: ``"untrained"`` (random weights: it loads and generates, nonsense) or
            ``"demo"`` (fine-tuned on :data:`DEMO_SAMPLES`, see :func:`finetuned_model_dir`).
        config: The model's shape; the default one when not given.

    Raises:
        ValueError: ``kind`` is unknown.
        TinyModelError: It could not be built.
    """
    config = config or TinyConfig()
    if kind == "demo":
        return finetuned_model_dir(DEMO_SAMPLES, "demo", FinetuneSettings(model=config))
    if kind != "untrained":
        raise ValueError(f"unknown kind of tiny model {kind!r}: 'untrained' or 'demo'")
    key = _digest([BUILD_VERSION, _transformers_major(), asdict(config)])
    final = cache_root() / f"hf-untrained-{key}"
    return _build_once(final, lambda temporary: _save_model(_new_model(config), temporary))


@dataclass(frozen=True)
class TrainingReport:
    """How a fine-tune went: written next to the model as ``training.json``.

    Attributes:
        warmup_steps: Steps of the warm-up stage (short prompts).
        steps: Steps with the whole prompts.
        seconds: Time spent training.
        worst_margin: The least margin of an answer token over the other tokens, at the end.
        loss: The mean cross-entropy of the answer tokens, at the end.
    """

    warmup_steps: int
    steps: int
    seconds: float
    worst_margin: float
    loss: float


def _encode_samples(samples: Sequence[tuple[str, str]]) -> list[tuple[list[int], int]]:
    """Each sample as (prompt with BOS + answer + EOS ids, index of the first answer token)."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(tokenizer_dir() / "tokenizer.json"))
    encoded = []
    for prompt, answer in samples:
        prompt_ids = tokenizer.encode(prompt).ids
        answer_ids = tokenizer.encode(answer, add_special_tokens=False).ids
        encoded.append(([*prompt_ids, *answer_ids, EOS_ID], len(prompt_ids)))
    return encoded


def _margin(logits: Any, targets: Any) -> float:
    """The least, over positions, of the target's logit minus the best other logit."""
    right = logits.gather(1, targets[:, None])[:, 0]
    others = logits.scatter(1, targets[:, None], float("-inf")).max(dim=1).values
    return float((right - others).min().item())


def _fit(
    model: Any, optimizer: Any, encoded: list[tuple[list[int], int]], margin: float, max_steps: int
) -> tuple[int, float, float]:
    """Steps ``optimizer`` until every answer token wins by ``margin``, or ``max_steps`` steps.

    Only the answer positions go through the output layer, and the softmax of the loss
    runs over the tokens the samples use (a few hundred of the 32,016), which makes a
    step several times cheaper; the stopping test then checks the margin against the
    whole vocabulary.

    Returns:
        The steps taken, the worst margin and the loss.
    """
    import torch

    used = sorted({token for ids, _ in encoded for token in ids})
    rows = torch.tensor(used)
    column = {token: i for i, token in enumerate(used)}
    inputs = [
        (
            torch.tensor([ids[:-1]]),
            torch.tensor(ids[first:]),
            torch.tensor([column[t] for t in ids[first:]]),
            first,
        )
        for ids, first in encoded
    ]
    worst, total = float("-inf"), float("nan")
    for step in range(max_steps + 1):
        optimizer.zero_grad()
        worst, total = float("inf"), 0.0
        answers = []
        for input_ids, targets, columns, first in inputs:
            hidden = model.model(input_ids=input_ids).last_hidden_state[0, first - 1 :]
            logits = hidden @ model.lm_head.weight[rows].T
            loss = torch.nn.functional.cross_entropy(logits, columns)
            (loss / len(inputs)).backward()
            total += loss.item() / len(inputs)
            with torch.no_grad():
                worst = min(worst, _margin(logits, columns))
            answers.append((hidden.detach(), targets))
        if worst >= margin:
            with torch.no_grad():
                worst = min(_margin(model.lm_head(hidden), targets) for hidden, targets in answers)
            if worst >= margin:
                return step, worst, total
        if step < max_steps:
            optimizer.step()
    return max_steps, worst, total


def _train(model: Any, encoded: list[tuple[list[int], int]], settings: FinetuneSettings) -> TrainingReport:
    """Trains ``model`` on the answer tokens until each wins by ``settings.margin``.

    A warm-up stage first trains behind the last ``settings.warmup_context`` prompt
    tokens only (answers that differ only by what is earlier in their prompts cannot be
    told apart there, so it ends after ``settings.warmup_steps`` at most), then the
    whole prompts are used until the margin is reached.

    Raises:
        TinyModelError: The margin was not reached in ``settings.max_steps`` steps.
    """
    import torch

    start = time.perf_counter()
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=settings.learning_rate, weight_decay=0.0)
    keep = settings.warmup_context
    warmup = 0
    if settings.warmup_steps and any(first > keep + 1 for _, first in encoded):
        short = [([BOS_ID, *ids[max(1, first - keep) :]], min(first, keep + 1)) for ids, first in encoded]
        warmup, _, _ = _fit(model, optimizer, short, settings.margin, settings.warmup_steps)
    steps, worst, total = _fit(model, optimizer, encoded, settings.margin, settings.max_steps)
    model.eval()
    if worst < settings.margin:
        raise TinyModelError(
            f"the tiny model did not learn its {len(encoded)} samples in {settings.max_steps} steps "
            f"(worst margin {worst:.3f}, loss {total:.4f}); use fewer or shorter samples, or a bigger model"
        )
    seconds = round(time.perf_counter() - start, 2)
    return TrainingReport(warmup, steps, seconds, round(worst, 3), round(total, 4))


def _check_greedy(model: Any, encoded: list[tuple[list[int], int]]) -> None:
    """Raises TinyModelError unless greedy decoding of each prompt gives its answer and EOS."""
    import torch

    for ids, first in encoded:
        with torch.no_grad():
            output = model.generate(
                torch.tensor([ids[:first]]),
                attention_mask=torch.ones(1, first, dtype=torch.long),
                max_new_tokens=len(ids) - first + 2,
                do_sample=False,
            )
        if output[0, first:].tolist() != ids[first:]:
            raise TinyModelError("greedy decoding does not reproduce a trained answer")


def finetuned_model_dir(
    samples: Sequence[tuple[str, str]], name: str = "finetuned", settings: FinetuneSettings | None = None
) -> Path:
    """A tiny model that answers each prompt of ``samples`` with its answer, greedily.

    The tokenizer adds BOS before the prompt; the answer is encoded on its own (so it
    starts with ``▁``, as after ``[/INST]``) and followed by ``</s>``. Greedy decoding
    therefore yields the answer's tokens then EOS, and decoding those without special
    tokens gives back the answer text exactly. The samples are saved beside the model
    as ``samples.json`` and how training went as ``training.json``.

    Args:
        samples: (prompt, answer) texts; a few, with prompts of up to a few thousand
            tokens and answers of up to a few hundred.
        name: A readable part of the folder name.
        settings: How to train; the defaults when not given.

    Raises:
        ValueError: No samples, or one prompt with two answers.
        TinyModelError: The model did not learn the samples.
    """
    settings = settings or FinetuneSettings()
    pairs = [(str(prompt), str(answer)) for prompt, answer in samples]
    if not pairs:
        raise ValueError("finetuned_model_dir needs at least one (prompt, answer) sample")
    if len(dict(pairs)) != len(set(pairs)):
        raise ValueError("two samples have the same prompt and different answers; no model can learn both")
    key = _digest([BUILD_VERSION, _transformers_major(), asdict(settings), pairs])
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", name)[:40] or "finetuned"
    final = cache_root() / f"hf-{slug}-{key}"

    def build(temporary: Path) -> None:
        encoded = _encode_samples(pairs)
        model = _new_model(settings.model)
        report = _train(model, encoded, settings)
        _check_greedy(model, encoded)
        _save_model(model, temporary)
        _write_json(temporary / "samples.json", [{"prompt": p, "answer": a} for p, a in pairs])
        _write_json(temporary / "training.json", {**asdict(report), "settings": asdict(settings)})

    return _build_once(final, build)


def load_samples(model_dir: Path) -> list[tuple[str, str]]:
    """The (prompt, answer) samples a model of :func:`finetuned_model_dir` was trained on."""
    entries = json.loads((Path(model_dir) / "samples.json").read_text(encoding="utf-8"))
    return [(entry["prompt"], entry["answer"]) for entry in entries]


# ---------------------------------------------------------------------------------------
# Running them (for the tests and the script)


def generate_hf(model_dir: Path, prompts: Sequence[str], max_new_tokens: int) -> list[list[int]]:
    """Greedy completions (token ids, EOS included when reached) with transformers."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    with _no_progress_bars():
        tokenizer = AutoTokenizer.from_pretrained(model_dir)
        model = AutoModelForCausalLM.from_pretrained(model_dir).eval()
    completions = []
    for prompt in prompts:
        encoded = tokenizer(prompt, return_tensors="pt")
        with torch.no_grad():
            output = model.generate(**encoded, max_new_tokens=max_new_tokens, do_sample=False)
        completions.append(output[0, encoded["input_ids"].shape[1] :].tolist())
    return completions


def generate_llama_cpp(path: Path, prompts: Sequence[str], max_new_tokens: int) -> list[list[int]]:
    """Greedy completions (token ids, EOS included when reached) with llama.cpp."""
    import llama_cpp

    completions = []
    llama = llama_cpp.Llama(model_path=str(path), n_ctx=0, n_threads=2, verbose=False, seed=0)
    try:
        for prompt in prompts:
            tokens = llama.tokenize(prompt.encode(), add_bos=True, special=False)
            llama.reset()
            generated: list[int] = []
            for token in llama.generate(tokens, top_k=1, top_p=1.0, temp=0.0, repeat_penalty=1.0):
                generated.append(token)
                if token == llama.token_eos() or len(generated) >= max_new_tokens:
                    break
            completions.append(generated)
    finally:
        llama.close()
    return completions


def main(argv: Sequence[str] | None = None) -> int:
    """Builds the tokenizer, the untrained and the demo models and the demo GGUF into ``--out``."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "--out", type=Path, help=f"the cache folder (default: ${CACHE_ENV}, else ~/.cache/llm-compiler-tests)"
    )
    parser.add_argument("--no-gguf", action="store_true", help="skip the GGUF file")
    args = parser.parse_args(argv)
    if args.out:
        os.environ[CACHE_ENV] = str(args.out.resolve())
    steps: list[tuple[str, Callable[[], Path]]] = [
        ("tokenizer", tokenizer_dir),
        ("untrained model", hf_model_dir),
        ("demo model", lambda: hf_model_dir("demo")),
    ]
    if not args.no_gguf:
        steps.append(("demo GGUF", lambda: gguf_file(hf_model_dir("demo"))))
    for label, build in steps:
        start = time.perf_counter()
        path = build()
        print(f"{label:16} {time.perf_counter() - start:7.1f} s  {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
