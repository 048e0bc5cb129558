"""The tiny LLM Compiler stand-ins: the real tokenizer, models that load, answers that replay.

The builds are cached (see :mod:`tests.models.tiny_models`): on a warm cache this file
takes about 10 s, most of it importing transformers; on a cold one it also fetches the npm
package and fine-tunes the demo model, about 20 s in all on two cores. The tests that
need the fine-tuned model are marked ``slow`` for that reason. Tests skip when a library
of the ``hf`` or ``llamacpp`` extras is missing, or when the npm package cannot be fetched.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from llm_compiler.corpus.tokens import HFTokenCounter
from tests.corpus.test_tokens import EXACT, REFERENCE
from tests.models import tiny_models
from tests.models.tiny_models import (
    BOS_ID,
    CODE_LLAMA_EXTRA_PIECES,
    CONTEXT_LENGTH,
    DEMO_SAMPLES,
    EOS_ID,
    INFILLING_TOKENS,
    ROPE_THETA,
    UNK_ID,
    VOCAB_SIZE,
    TinyModelError,
    TokenizerUnavailable,
)

INST = "[INST] Tell me how to optimize this LLVM-IR for object file size:"


def _or_skip(build: Callable[[], Path]) -> Path:
    """``build()``, or a skip when the npm package cannot be fetched (no npm, no network)."""
    try:
        return build()
    except TokenizerUnavailable as error:
        pytest.skip(f"Llama 2's vocabulary is not available: {error}")


@pytest.fixture(scope="module")
def tokenizer_dir() -> Path:
    pytest.importorskip("tokenizers")
    return _or_skip(tiny_models.tokenizer_dir)


@pytest.fixture(scope="module")
def untrained_dir() -> Path:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    return _or_skip(tiny_models.hf_model_dir)


@pytest.fixture(scope="module")
def demo_dir() -> Path:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    return _or_skip(lambda: tiny_models.hf_model_dir("demo"))


@pytest.fixture(scope="module")
def demo_gguf(demo_dir: Path) -> Path:
    pytest.importorskip("gguf")
    pytest.importorskip("safetensors")
    return tiny_models.gguf_file(demo_dir)


@pytest.fixture(scope="module")
def demo_llama(demo_gguf: Path) -> Iterator[object]:
    """The demo model loaded by llama.cpp (one load for the module: it is the slow part)."""
    llama_cpp = pytest.importorskip("llama_cpp")
    llama = llama_cpp.Llama(model_path=str(demo_gguf), n_ctx=2048, n_threads=2, verbose=False)
    yield llama
    llama.close()


# --- The tokenizer ---------------------------------------------------------------------


def test_tokenizer_counts_like_llama2(tokenizer_dir: Path) -> None:
    counter = HFTokenCounter(tokenizer_dir)  # the project's exact counter, on the folder
    for text, llama in [(text, llama) for _, text, llama in REFERENCE] + EXACT:
        assert counter.count(text) == llama, text


def test_tokenizer_has_code_llamas_vocabulary(tokenizer_dir: Path) -> None:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(tokenizer_dir / "tokenizer.json"))
    assert tokenizer.get_vocab_size() == VOCAB_SIZE == 32_016
    assert [tokenizer.id_to_token(i) for i in (UNK_ID, BOS_ID, EOS_ID)] == ["<unk>", "<s>", "</s>"]
    assert [tokenizer.id_to_token(32_000 + i) for i in range(16)] == list(CODE_LLAMA_EXTRA_PIECES)
    assert {piece: tokenizer.token_to_id(piece) for piece in INFILLING_TOKENS} == INFILLING_TOKENS
    assert tokenizer.token_to_id("<0x0A>") == 13
    assert tokenizer.encode("\tret").tokens == ["<s>", "▁", "<0x09>", "ret"]


def test_transformers_loads_the_tokenizer(tokenizer_dir: Path) -> None:
    transformers = pytest.importorskip("transformers")
    tokenizer = transformers.AutoTokenizer.from_pretrained(tokenizer_dir)
    ids = tokenizer(INST)["input_ids"]
    assert ids[:4] == [BOS_ID, 518, 25580, 29962]  # <s> ▁[ INST ]
    assert (tokenizer.bos_token_id, tokenizer.eos_token_id, tokenizer.unk_token_id) == (
        BOS_ID,
        EOS_ID,
        UNK_ID,
    )
    assert len(tokenizer) == VOCAB_SIZE
    for text, llama in EXACT:
        assert len(tokenizer(text, add_special_tokens=False)["input_ids"]) == llama, text
    assert tokenizer.decode(ids, skip_special_tokens=True) == INST


# --- Hugging Face models ---------------------------------------------------------------


def test_untrained_model_has_the_released_shape_and_generates(untrained_dir: Path) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    config = json.loads((untrained_dir / "config.json").read_text())
    assert (config["vocab_size"], config["max_position_embeddings"]) == (VOCAB_SIZE, CONTEXT_LENGTH)
    assert config.get("rope_theta", (config.get("rope_parameters") or {}).get("rope_theta")) == ROPE_THETA
    assert (untrained_dir / "model.safetensors").is_file()
    tokenizer = AutoTokenizer.from_pretrained(untrained_dir)
    model = AutoModelForCausalLM.from_pretrained(untrained_dir)
    assert model.generation_config.do_sample is False
    encoded = tokenizer(INST, return_tensors="pt")
    with torch.no_grad():
        output = model.generate(**encoded, max_new_tokens=3)
    assert output.shape[1] <= encoded["input_ids"].shape[1] + 3


@pytest.mark.slow
def test_finetuned_model_answers_its_samples_with_transformers(demo_dir: Path) -> None:
    from transformers import AutoTokenizer

    samples = tiny_models.load_samples(demo_dir)
    assert samples == [tuple(sample) for sample in DEMO_SAMPLES]
    tokenizer = AutoTokenizer.from_pretrained(demo_dir)
    completions = tiny_models.generate_hf(demo_dir, [prompt for prompt, _ in samples], max_new_tokens=200)
    for (_, answer), completion in zip(samples, completions, strict=True):
        assert completion[-1] == EOS_ID
        assert tokenizer.decode(completion, skip_special_tokens=True) == answer


@pytest.mark.slow
def test_finetuning_is_cached_by_its_samples(demo_dir: Path) -> None:
    assert tiny_models.hf_model_dir("demo") == demo_dir
    training = json.loads((demo_dir / "training.json").read_text())
    assert training["worst_margin"] >= training["settings"]["margin"]
    with pytest.raises(ValueError, match="same prompt"):
        tiny_models.finetuned_model_dir([("p", "a"), ("p", "b")])


# --- GGUF and llama.cpp ----------------------------------------------------------------


@pytest.mark.slow
def test_gguf_carries_the_models_metadata_and_vocabulary(demo_gguf: Path) -> None:
    from gguf import GGUFReader, TokenType

    reader = GGUFReader(demo_gguf)

    def scalar(key: str) -> object:
        field = reader.fields[key]
        return field.parts[field.data[0]][0]

    assert scalar("llama.context_length") == CONTEXT_LENGTH
    assert scalar("llama.rope.freq_base") == ROPE_THETA
    assert scalar("tokenizer.ggml.bos_token_id") == BOS_ID
    assert scalar("tokenizer.ggml.eos_token_id") == EOS_ID
    assert scalar("tokenizer.ggml.add_bos_token")
    types = reader.fields["tokenizer.ggml.token_type"]
    assert len(types.data) == VOCAB_SIZE
    assert [int(types.parts[types.data[i]][0]) for i in INFILLING_TOKENS.values()] == [TokenType.CONTROL] * 4
    assert {tensor.name for tensor in reader.tensors} >= {
        "token_embd.weight",
        "output.weight",
        "blk.1.ffn_down.weight",
    }


@pytest.mark.slow
@pytest.mark.llamacpp
def test_llama_cpp_tokenizes_like_the_tokenizer(demo_llama: object, demo_dir: Path) -> None:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(demo_dir / "tokenizer.json"))
    texts = [text for _, text, _ in REFERENCE] + [text for text, _ in EXACT] + [p for p, _ in DEMO_SAMPLES]
    for text in texts:
        expected = tokenizer.encode(text).ids
        assert demo_llama.tokenize(text.encode(), add_bos=True, special=False) == expected, text  # type: ignore[attr-defined]


@pytest.mark.slow
@pytest.mark.llamacpp
def test_gguf_answers_like_transformers(demo_llama: object, demo_gguf: Path, demo_dir: Path) -> None:
    prompts = [prompt for prompt, _ in DEMO_SAMPLES]
    ours = tiny_models.generate_llama_cpp(demo_gguf, prompts, max_new_tokens=200)
    assert ours == tiny_models.generate_hf(demo_dir, prompts, max_new_tokens=200)
    for (prompt, answer), ids in zip(DEMO_SAMPLES, ours, strict=True):
        # llama.cpp keeps the space of the answer's first piece ("▁Run"); transformers strips it.
        assert demo_llama.detokenize(ids[:-1]).decode() == " " + answer  # type: ignore[attr-defined]
        completion = demo_llama.create_completion(prompt, max_tokens=200, temperature=0.0)  # type: ignore[attr-defined]
        assert completion["choices"][0]["text"] == " " + answer
        assert completion["choices"][0]["finish_reason"] == "stop"


# --- The cache -------------------------------------------------------------------------


def test_a_failed_build_leaves_nothing_and_a_finished_one_is_reused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(tiny_models.CACHE_ENV, str(tmp_path))
    final = tiny_models.cache_root() / "thing"

    def broken(folder: Path) -> None:
        (folder / "half").write_text("written")
        raise TinyModelError("interrupted")

    with pytest.raises(TinyModelError):
        tiny_models._build_once(final, broken)
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith(".lock")) == []
    assert tiny_models._build_once(final, lambda folder: (folder / "done").write_text("ok")) == final
    assert tiny_models._build_once(final, broken) == final  # not built again
    assert sorted(p.name for p in final.iterdir()) == ["done"]
