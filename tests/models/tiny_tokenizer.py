"""Code Llama's tokenizer for the tiny models, built by :mod:`llm_compiler.training.tokenizer`.

The package writes the released models' tokenizer from Llama 2's vocabulary (the npm
package ``llama-tokenizer-js``, no model hub); this module builds it into the test
cache of :mod:`tests.models.tiny_cache` and re-exports the package's names.

:mod:`tests.models.tiny_models` re-exports everything here.
"""

from __future__ import annotations

from pathlib import Path

from llm_compiler.training.tokenizer import (
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
    write_tokenizer,
)
from llm_compiler.training.tokenizer import npm_tarball as _npm_tarball
from tests.models.tiny_cache import BUILD_VERSION, _build_once, cache_root

__all__ = [
    "BOS",
    "BOS_ID",
    "CODE_LLAMA_EXTRA_PIECES",
    "CONTEXT_LENGTH",
    "EOS",
    "EOS_ID",
    "INFILLING_TOKENS",
    "LLAMA2_MERGES",
    "LLAMA2_VOCAB_SIZE",
    "NPM_PACKAGE",
    "NPM_SHA256",
    "NPM_SOURCE",
    "NPM_TARBALL_URL",
    "NPM_VERSION",
    "TARBALL_ENV",
    "UNK",
    "UNK_ID",
    "VOCAB_SIZE",
    "TokenizerUnavailable",
    "llama2_vocabulary",
    "npm_tarball",
    "tokenizer_dir",
    "write_tokenizer",
]


def npm_tarball() -> Path:
    """The ``llama-tokenizer-js`` tarball, fetched into the test cache once."""
    return _npm_tarball(cache_root() / "npm")


def tokenizer_dir() -> Path:
    """A folder holding Code Llama's tokenizer, as the released LLM Compiler models ship it.

    Raises:
        TokenizerUnavailable: The npm package could not be fetched.
    """
    final = cache_root() / f"tokenizer-codellama-v{BUILD_VERSION}"
    return _build_once(final, lambda temporary: write_tokenizer(temporary, npm_tarball()))
