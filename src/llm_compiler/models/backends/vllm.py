"""``vllm:PATH_OR_ID``: vLLM's offline engine (extra ``[vllm]``), for GPUs.

The fastest way to run the released 7B and 13B models over thousands of prompts:
vLLM batches every request of a call itself (continuous batching), and
``tensor_parallel`` splits a model across that many GPUs of the machine. The context
is ``context`` when given (to fit the KV cache in memory), else the model's own
(16,384 for the released models); ``gpu_memory`` is the share of each GPU vLLM may
take. Prompts are raw text and vLLM's tokenizer adds BOS. Greedy decoding at
temperature 0; sampling is seeded per request.

This backend needs a GPU and vLLM; its tests are marked ``gpu``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from llm_compiler.models.base import (
    Completion,
    Generation,
    GenerationRequest,
    Model,
    ModelError,
    cut_at_stop,
    without_leading_space,
)


@dataclass
class VLLMModel(Model):
    """A model run by vLLM's offline engine (module docstring)."""

    engine: Any = None
    tokenizer: Any = None
    context: int = 0
    OPTIONS: ClassVar[frozenset[str]] = frozenset({"dtype", "tensor_parallel", "context", "gpu_memory"})

    @classmethod
    def load(
        cls,
        spec: str,
        where: str,
        dtype: str = "auto",
        tensor_parallel: int = 1,
        context: int | None = None,
        gpu_memory: float = 0.9,
    ) -> VLLMModel:
        """Starts the engine.

        Raises:
            ModelError: vLLM cannot load the model (no GPU, not enough memory, bad path).
        """
        import vllm

        settings: dict[str, Any] = {
            "model": where,
            "dtype": dtype,
            "tensor_parallel_size": tensor_parallel,
            "gpu_memory_utilization": gpu_memory,
        }
        if context:
            settings["max_model_len"] = context
        try:
            engine = vllm.LLM(**settings)
        except (RuntimeError, ValueError, OSError) as error:
            raise ModelError(f"{spec}: vLLM cannot load {where!r}: {error}") from error
        length = int(engine.llm_engine.model_config.max_model_len)
        options = {"dtype": dtype, "tensor_parallel": tensor_parallel, "context": length}
        return cls(spec, options, engine=engine, tokenizer=engine.get_tokenizer(), context=length)

    @property
    def context_length(self) -> int:
        return self.context

    def count_tokens(self, text: str) -> int:
        return len(self.tokenizer(text)["input_ids"])

    def _generate(self, requests: Sequence[GenerationRequest], limits: Sequence[int]) -> list[Generation]:
        import vllm

        params = [
            vllm.SamplingParams(
                n=request.samples,
                temperature=request.temperature,
                max_tokens=limit,
                stop=list(request.stop) or None,
                seed=request.seed if request.temperature > 0 else None,
            )
            for request, limit in zip(requests, limits, strict=True)
        ]
        outputs = self.engine.generate([request.prompt for request in requests], params, use_tqdm=False)
        generations = []
        for request, output in zip(requests, outputs, strict=True):
            completions = tuple(
                Completion(
                    cut_at_stop(without_leading_space(sample.text), request.stop)[0],
                    "length" if sample.finish_reason == "length" else "stop",
                    len(sample.token_ids),
                )
                for sample in output.outputs
            )
            generations.append(Generation(completions, len(output.prompt_token_ids)))
        return generations

    def close(self) -> None:
        self.engine = None
