"""Training presets (the paper's recipe and smaller ones) and the sizes of models built from scratch.

A :class:`Preset` holds what the paper fixes for every stage: AdamW's betas, a cosine
schedule with warm-up that ends at a fraction of the peak rate, the peak rate, the RoPE
base, the context and the batch size in tokens. ``paper`` is LLM Compiler's recipe
(AdamW 0.9/0.95, 1,000 warm-up steps, final rate peak/30, peak 2e-5, RoPE base 1e6,
context 16,384, 4M-token batches); ``small`` is for models trained from scratch on one
machine, where a 4M-token batch would mean a handful of steps in a day.

A batch is stated in tokens, as the paper states it; :func:`batch_layout` turns it into a
per-device batch of sequences and a number of accumulation steps for the devices present.

:data:`LLAMA_SIZES` are the untrained Llama-architecture models of ``--init llama:SIZE``,
with Code Llama's vocabulary of 32,016 pieces (so most small models are mostly embeddings).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Final

from llm_compiler.errors import InvalidInput


@dataclass(frozen=True)
class Preset:
    """The optimizer, schedule, context and batch of a training run.

    Attributes:
        name: What ``--preset`` calls it.
        learning_rate: The peak learning rate.
        beta1: AdamW's first-moment decay.
        beta2: AdamW's second-moment decay.
        weight_decay: AdamW's decoupled weight decay.
        warmup_steps: Linear warm-up steps to the peak rate.
        final_lr_ratio: The rate at the end of the cosine schedule, as a fraction of the peak.
        max_length: The context trained on, in tokens (samples longer are refused or dropped).
        batch_tokens: Tokens per optimizer step, over all devices and accumulation steps.
        rope_theta: The RoPE base the model is trained with.
        max_grad_norm: Gradient clipping.
    """

    name: str
    learning_rate: float
    beta1: float
    beta2: float
    weight_decay: float
    warmup_steps: int
    final_lr_ratio: float
    max_length: int
    batch_tokens: int
    rope_theta: float
    max_grad_norm: float = 1.0

    def with_overrides(self, **changes: Any) -> Preset:
        """This preset with the given fields changed (``None`` values are ignored)."""
        return replace(self, **{key: value for key, value in changes.items() if value is not None})

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "learning_rate": self.learning_rate,
            "beta1": self.beta1,
            "beta2": self.beta2,
            "weight_decay": self.weight_decay,
            "warmup_steps": self.warmup_steps,
            "final_lr_ratio": self.final_lr_ratio,
            "max_length": self.max_length,
            "batch_tokens": self.batch_tokens,
            "rope_theta": self.rope_theta,
            "max_grad_norm": self.max_grad_norm,
        }


PRESETS: Final[dict[str, Preset]] = {
    "paper": Preset(
        name="paper",
        learning_rate=2e-5,
        beta1=0.9,
        beta2=0.95,
        weight_decay=0.1,
        warmup_steps=1000,
        final_lr_ratio=1 / 30,
        max_length=16_384,
        batch_tokens=4 * 1024 * 1024,
        rope_theta=1e6,
    ),
    "small": Preset(
        name="small",
        learning_rate=1e-3,
        beta1=0.9,
        beta2=0.95,
        weight_decay=0.1,
        warmup_steps=50,
        final_lr_ratio=1 / 30,
        max_length=4096,
        batch_tokens=16 * 1024,
        rope_theta=1e6,
    ),
}


@dataclass(frozen=True)
class LlamaSize:
    """The shape of an untrained Llama of ``--init llama:SIZE``.

    Attributes:
        hidden_size: Width of the residual stream.
        num_layers: Decoder layers.
        num_heads: Attention heads (as many key/value heads).
        intermediate_size: Width of the feed-forward layers.
    """

    hidden_size: int
    num_layers: int
    num_heads: int
    intermediate_size: int

    def parameters(self, vocab_size: int) -> int:
        """The model's parameter count (untied input and output embeddings)."""
        per_layer = (
            4 * self.hidden_size**2 + 3 * self.hidden_size * self.intermediate_size + 2 * self.hidden_size
        )
        return 2 * vocab_size * self.hidden_size + self.num_layers * per_layer + self.hidden_size


LLAMA_SIZES: Final[dict[str, LlamaSize]] = {
    "tiny": LlamaSize(hidden_size=128, num_layers=2, num_heads=4, intermediate_size=344),
    "mini": LlamaSize(hidden_size=256, num_layers=4, num_heads=4, intermediate_size=688),
    "small": LlamaSize(hidden_size=512, num_layers=8, num_heads=8, intermediate_size=1376),
    "base": LlamaSize(hidden_size=1024, num_layers=16, num_heads=16, intermediate_size=2752),
}


def parse_init(spec: str) -> LlamaSize:
    """The size named by ``llama:SIZE``.

    Raises:
        InvalidInput: Not ``llama:`` and a known size.
    """
    kind, _, size = spec.partition(":")
    if kind != "llama" or size not in LLAMA_SIZES:
        raise InvalidInput(
            f"--init takes llama:SIZE with SIZE one of {', '.join(LLAMA_SIZES)}, not {spec!r}."
        )
    return LLAMA_SIZES[size]


def batch_layout(
    batch_tokens: int, max_length: int, devices: int, per_device: int | None = None
) -> tuple[int, int]:
    """A per-device batch of sequences and accumulation steps that make ``batch_tokens`` per step.

    Each sequence counts as ``max_length`` tokens (packed sequences are that long). The
    per-device batch is 1 sequence unless given; accumulation makes up the rest, at least 1.

    Args:
        batch_tokens: Tokens per optimizer step.
        max_length: Tokens per sequence.
        devices: Data-parallel processes (GPUs, or 1 on the CPU).
        per_device: Sequences per device and forward pass (default: 1).

    Returns:
        (per-device batch, gradient accumulation steps).

    Example:
        >>> batch_layout(4 * 1024 * 1024, 16_384, devices=8)
        (1, 32)
    """
    if min(batch_tokens, max_length, devices) < 1 or (per_device is not None and per_device < 1):
        raise InvalidInput("batch tokens, context, devices and the per-device batch must be positive.")
    per_device = per_device or 1
    return per_device, max(1, math.ceil(batch_tokens / (max_length * devices * per_device)))
