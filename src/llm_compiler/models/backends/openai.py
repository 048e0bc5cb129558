"""``openai:URL[#MODEL]``: any server with OpenAI's completions API.

``vllm serve``, llama.cpp's ``llama-server``, llama-cpp-python's server and Ollama all
answer ``POST /v1/completions``; this backend talks to them with the standard library
alone (no client package). The prompt is sent raw (the completions API, not chat: the
released models take no chat template). ``#MODEL`` names the served model; without it
the first model ``GET /v1/models`` lists is used.

Prompts are counted by the server's own tokenizer where it has an endpoint for it
(``/tokenize`` on vLLM and llama.cpp, ``/extras/tokenize/count`` on llama-cpp-python),
else with ``tokenizer`` (a local tokenizer.json or model folder), else with the
calibrated estimate of Llama's tokenizer (which errs high). The context is ``context``
when given, else what the server reports (vLLM's ``max_model_len``, llama.cpp's
``n_ctx``), else the released models' 16,384.

Requests time out after ``timeout`` seconds; connection failures, timeouts and answers
429 and 5xx are retried ``retries`` times with exponential backoff; a server that never
answers is an error naming the URL and how to start one. ``parallel`` requests are in
flight at once (servers batch them).
"""

from __future__ import annotations

import json
import logging
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, ClassVar

from llm_compiler.corpus.tokens import TokenCounter, get_token_counter
from llm_compiler.models.base import (
    Completion,
    Generation,
    GenerationRequest,
    Model,
    ModelError,
    PromptTooLong,
    cut_at_stop,
    without_leading_space,
)

logger = logging.getLogger(__name__)

DEFAULT_CONTEXT = 16384
RETRIED_STATUSES = frozenset({408, 429, 500, 502, 503, 504})


class ServerError(ModelError):
    """The server answered with an error (after retries where retrying made sense)."""

    def __init__(self, message: str, *, status: int | None = None, body: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.body = body


@dataclass
class OpenAIModel(Model):
    """A model behind an OpenAI-compatible completions server (module docstring)."""

    base: str = ""
    model: str = ""
    timeout: float = 600.0
    retries: int = 3
    parallel: int = 4
    context: int = DEFAULT_CONTEXT
    api_key: str | None = None
    counter: TokenCounter | None = None
    _count: Callable[[str], int] | None = field(default=None, repr=False)
    OPTIONS: ClassVar[frozenset[str]] = frozenset(
        {"timeout", "retries", "parallel", "context", "tokenizer", "api_key"}
    )

    @classmethod
    def load(
        cls,
        spec: str,
        where: str,
        timeout: float = 600.0,
        retries: int = 3,
        parallel: int = 4,
        context: int | None = None,
        tokenizer: str | None = None,
        api_key: str | None = None,
    ) -> OpenAIModel:
        """Connects: finds the served model and its context, and how to count tokens.

        Raises:
            ModelError: The server does not answer or serves no model.
        """
        url, _, name = where.partition("#")
        root = url.rstrip("/").removesuffix("/v1")
        model = cls(
            spec,
            {"timeout": timeout, "retries": retries},
            base=root,
            model=name,
            timeout=timeout,
            retries=retries,
            parallel=parallel,
            api_key=api_key,
            counter=get_token_counter(tokenizer) if tokenizer else None,
        )
        served = model._request("GET", "/v1/models").get("data") or []
        if not model.model:
            if not served:
                raise ModelError(f"{spec}: the server lists no model; name one with {url}#MODEL.")
            model.model = str(served[0].get("id"))
        reported = next(
            (entry.get("max_model_len") for entry in served if entry.get("id") == model.model),
            None,
        )
        model.context = context or reported or model._server_context() or DEFAULT_CONTEXT
        model._count = model._token_counter()
        model.options["model"] = model.model
        return model

    @property
    def context_length(self) -> int:
        return self.context

    def count_tokens(self, text: str) -> int:
        assert self._count is not None
        return self._count(text)

    def _generate(self, requests: Sequence[GenerationRequest], limits: Sequence[int]) -> list[Generation]:
        with ThreadPoolExecutor(max_workers=max(1, self.parallel)) as pool:
            return list(pool.map(self._one, requests, limits))

    def _one(self, request: GenerationRequest, limit: int) -> Generation:
        completions: list[Completion] = []
        prompt_tokens = 0
        while len(completions) < request.samples:
            body = {
                "model": self.model,
                "prompt": request.prompt,
                "max_tokens": limit,
                "temperature": request.temperature,
                "n": request.samples - len(completions),
                "seed": request.seed + len(completions),
                **({"stop": list(request.stop)} if request.stop else {}),
                # Greedy means greedy everywhere: llama.cpp's servers penalize repeats by default.
                **({"top_k": 1, "repeat_penalty": 1.0} if request.temperature == 0 else {}),
            }
            answer = self._request("POST", "/v1/completions", body, prompt=request.prompt)
            choices = answer.get("choices") or []
            if not choices:
                raise ModelError(f"{self.spec} answered without choices: {json.dumps(answer)[:300]}")
            usage = answer.get("usage") or {}
            prompt_tokens = int(usage.get("prompt_tokens") or 0)
            for choice in sorted(choices, key=lambda c: int(c.get("index", 0))):
                # Some servers return the stop string; the interface promises text before it.
                text, _ = cut_at_stop(without_leading_space(str(choice.get("text", ""))), request.stop)
                reason = "length" if choice.get("finish_reason") == "length" else "stop"
                completions.append(Completion(text, reason, 0))
        if len(completions) == 1:
            tokens = int((answer.get("usage") or {}).get("completion_tokens") or 0)
            completions[0] = Completion(completions[0].text, completions[0].finish_reason, tokens)
        return Generation(tuple(completions[: request.samples]), prompt_tokens)

    def _request(self, method: str, path: str, body: dict[str, Any] | None = None, prompt: str = "") -> Any:
        """One call, retried on connection failures, timeouts, 408, 429 and 5xx."""
        url = self.base + path
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        last = ""
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(min(2.0 ** (attempt - 1), 30.0))
                logger.info("retrying %s %s (%s)", method, url, last)
            request = urllib.request.Request(url, data=data, headers=headers, method=method)
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    return json.loads(response.read().decode() or "{}")
            except urllib.error.HTTPError as error:
                text = error.read().decode(errors="replace")
                if error.code in RETRIED_STATUSES:
                    last = f"HTTP {error.code}: {text[:200]}"
                    continue
                if prompt and _is_context_error(text):
                    tokens = self.count_tokens(prompt) if self._count else 0
                    raise PromptTooLong(
                        f"{self.spec} refused a prompt of {tokens} tokens as longer than its context "
                        f"({self.context}): {text[:300]}",
                        prompt_tokens=tokens,
                        limit=self.context - 1,
                    ) from error
                raise ServerError(
                    f"{self.spec}: {method} {url} failed with HTTP {error.code}: {text[:500]}",
                    status=error.code,
                    body=text,
                ) from error
            except (urllib.error.URLError, TimeoutError, ConnectionError) as error:
                last = str(getattr(error, "reason", error))
            except json.JSONDecodeError as error:
                raise ServerError(f"{self.spec}: {method} {url} did not answer JSON ({error}).") from error
        raise ModelError(
            f"{self.spec}: no answer from {url} after {self.retries + 1} tries ({last}). Is the server "
            "running? Start one, e.g. `python -m llama_cpp.server --model FILE.gguf --n_ctx 16384` or "
            "`vllm serve facebook/llm-compiler-7b-ftd`, or pass the right URL."
        )

    def _server_context(self) -> int | None:
        """llama.cpp's ``/props`` (its n_ctx); None where the server has no such endpoint."""
        try:
            props = self._request_quietly("GET", "/props")
        except ModelError:
            return None
        settings = props.get("default_generation_settings") or {}
        context = settings.get("n_ctx") or props.get("n_ctx")
        return int(context) if context else None

    def _request_quietly(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        retries, self.retries = self.retries, 0
        try:
            return self._request(method, path, body)
        finally:
            self.retries = retries

    def _token_counter(self) -> Callable[[str], int]:
        """The server's tokenizer if it exposes one, else a local counter (BOS added)."""
        probe = "define void @f() {"
        candidates: list[tuple[str, Callable[[str], dict[str, Any]], Callable[[Any], int]]] = [
            ("/tokenize", lambda text: {"model": self.model, "prompt": text, "content": text,
                                        "add_special": True, "add_special_tokens": True},
             lambda answer: int(answer["count"]) if "count" in answer else len(answer["tokens"])),
            ("/extras/tokenize/count", lambda text: {"model": self.model, "input": text},
             lambda answer: int(answer["count"])),
        ]  # fmt: skip
        for path, make_body, read in candidates:
            try:
                read(self._request_quietly("POST", path, make_body(probe)))
            except (ModelError, KeyError, TypeError, ValueError):
                continue
            self.options["token_counter"] = f"server {path}"

            def count(text: str, path: str = path, make_body: Any = make_body, read: Any = read) -> int:
                return int(read(self._request("POST", path, make_body(text))))

            return count
        counter = self.counter or get_token_counter(None)
        self.options["token_counter"] = counter.name
        return lambda text: counter.count(text) + 1


def _is_context_error(text: str) -> bool:
    lowered = text.lower()
    return any(
        phrase in lowered
        for phrase in (
            "context length",
            "context window",
            "maximum context",
            "exceeds the",
            "n_ctx",
            "too long",
        )
    )
