"""The cache of the tiny models' artifacts: where they live, how they are named, built once.

Every artifact of :mod:`tests.models.tiny_models` (the npm tarball, the tokenizer, the
saved models, the GGUF files) lives under :func:`cache_root` (``$LLM_COMPILER_TEST_CACHE``,
else ``~/.cache/llm-compiler-tests``) in a folder or file named by a hash
(:func:`_digest`) of what it was built from, :data:`BUILD_VERSION` included. A build
(:func:`_build_once`, the package's :func:`llm_compiler.training.tokenizer.build_once`)
writes into a temporary path beside its final one and renames it into place, under a
file lock, so an interrupted build leaves nothing half-made and two test processes never
build the same thing at once; a path that exists is reused as it is.

This module imports nothing of the tiny models' other modules (:mod:`tests.models.tiny_tokenizer`,
:mod:`tests.models.tiny_gguf`, :mod:`tests.models.tiny_models`), which all import it.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Final

from llm_compiler.files import file_sha256
from llm_compiler.training.tokenizer import build_once

#: Re-exported under the names the tiny models' modules use.
_build_once, _file_digest = build_once, file_sha256

#: Bump when what a build writes changes, so that caches built the old way are not reused.
BUILD_VERSION: Final = 1

#: The environment variable naming the cache folder.
CACHE_ENV: Final = "LLM_COMPILER_TEST_CACHE"


class TinyModelError(RuntimeError):
    """A tiny model or its tokenizer could not be built (bad data, the samples not learnt)."""


def cache_root() -> Path:
    """The folder of all built artifacts: ``$LLM_COMPILER_TEST_CACHE`` or ``~/.cache/llm-compiler-tests``."""
    configured = os.environ.get(CACHE_ENV)
    root = Path(configured).expanduser() if configured else Path.home() / ".cache" / "llm-compiler-tests"
    root.mkdir(parents=True, exist_ok=True)
    return root


def _digest(value: object) -> str:
    """A short stable hash of a JSON-able value."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _write_json(path: Path, value: object) -> None:
    path.write_text(json.dumps(value, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
