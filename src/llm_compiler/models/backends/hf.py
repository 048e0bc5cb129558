"""``hf:PATH_OR_ID``: a causal language model run with transformers (extra ``[hf]``).

A local folder (``save_pretrained``'s layout) or a hub id (``facebook/llm-compiler-7b-ftd``,
fetched by transformers into its cache unless ``HF_HUB_OFFLINE=1``). Runs on the CPU or
a GPU (``device``: ``cpu``, ``cuda``, ``cuda:1``, ``auto`` for the first GPU when there
is one), in ``dtype`` (``auto`` takes the checkpoint's: bfloat16 for the released
models; ``float32`` on a CPU without bfloat16 support is the safe choice).

Batches are left-padded, so that every prompt's answer starts right after it; prompts
are sorted by length and cut into batches of ``batch_size`` to waste little padding.
The tokenizer adds BOS, as the released models were trained. Greedy decoding when the
temperature is 0, else sampling seeded by the request's seed. Stop strings end a
sample as soon as it contains one (``stop_strings``), and the text returned ends before it.
The context is the model's ``max_position_embeddings`` (16,384 for the released models).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from llm_compiler.models.base import Completion, Generation, GenerationRequest, Model, ModelError, cut_at_stop


@dataclass
class HFModel(Model):
    """A transformers model (module docstring)."""

    model: Any = None
    tokenizer: Any = None
    device: str = "cpu"
    batch_size: int = 4
    OPTIONS: ClassVar[frozenset[str]] = frozenset({"device", "dtype", "batch_size", "context"})
    context: int = 0

    @classmethod
    def load(
        cls,
        spec: str,
        where: str,
        device: str = "auto",
        dtype: str = "auto",
        batch_size: int = 4,
        context: int | None = None,
    ) -> HFModel:
        """Loads the tokenizer and the weights.

        Raises:
            ModelError: transformers cannot load them (the message says why).
        """
        import torch
        import transformers

        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        torch_dtype = dtype if dtype == "auto" else getattr(torch, dtype, None)
        if torch_dtype is None or not (dtype == "auto" or isinstance(torch_dtype, torch.dtype)):
            raise ModelError(f"{spec}: unknown dtype {dtype!r} (use auto, float32, float16 or bfloat16).")
        try:
            tokenizer = transformers.AutoTokenizer.from_pretrained(where)
            transformers.utils.logging.disable_progress_bar()
            model = transformers.AutoModelForCausalLM.from_pretrained(where, dtype=torch_dtype)
        except (OSError, ValueError) as error:
            raise ModelError(f"{spec}: transformers cannot load {where!r}: {error}") from error
        model.to(device)
        model.eval()
        tokenizer.padding_side = "left"
        tokenizer.model_max_length = 1 << 30  # the context is checked here, with the counts, not warned about
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.unk_token or tokenizer.eos_token
        limit = int(getattr(model.config, "max_position_embeddings", 0) or 0)
        options = {"device": device, "dtype": str(model.dtype).removeprefix("torch.")}
        return cls(
            spec,
            options,
            model=model,
            tokenizer=tokenizer,
            device=device,
            batch_size=batch_size,
            context=min(context or limit, limit) if limit else (context or 4096),
        )

    @property
    def context_length(self) -> int:
        return self.context

    def count_tokens(self, text: str) -> int:
        return len(self.tokenizer(text)["input_ids"])

    def _generate(self, requests: Sequence[GenerationRequest], limits: Sequence[int]) -> list[Generation]:
        results: dict[int, Generation] = {}
        # Requests that share settings are batched together; within them, by prompt length.
        groups: dict[tuple[Any, ...], list[int]] = {}
        for index, request in enumerate(requests):
            key = (request.samples, request.temperature, request.stop, request.seed, limits[index])
            groups.setdefault(key, []).append(index)
        for indices in groups.values():
            indices.sort(key=lambda i: len(requests[i].prompt))
            for start in range(0, len(indices), self.batch_size):
                batch = indices[start : start + self.batch_size]
                for index, generation in zip(
                    batch, self._batch([requests[i] for i in batch], limits[batch[0]]), strict=True
                ):
                    results[index] = generation
        return [results[index] for index in range(len(requests))]

    def _batch(self, requests: Sequence[GenerationRequest], limit: int) -> list[Generation]:
        import torch

        first = requests[0]
        encoded = self.tokenizer([r.prompt for r in requests], return_tensors="pt", padding=True).to(
            self.device
        )
        settings: dict[str, Any] = {
            "max_new_tokens": limit,
            "num_return_sequences": first.samples,
            "pad_token_id": self.tokenizer.pad_token_id,
            "eos_token_id": self.tokenizer.eos_token_id,
        }
        if first.temperature > 0:
            settings.update(do_sample=True, temperature=first.temperature, top_p=1.0, top_k=0)
            torch.manual_seed(first.seed)
        else:
            settings.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        if first.stop:
            settings.update(stop_strings=list(first.stop), tokenizer=self.tokenizer)
        with torch.inference_mode():
            output = self.model.generate(**encoded, **settings)
        width = encoded["input_ids"].shape[1]
        generations = []
        for position, request in enumerate(requests):
            completions = []
            for sample in range(request.samples):
                tokens = output[position * request.samples + sample, width:]
                kept = tokens[tokens != self.tokenizer.pad_token_id] if self._pad_is_not_text() else tokens
                raw = self.tokenizer.decode(kept, skip_special_tokens=True)
                text, stopped = cut_at_stop(raw, request.stop)
                ended = stopped or bool((tokens == self.tokenizer.eos_token_id).any())
                completions.append(Completion(text, "stop" if ended else "length", int(kept.shape[0])))
            prompt_tokens = int(encoded["attention_mask"][position].sum())
            generations.append(Generation(tuple(completions), prompt_tokens))
        return generations

    def _pad_is_not_text(self) -> bool:
        return self.tokenizer.pad_token_id in (self.tokenizer.unk_token_id, self.tokenizer.eos_token_id)

    def close(self) -> None:
        self.model = None
