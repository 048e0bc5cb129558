"""GGUF files of the tiny models, for llama.cpp, written the way llama.cpp's converter writes a Llama.

:func:`gguf_file` converts a saved Hugging Face Llama (a folder of
:func:`tests.models.tiny_models.hf_model_dir` or
:func:`tests.models.tiny_models.finetuned_model_dir`) to GGUF (f32 or f16) as llama.cpp's
``convert_hf_to_gguf.py`` converts a Llama (with the package's exporter,
:func:`llm_compiler.training.gguf_export.write_gguf`), and caches it (see
:mod:`tests.models.tiny_cache`) by a hash of the model's files. Needs ``gguf``,
``numpy`` and ``safetensors``; ``llama-cpp-python`` only to run the file.

:mod:`tests.models.tiny_models` re-exports the public names here.
"""

from __future__ import annotations

from pathlib import Path

from llm_compiler.training.gguf_export import write_gguf
from tests.models.tiny_cache import BUILD_VERSION, _build_once, _digest, _file_digest, cache_root


def gguf_file(model_dir: Path, dtype: str = "f32") -> Path:
    """A GGUF file of a saved tiny model, for llama.cpp, cached by the model's files.

    Args:
        model_dir: A folder of :func:`hf_model_dir` or :func:`finetuned_model_dir` (or any
            saved Llama with a Llama BPE ``tokenizer.json``).
        dtype: ``"f32"`` or ``"f16"``.
    """
    model_dir = Path(model_dir)
    contents = [
        *sorted(model_dir.glob("*.safetensors")),
        model_dir / "config.json",
        model_dir / "tokenizer.json",
    ]
    key = _digest([BUILD_VERSION, dtype, [_file_digest(path) for path in contents]])
    final = cache_root() / "gguf" / f"{model_dir.name}-{key}-{dtype}.gguf"
    return _build_once(final, lambda temporary: write_gguf(model_dir, temporary, dtype), is_dir=False)
