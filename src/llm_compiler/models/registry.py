"""Model specs and the lazy registry of backends.

A model is named by a spec, ``SCHEME:WHERE``:

=================  ==========================================================  ============
spec               backend                                                     extra
=================  ==========================================================  ============
``hf:PATH_OR_ID``  transformers, CPU or GPU (:mod:`.backends.hf`)              ``[hf]``
``vllm:PATH_OR_ID`` vLLM's offline engine, tensor parallel (:mod:`.backends.vllm`) ``[vllm]``
``gguf:FILE``      llama.cpp through llama-cpp-python (:mod:`.backends.gguf`)  ``[llamacpp]``
``openai:URL``     any OpenAI-compatible completions server; ``#MODEL`` picks  (none)
                   the served model (:mod:`.backends.openai`)
``replay:FILE``    answers read from a JSONL file (:mod:`.backends.replay`)    (none)
=================  ==========================================================  ============

A backend's module is imported only when a spec names it, so ``import llm_compiler``
never loads torch, transformers, vLLM or llama.cpp. Options common to several backends
(``dtype``, ``device``, ``context``, ``timeout``, ...) are passed by name; each backend
takes those it understands and refuses the rest.
"""

from __future__ import annotations

import difflib
import importlib
from dataclasses import dataclass
from typing import Any

from llm_compiler.errors import InvalidInput
from llm_compiler.models.base import BackendNotInstalled, Model
from llm_compiler.selection.registry import registered


@dataclass(frozen=True)
class Backend:
    """Where a backend lives and what installs it."""

    module: str
    cls: str
    extra: str | None
    packages: tuple[str, ...]
    help: str


BACKENDS: dict[str, Backend] = {
    "hf": Backend(
        "llm_compiler.models.backends.hf",
        "HFModel",
        "hf",
        ("torch", "transformers"),
        "a Hugging Face model folder or hub id, run with transformers",
    ),
    "vllm": Backend(
        "llm_compiler.models.backends.vllm",
        "VLLMModel",
        "vllm",
        ("vllm",),
        "a Hugging Face model folder or hub id, run with vLLM's offline engine",
    ),
    "gguf": Backend(
        "llm_compiler.models.backends.gguf",
        "GGUFModel",
        "llamacpp",
        ("llama_cpp",),
        "a GGUF file, run with llama.cpp",
    ),
    "openai": Backend(
        "llm_compiler.models.backends.openai",
        "OpenAIModel",
        None,
        (),
        "the URL of an OpenAI-compatible server, optionally #MODEL",
    ),
    "replay": Backend(
        "llm_compiler.models.backends.replay", "ReplayModel", None, (), "a JSONL file of answers"
    ),
}


def parse_spec(spec: str) -> tuple[str, str]:
    """Splits a spec into its scheme and location.

    Raises:
        InvalidInput: No known scheme.
    """
    scheme, sep, where = spec.partition(":")
    if not sep or scheme not in BACKENDS or not where:
        known = ", ".join(f"{name}:..." for name in BACKENDS)
        near = difflib.get_close_matches(scheme, [*BACKENDS, *registered()], n=2, cutoff=0.6)
        hint = f"Did you mean {' or '.join(near)}? " if near and scheme not in BACKENDS else ""
        raise InvalidInput(
            f"Unknown model spec {spec!r}. {hint}Write a source of lists ({', '.join(sorted(registered()))}) "
            f"or SCHEME:WHERE with a scheme of {known} "
            "(e.g. hf:facebook/llm-compiler-7b-ftd, gguf:llm-compiler-7b-ftd.Q4_K_M.gguf, "
            "openai:http://127.0.0.1:8000#facebook/llm-compiler-7b-ftd, replay:answers.jsonl)."
        )
    return scheme, where


def load_model(spec: str, **options: Any) -> Model:
    """Loads the model a spec names, importing only its backend.

    Args:
        spec: ``hf:...``, ``vllm:...``, ``gguf:...``, ``openai:...`` or ``replay:...``.
        **options: Backend settings (``dtype``, ``device``, ``context``, ...); None values
            are dropped, so callers can pass command-line options through.

    Raises:
        InvalidInput: An unknown spec or an option the backend does not take.
        BackendNotInstalled: The backend's packages are missing (the message names the extra).
        ModelError: The model could not be loaded.
    """
    scheme, where = parse_spec(spec)
    backend = BACKENDS[scheme]
    for package in backend.packages:
        try:
            importlib.import_module(package)
        except ImportError as error:
            raise BackendNotInstalled(
                f"{spec}: the {scheme} backend needs {package!r}, which is not installed ({error}). "
                f"Install it with: pip install 'llm-compiler[{backend.extra}]'."
            ) from error
    module = importlib.import_module(backend.module)
    cls = getattr(module, backend.cls)
    given = {name: value for name, value in options.items() if value is not None}
    unknown = sorted(set(given) - set(cls.OPTIONS))
    if unknown:
        raise InvalidInput(
            f"{spec}: the {scheme} backend does not take {', '.join(unknown)} "
            f"(it takes {', '.join(sorted(cls.OPTIONS)) or 'no options'})."
        )
    model: Model = cls.load(spec, where, **given)
    return model
