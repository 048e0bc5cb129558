"""``gguf:FILE``: a GGUF model run with llama.cpp through llama-cpp-python (extra ``[llamacpp]``).

The community quantizations of the released weights (``llm-compiler-7b-ftd.Q4_K_M.gguf``
and the like) run on a laptop's CPU this way.

The trap this backend closes: llama-cpp-python opens a model with a context of 512
tokens unless told otherwise, and llama.cpp then shifts or truncates longer prompts
without an error, so a 10,000-token IR unit would be answered from its last few
hundred tokens. Here the context and the RoPE base are read from the file's metadata
(``llama.context_length``: 16,384 and ``llama.rope.freq_base``: 1e6 for the released
models) and set explicitly; ``context`` may lower the context (to save memory: the KV
cache of a 7B model at 16,384 tokens is about 8 GiB in f16), and a prompt that does not
fit is refused with its token count (:class:`~llm_compiler.models.base.PromptTooLong`).

Greedy decoding is llama.cpp's greedy sampler (temperature 0, top-k 1, no repetition
penalty); sampling draws each sample with seed ``seed + i``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from llm_compiler.errors import InvalidInput
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
class GGUFModel(Model):
    """A GGUF file run with llama.cpp (module docstring)."""

    llama: Any = None
    context: int = 0
    OPTIONS: ClassVar[frozenset[str]] = frozenset({"context", "threads", "gpu_layers"})

    @classmethod
    def load(
        cls,
        spec: str,
        where: str,
        context: int | None = None,
        threads: int | None = None,
        gpu_layers: int = 0,
    ) -> GGUFModel:
        """Opens the file with its own context length and RoPE base.

        Raises:
            InvalidInput: The file is missing.
            ModelError: llama.cpp cannot open it.
        """
        import llama_cpp

        path = Path(where).expanduser()
        if not path.is_file():
            raise InvalidInput(f"{spec}: no such file {str(path)!r}.")
        metadata = _metadata(llama_cpp, path)
        architecture = metadata.get("general.architecture", "llama")
        trained = int(metadata.get(f"{architecture}.context_length", 0) or 0)
        rope_base = float(metadata.get(f"{architecture}.rope.freq_base", 0) or 0)
        if not trained:
            raise ModelError(
                f"{spec}: the file does not say its context length ({architecture}.context_length); "
                "convert it with a current llama.cpp."
            )
        n_ctx = min(context or trained, trained)
        try:
            llama = llama_cpp.Llama(
                model_path=str(path),
                n_ctx=n_ctx,
                n_batch=min(512, n_ctx),
                rope_freq_base=rope_base,
                n_threads=threads or os.cpu_count() or 1,
                n_gpu_layers=gpu_layers,
                seed=0,
                verbose=False,
            )
        except (ValueError, RuntimeError) as error:
            raise ModelError(f"{spec}: llama.cpp cannot open {str(path)!r}: {error}") from error
        if llama.n_ctx() != n_ctx:
            raise ModelError(f"{spec}: llama.cpp opened a context of {llama.n_ctx()} tokens, not {n_ctx}.")
        options = {"context": n_ctx, "trained_context": trained, "rope_freq_base": rope_base}
        return cls(spec, options, llama=llama, context=n_ctx)

    @property
    def context_length(self) -> int:
        return self.context

    def count_tokens(self, text: str) -> int:
        return len(self.llama.tokenize(text.encode(), add_bos=True, special=False))

    def _generate(self, requests: Sequence[GenerationRequest], limits: Sequence[int]) -> list[Generation]:
        generations = []
        for request, limit in zip(requests, limits, strict=True):
            completions = []
            for sample in range(request.samples):
                greedy = request.temperature == 0
                answer = self.llama.create_completion(
                    request.prompt,
                    max_tokens=limit,
                    temperature=request.temperature,
                    top_k=1 if greedy else 0,
                    top_p=1.0,
                    min_p=0.0,
                    repeat_penalty=1.0,
                    stop=list(request.stop) or None,
                    seed=request.seed + sample,
                )
                choice = answer["choices"][0]
                text, _ = cut_at_stop(without_leading_space(choice["text"]), request.stop)
                reason = "length" if choice.get("finish_reason") == "length" else "stop"
                completions.append(Completion(text, reason, int(answer["usage"]["completion_tokens"])))
            generations.append(Generation(tuple(completions), self.count_tokens(request.prompt)))
        return generations

    def close(self) -> None:
        if self.llama is not None:
            self.llama.close()
            self.llama = None


def _metadata(llama_cpp: Any, path: Path) -> dict[str, str]:
    """The file's key-value metadata, read by llama.cpp with the vocabulary only (no weights)."""
    try:
        probe = llama_cpp.Llama(model_path=str(path), vocab_only=True, verbose=False)
    except (ValueError, RuntimeError) as error:
        raise ModelError(f"llama.cpp cannot read {str(path)!r} as a GGUF model: {error}") from error
    try:
        return dict(probe.metadata)
    finally:
        probe.close()
