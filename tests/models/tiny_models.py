"""Tiny models of LLM Compiler's architecture, built on this machine for the backends' tests.

Meta's LLM Compiler models (``facebook/llm-compiler-7b`` and the rest) are Code Llama
models: the Llama architecture with a 16,384-token context and RoPE base 10^6, and Code
Llama's tokenizer, Llama 2's sentencepiece BPE vocabulary of 32,000 pieces plus 16 pieces
for infilling (32,016 in all). Seven billion parameters are too many for a test, so this
module builds models of the same shape in miniature (a hidden size of 64, two layers) and
caches them outside the repository; nothing is downloaded from a model hub:

* :func:`tokenizer_dir`: the *real* tokenizer. Llama 2's vocabulary and merges come from
  the npm package ``llama-tokenizer-js`` 1.2.2 (the tarball is fetched with ``npm pack``
  and checked against a pinned SHA-256), where they are embedded base64-encoded: the
  vocabulary as the pieces joined by newlines, the merges as pairs of little-endian
  16-bit piece ids. They become a ``tokenizers`` BPE ``tokenizer.json`` laid out like
  Llama 2's own (byte fallback; the normalizer prepends ``▁`` and writes spaces as
  ``▁``; BOS ``<s>`` added in front), plus Code Llama's 16 extra pieces (see
  :data:`CODE_LLAMA_EXTRA_PIECES`). Token counts equal Llama 2's.
* :func:`hf_model_dir`: a ``LlamaForCausalLM`` with random weights from a fixed seed,
  saved with ``save_pretrained`` (safetensors) next to the tokenizer files and a greedy
  generation config.
* :func:`finetuned_model_dir`: that model trained on a handful of (prompt, answer)
  pairs until greedy decoding of each prompt gives its answer and then ``</s>``, so a
  backend's output can be checked to the character. Training (AdamW on the CPU, loss on
  the answer tokens only) stops as soon as every answer token wins by a margin in the
  logits under teacher forcing, which greedy decoding then confirms. On two cores the
  three :data:`DEMO_SAMPLES` (prompts of 130 to 650 tokens) take about 5 s; four
  prompts of 2,000 to 3,400 tokens about 35 s, as a step costs what the prompts cost.
* :func:`gguf_file`: a saved model converted to GGUF (f32 or f16) for llama.cpp, the way
  llama.cpp's ``convert_hf_to_gguf.py`` converts a Llama: the q and k projections are
  permuted back to Meta's rotary layout, and the vocabulary is written as a sentencepiece
  (``llama``) vocabulary whose scores make llama.cpp merge in the BPE merges' order, so
  it tokenizes as ``tokenizer.json`` does. One exception: llama.cpp merges any two pieces
  that make a vocabulary piece, so text holding `` <SUF>``, `` <PRE>``, `` <M`` or `` <E``
  can reach Code Llama's extra pieces there and not with ``tokenizer.json``.

Every artifact lives under :func:`cache_root` (``$LLM_COMPILER_TEST_CACHE``, else
``~/.cache/llm-compiler-tests``) in a folder named by a hash of what it was built from.
A build writes into a temporary folder and renames it into place, under a file lock, so
an interrupted build leaves nothing half-made and two test processes never build the
same thing at once. Needs ``tokenizers`` for the tokenizer; ``torch`` and
``transformers`` for the models; ``gguf`` (and ``safetensors``) for GGUF files;
``llama-cpp-python`` only to run one.

Run as a script to build everything (the demo fine-tune included) into a folder::

    .venv/bin/python -m tests.models.tiny_models --out DIR
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Final

try:
    import fcntl
except ImportError:  # not POSIX: builds are still atomic, just not locked
    fcntl = None  # type: ignore[assignment]

#: Bump when what a build writes changes, so that caches built the old way are not reused.
BUILD_VERSION: Final = 1

#: The environment variable naming the cache folder.
CACHE_ENV: Final = "LLM_COMPILER_TEST_CACHE"
#: An environment variable that may name a local copy of the npm tarball (for offline CI).
TARBALL_ENV: Final = "LLM_COMPILER_LLAMA_TOKENIZER_JS"

NPM_PACKAGE: Final = "llama-tokenizer-js"
NPM_VERSION: Final = "1.2.2"
#: SHA-256 of ``llama-tokenizer-js-1.2.2.tgz`` as the npm registry serves it.
NPM_SHA256: Final = "ee83014ac8b379b16cf8d81e99ffcdb23dfade8c0d2e751bd06e7dc0b8476e72"
NPM_TARBALL_URL: Final = f"https://registry.npmjs.org/{NPM_PACKAGE}/-/{NPM_PACKAGE}-{NPM_VERSION}.tgz"
#: The file in the tarball that embeds the vocabulary and the merges.
NPM_SOURCE: Final = "package/llama-tokenizer.js"

UNK, BOS, EOS = "<unk>", "<s>", "</s>"
UNK_ID, BOS_ID, EOS_ID = 0, 1, 2
#: Llama 2's vocabulary: 3 special pieces, 256 byte pieces, then the merged and single pieces.
LLAMA2_VOCAB_SIZE: Final = 32_000
LLAMA2_MERGES: Final = 61_249
#: Code Llama's 16 pieces after Llama 2's, ids 32000 to 32015 in this order. The four
#: infilling tokens are ``▁<PRE>`` (32007), ``▁<SUF>`` (32008), ``▁<MID>`` (32009) and
#: ``▁<EOT>`` (32010), as the released Code Llama tokenizer configs declare them; the
#: other twelve are the partial and repeated pieces of Code Llama's sentencepiece model
#: (as listed by microsoft/aici's ``llama16`` tokenizer). Here they are vocabulary
#: entries without merges, so text never encodes to them and Llama 2's counts stand.
CODE_LLAMA_EXTRA_PIECES: Final = (
    "▁<SU",
    "▁<SUF",
    "▁<PRE",
    "▁<M",
    "▁<MID",
    "▁<E",
    "▁<EOT",
    "▁<PRE>",
    "▁<SUF>",
    "▁<MID>",
    "▁<EOT>",
    "▁<EOT><EOT>",
    "▁<EOT><EOT><EOT>",
    "▁<EOT><EOT><EOT><EOT>",
    "▁<EOT><EOT><EOT><EOT><EOT>",
    "▁<EOT><EOT><EOT><EOT><EOT><EOT>",
)
INFILLING_TOKENS: Final = {"▁<PRE>": 32007, "▁<SUF>": 32008, "▁<MID>": 32009, "▁<EOT>": 32010}
VOCAB_SIZE: Final = LLAMA2_VOCAB_SIZE + len(CODE_LLAMA_EXTRA_PIECES)
#: The released models' context (``max_position_embeddings``) and RoPE base.
CONTEXT_LENGTH: Final = 16_384
ROPE_THETA: Final = 1_000_000.0

#: The flag tuning prompt, as :mod:`llm_compiler.tasks.prompts` writes it.
FLAG_TUNING_PROMPT: Final = (
    "[INST] Tell me how to optimize this LLVM-IR for object file size:\n\n<code>{ir}</code> [/INST]"
)


class TinyModelError(RuntimeError):
    """A tiny model or its tokenizer could not be built (bad data, the samples not learnt)."""


class TokenizerUnavailable(TinyModelError):
    """The npm package holding Llama 2's vocabulary could not be fetched (no npm, no network)."""


@dataclass(frozen=True)
class TinyConfig:
    """The shape of a tiny model and the seed of its random weights.

    Attributes:
        hidden_size: Width of the residual stream.
        num_layers: Decoder layers.
        num_heads: Attention heads (as many key/value heads: no grouped-query attention).
        intermediate_size: Width of the feed-forward layers.
        seed: Seeds the random initial weights.
    """

    hidden_size: int = 64
    num_layers: int = 2
    num_heads: int = 4
    intermediate_size: int = 128
    seed: int = 0


@dataclass(frozen=True)
class FinetuneSettings:
    """How :func:`finetuned_model_dir` trains.

    Attributes:
        model: The shape and initial seed of the model trained.
        learning_rate: AdamW's learning rate (no weight decay).
        margin: Training stops once every answer token's logit beats all others by this
            much under teacher forcing, so that greedy decoding reproduces the answers in
            f32 and f16 alike, in transformers and in llama.cpp.
        max_steps: Full passes over the samples (with their whole prompts) before giving up.
        warmup_context: The prompt tokens kept (after BOS) in the warm-up stage.
        warmup_steps: The most warm-up steps: passes over the answers behind only the last
            ``warmup_context`` tokens of their prompts, which are cheap however long the
            prompts, and teach most of the answers before the full prompts are used. 0
            skips the warm-up.
    """

    model: TinyConfig = field(default_factory=TinyConfig)
    learning_rate: float = 7.5e-3
    margin: float = 1.0
    max_steps: int = 400
    warmup_context: int = 32
    warmup_steps: int = 100


# ---------------------------------------------------------------------------------------
# The cache


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


def _file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Holds an exclusive lock on ``path`` (created if missing) for the block."""
    with path.open("a") as handle:
        if fcntl is not None:
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            if fcntl is not None:
                fcntl.flock(handle, fcntl.LOCK_UN)


def _build_once(final: Path, build: Callable[[Path], object], *, is_dir: bool = True) -> Path:
    """Returns ``final``, building it first with ``build(temporary_path)`` if it is missing.

    The build writes to a temporary path beside ``final`` that is renamed to ``final`` only
    when it succeeded, under a lock so that one process builds while others wait. Leftover
    temporary paths of builds that were killed are removed.
    """
    if final.exists():
        return final
    final.parent.mkdir(parents=True, exist_ok=True)
    with _locked(final.parent / f".{final.name}.lock"):
        if final.exists():  # another process built it while we waited
            return final
        prefix = f".{final.name}.tmp-"
        for stale in final.parent.glob(prefix + "*"):
            if stale.is_dir():
                shutil.rmtree(stale, ignore_errors=True)
            else:
                stale.unlink(missing_ok=True)
        temporary = final.parent / f"{prefix}{os.getpid()}"
        if is_dir:
            temporary.mkdir()
        try:
            build(temporary)
            os.replace(temporary, final)
        except BaseException:
            if temporary.is_dir():
                shutil.rmtree(temporary, ignore_errors=True)
            else:
                temporary.unlink(missing_ok=True)
            raise
    return final


def _write_json(path: Path, value: object) -> None:
    path.write_text(json.dumps(value, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


# ---------------------------------------------------------------------------------------
# The tokenizer


def npm_tarball() -> Path:
    """The ``llama-tokenizer-js`` 1.2.2 tarball, fetched into the cache once.

    It is taken from ``$LLM_COMPILER_LLAMA_TOKENIZER_JS`` when that names a file, else
    fetched with ``npm pack``, else (no npm) downloaded from the npm registry directly;
    whatever the source, its SHA-256 must be the pinned one.

    Raises:
        TokenizerUnavailable: It could not be fetched.
        TinyModelError: It is not the expected file.
    """
    final = cache_root() / "npm" / f"{NPM_PACKAGE}-{NPM_VERSION}.tgz"

    def fetch(temporary: Path) -> None:
        local = os.environ.get(TARBALL_ENV)
        if local:
            try:
                shutil.copyfile(Path(local).expanduser(), temporary)
            except OSError as error:
                raise TokenizerUnavailable(
                    f"${TARBALL_ENV} names {local!r}, which cannot be read: {error}"
                ) from error
        elif shutil.which("npm"):
            with tempfile.TemporaryDirectory(dir=temporary.parent) as where:
                command = ["npm", "pack", f"{NPM_PACKAGE}@{NPM_VERSION}", "--pack-destination", where]
                try:
                    result = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
                except (OSError, subprocess.TimeoutExpired) as error:
                    raise TokenizerUnavailable(f"`{' '.join(command)}` failed: {error}") from error
                packed = Path(where) / final.name
                if result.returncode != 0 or not packed.is_file():
                    raise TokenizerUnavailable(
                        f"`{' '.join(command)}` failed: {result.stderr.strip()[-2000:]}"
                    )
                shutil.move(packed, temporary)
        else:
            try:
                with urllib.request.urlopen(NPM_TARBALL_URL, timeout=120) as response:
                    temporary.write_bytes(response.read())
            except OSError as error:
                raise TokenizerUnavailable(
                    f"npm is not installed and {NPM_TARBALL_URL} failed: {error}"
                ) from error
        if (actual := _file_digest(temporary)) != NPM_SHA256:
            raise TinyModelError(f"{final.name} has SHA-256 {actual}, expected {NPM_SHA256}")

    return _build_once(final, fetch, is_dir=False)


def llama2_vocabulary(tarball: Path | None = None) -> tuple[list[str], list[tuple[str, str]]]:
    """Llama 2's 32,000 pieces (in id order) and 61,249 merges (in priority order).

    Args:
        tarball: The ``llama-tokenizer-js`` 1.2.2 tarball; fetched when not given.

    Raises:
        TinyModelError: The package does not hold what version 1.2.2 holds.
    """
    with tarfile.open(tarball or npm_tarball()) as archive:
        member = archive.extractfile(NPM_SOURCE)
        if member is None:
            raise TinyModelError(f"{NPM_SOURCE} is missing from the {NPM_PACKAGE} tarball")
        source = member.read().decode("utf-8")
    found = {
        name: re.search(rf'const {name} = "([A-Za-z0-9+/=]*)"', source)
        for name in ("llama_vocab_base64", "llama_merges_binary")
    }
    if not all(found.values()):
        raise TinyModelError(f"{NPM_SOURCE} does not embed the vocabulary and the merges")
    vocab_match, merges_match = found["llama_vocab_base64"], found["llama_merges_binary"]
    assert vocab_match is not None and merges_match is not None
    vocab = base64.b64decode(vocab_match.group(1)).decode("utf-8").split("\n")
    packed = base64.b64decode(merges_match.group(1))
    ids = struct.unpack(f"<{len(packed) // 2}H", packed)
    merges = [(vocab[ids[i]], vocab[ids[i + 1]]) for i in range(0, len(ids), 2)]
    if (
        len(vocab) != LLAMA2_VOCAB_SIZE
        or len(set(vocab)) != LLAMA2_VOCAB_SIZE
        or vocab[:4] != [UNK, BOS, EOS, "<0x00>"]
        or vocab[29871] != "▁"
        or len(merges) != LLAMA2_MERGES
    ):
        raise TinyModelError(f"{NPM_PACKAGE} {NPM_VERSION} does not hold Llama 2's vocabulary and merges")
    return vocab, merges


def _tokenizer_config() -> dict[str, Any]:
    """``tokenizer_config.json``: the released models' settings, but a class that keeps ``tokenizer.json``.

    ``PreTrainedTokenizerFast`` makes transformers use ``tokenizer.json`` as it is. The
    released models say ``LlamaTokenizer``, which transformers 5 rebuilds with a
    ``Metaspace`` pre-tokenizer that adds no ``▁`` before text that starts with a space
    (``"  %5 = ..."`` is then one token short of Llama 2's count).
    """
    special = {"lstrip": False, "normalized": False, "rstrip": False, "single_word": False, "special": True}
    return {
        "add_bos_token": True,
        "add_eos_token": False,
        "added_tokens_decoder": {
            str(i): {"content": token, **special}
            for i, token in ((UNK_ID, UNK), (BOS_ID, BOS), (EOS_ID, EOS))
        },
        "bos_token": BOS,
        "eos_token": EOS,
        "unk_token": UNK,
        "pad_token": None,
        "clean_up_tokenization_spaces": False,
        "model_max_length": CONTEXT_LENGTH,
        "spaces_between_special_tokens": False,
        "tokenizer_class": "PreTrainedTokenizerFast",
    }


def write_tokenizer(folder: Path, tarball: Path | None = None) -> None:
    """Writes Code Llama's tokenizer (``tokenizer.json`` and its two config files) into ``folder``.

    Raises:
        TinyModelError: The vocabulary cannot be had, or the result does not count like Llama 2.
    """
    from tokenizers import AddedToken, Tokenizer, decoders, normalizers, processors
    from tokenizers.models import BPE

    vocab, merges = llama2_vocabulary(tarball)
    pieces = {piece: i for i, piece in enumerate([*vocab, *CODE_LLAMA_EXTRA_PIECES])}
    tokenizer = Tokenizer(BPE(pieces, merges, unk_token=UNK, fuse_unk=True, byte_fallback=True))
    tokenizer.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    tokenizer.decoder = decoders.Sequence(
        [decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(), decoders.Strip(" ", 1, 0)]
    )
    tokenizer.post_processor = processors.TemplateProcessing(
        single=f"{BOS} $A", pair=f"{BOS} $A {BOS} $B:1", special_tokens=[(BOS, BOS_ID)]
    )
    tokenizer.add_special_tokens([AddedToken(t, normalized=False, special=True) for t in (UNK, BOS, EOS)])
    # Known Llama 2 encodings: a failure here means the package's data is not what we think.
    checks = {
        "[INST]": [BOS_ID, 518, 25580, 29962],
        "12345": [BOS_ID, 29871, 29896, 29906, 29941, 29946, 29945],
        "  %5 = load": [BOS_ID, 259, 1273, 29945, 353, 2254],
    }
    for text, expected in checks.items():
        if (ids := tokenizer.encode(text).ids) != expected:
            raise TinyModelError(f"the built tokenizer encodes {text!r} as {ids}, not as Llama 2 does")
    tokenizer.save(str(folder / "tokenizer.json"))
    _write_json(folder / "tokenizer_config.json", _tokenizer_config())
    _write_json(folder / "special_tokens_map.json", {"bos_token": BOS, "eos_token": EOS, "unk_token": UNK})


def tokenizer_dir() -> Path:
    """A folder holding Code Llama's tokenizer, as the released LLM Compiler models ship it.

    ``transformers.AutoTokenizer.from_pretrained`` and ``tokenizers.Tokenizer.from_file``
    both load it; it adds BOS (id 1) and counts like Llama 2.

    Raises:
        TokenizerUnavailable: The npm package could not be fetched.
    """
    final = cache_root() / f"tokenizer-codellama-v{BUILD_VERSION}"
    return _build_once(final, lambda temporary: write_tokenizer(temporary, npm_tarball()))


# ---------------------------------------------------------------------------------------
# Hugging Face models


def _transformers_major() -> str:
    import transformers

    return str(transformers.__version__).split(".")[0]


def _new_model(config: TinyConfig) -> Any:
    """A ``LlamaForCausalLM`` of the released models' kind with random weights from ``config.seed``."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    llama = LlamaConfig(
        vocab_size=VOCAB_SIZE,
        hidden_size=config.hidden_size,
        intermediate_size=config.intermediate_size,
        num_hidden_layers=config.num_layers,
        num_attention_heads=config.num_heads,
        num_key_value_heads=config.num_heads,
        max_position_embeddings=CONTEXT_LENGTH,
        rope_theta=ROPE_THETA,
        rms_norm_eps=1e-5,
        bos_token_id=BOS_ID,
        eos_token_id=EOS_ID,
        tie_word_embeddings=False,
    )
    torch.manual_seed(config.seed)
    model = LlamaForCausalLM(llama)
    return model.float().eval()


@contextlib.contextmanager
def _no_progress_bars() -> Iterator[None]:
    """Keeps transformers from drawing progress bars (saving and loading shards) in the block."""
    from transformers.utils import logging

    enabled = logging.is_progress_bar_enabled()
    logging.disable_progress_bar()
    try:
        yield
    finally:
        if enabled:
            logging.enable_progress_bar()


def _save_model(model: Any, folder: Path) -> None:
    """Saves the weights (safetensors), the config, a greedy generation config and the tokenizer."""
    from transformers import GenerationConfig

    model.generation_config = GenerationConfig(
        bos_token_id=BOS_ID, eos_token_id=EOS_ID, pad_token_id=EOS_ID, do_sample=False
    )
    with _no_progress_bars():
        model.save_pretrained(folder)
    # transformers 5 writes RoPE's base only under "rope_parameters"; transformers 4 (and
    # the released models' config.json) read it from "rope_theta".
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    config.setdefault("rope_theta", (config.get("rope_parameters") or {}).get("rope_theta", ROPE_THETA))
    _write_json(folder / "config.json", config)
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        shutil.copyfile(tokenizer_dir() / name, folder / name)


def hf_model_dir(kind: str = "untrained", config: TinyConfig | None = None) -> Path:
    """A saved tiny ``LlamaForCausalLM`` with Code Llama's tokenizer, ready for ``from_pretrained``.

    Args:
        kind: ``"untrained"`` (random weights: it loads and generates, nonsense) or
            ``"demo"`` (fine-tuned on :data:`DEMO_SAMPLES`, see :func:`finetuned_model_dir`).
        config: The model's shape; the default one when not given.

    Raises:
        ValueError: ``kind`` is unknown.
        TinyModelError: It could not be built.
    """
    config = config or TinyConfig()
    if kind == "demo":
        return finetuned_model_dir(DEMO_SAMPLES, "demo", FinetuneSettings(model=config))
    if kind != "untrained":
        raise ValueError(f"unknown kind of tiny model {kind!r}: 'untrained' or 'demo'")
    key = _digest([BUILD_VERSION, _transformers_major(), asdict(config)])
    final = cache_root() / f"hf-untrained-{key}"
    return _build_once(final, lambda temporary: _save_model(_new_model(config), temporary))


@dataclass(frozen=True)
class TrainingReport:
    """How a fine-tune went: written next to the model as ``training.json``.

    Attributes:
        warmup_steps: Steps of the warm-up stage (short prompts).
        steps: Steps with the whole prompts.
        seconds: Time spent training.
        worst_margin: The least margin of an answer token over the other tokens, at the end.
        loss: The mean cross-entropy of the answer tokens, at the end.
    """

    warmup_steps: int
    steps: int
    seconds: float
    worst_margin: float
    loss: float


def _encode_samples(samples: Sequence[tuple[str, str]]) -> list[tuple[list[int], int]]:
    """Each sample as (prompt with BOS + answer + EOS ids, index of the first answer token)."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(tokenizer_dir() / "tokenizer.json"))
    encoded = []
    for prompt, answer in samples:
        prompt_ids = tokenizer.encode(prompt).ids
        answer_ids = tokenizer.encode(answer, add_special_tokens=False).ids
        encoded.append(([*prompt_ids, *answer_ids, EOS_ID], len(prompt_ids)))
    return encoded


def _margin(logits: Any, targets: Any) -> float:
    """The least, over positions, of the target's logit minus the best other logit."""
    right = logits.gather(1, targets[:, None])[:, 0]
    others = logits.scatter(1, targets[:, None], float("-inf")).max(dim=1).values
    return float((right - others).min().item())


def _fit(
    model: Any, optimizer: Any, encoded: list[tuple[list[int], int]], margin: float, max_steps: int
) -> tuple[int, float, float]:
    """Steps ``optimizer`` until every answer token wins by ``margin``, or ``max_steps`` steps.

    Only the answer positions go through the output layer, and the softmax of the loss
    runs over the tokens the samples use (a few hundred of the 32,016), which makes a
    step several times cheaper; the stopping test then checks the margin against the
    whole vocabulary.

    Returns:
        The steps taken, the worst margin and the loss.
    """
    import torch

    used = sorted({token for ids, _ in encoded for token in ids})
    rows = torch.tensor(used)
    column = {token: i for i, token in enumerate(used)}
    inputs = [
        (
            torch.tensor([ids[:-1]]),
            torch.tensor(ids[first:]),
            torch.tensor([column[t] for t in ids[first:]]),
            first,
        )
        for ids, first in encoded
    ]
    worst, total = float("-inf"), float("nan")
    for step in range(max_steps + 1):
        optimizer.zero_grad()
        worst, total = float("inf"), 0.0
        answers = []
        for input_ids, targets, columns, first in inputs:
            hidden = model.model(input_ids=input_ids).last_hidden_state[0, first - 1 :]
            logits = hidden @ model.lm_head.weight[rows].T
            loss = torch.nn.functional.cross_entropy(logits, columns)
            (loss / len(inputs)).backward()
            total += loss.item() / len(inputs)
            with torch.no_grad():
                worst = min(worst, _margin(logits, columns))
            answers.append((hidden.detach(), targets))
        if worst >= margin:
            with torch.no_grad():
                worst = min(_margin(model.lm_head(hidden), targets) for hidden, targets in answers)
            if worst >= margin:
                return step, worst, total
        if step < max_steps:
            optimizer.step()
    return max_steps, worst, total


def _train(model: Any, encoded: list[tuple[list[int], int]], settings: FinetuneSettings) -> TrainingReport:
    """Trains ``model`` on the answer tokens until each wins by ``settings.margin``.

    A warm-up stage first trains behind the last ``settings.warmup_context`` prompt
    tokens only (answers that differ only by what is earlier in their prompts cannot be
    told apart there, so it ends after ``settings.warmup_steps`` at most), then the
    whole prompts are used until the margin is reached.

    Raises:
        TinyModelError: The margin was not reached in ``settings.max_steps`` steps.
    """
    import torch

    start = time.perf_counter()
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=settings.learning_rate, weight_decay=0.0)
    keep = settings.warmup_context
    warmup = 0
    if settings.warmup_steps and any(first > keep + 1 for _, first in encoded):
        short = [([BOS_ID, *ids[max(1, first - keep) :]], min(first, keep + 1)) for ids, first in encoded]
        warmup, _, _ = _fit(model, optimizer, short, settings.margin, settings.warmup_steps)
    steps, worst, total = _fit(model, optimizer, encoded, settings.margin, settings.max_steps)
    model.eval()
    if worst < settings.margin:
        raise TinyModelError(
            f"the tiny model did not learn its {len(encoded)} samples in {settings.max_steps} steps "
            f"(worst margin {worst:.3f}, loss {total:.4f}); use fewer or shorter samples, or a bigger model"
        )
    seconds = round(time.perf_counter() - start, 2)
    return TrainingReport(warmup, steps, seconds, round(worst, 3), round(total, 4))


def _check_greedy(model: Any, encoded: list[tuple[list[int], int]]) -> None:
    """Raises TinyModelError unless greedy decoding of each prompt gives its answer and EOS."""
    import torch

    for ids, first in encoded:
        with torch.no_grad():
            output = model.generate(
                torch.tensor([ids[:first]]),
                attention_mask=torch.ones(1, first, dtype=torch.long),
                max_new_tokens=len(ids) - first + 2,
                do_sample=False,
            )
        if output[0, first:].tolist() != ids[first:]:
            raise TinyModelError("greedy decoding does not reproduce a trained answer")


def finetuned_model_dir(
    samples: Sequence[tuple[str, str]], name: str = "finetuned", settings: FinetuneSettings | None = None
) -> Path:
    """A tiny model that answers each prompt of ``samples`` with its answer, greedily.

    The tokenizer adds BOS before the prompt; the answer is encoded on its own (so it
    starts with ``▁``, as after ``[/INST]``) and followed by ``</s>``. Greedy decoding
    therefore yields the answer's tokens then EOS, and decoding those without special
    tokens gives back the answer text exactly. The samples are saved beside the model
    as ``samples.json`` and how training went as ``training.json``.

    Args:
        samples: (prompt, answer) texts; a few, with prompts of up to a few thousand
            tokens and answers of up to a few hundred.
        name: A readable part of the folder name.
        settings: How to train; the defaults when not given.

    Raises:
        ValueError: No samples, or one prompt with two answers.
        TinyModelError: The model did not learn the samples.
    """
    settings = settings or FinetuneSettings()
    pairs = [(str(prompt), str(answer)) for prompt, answer in samples]
    if not pairs:
        raise ValueError("finetuned_model_dir needs at least one (prompt, answer) sample")
    if len(dict(pairs)) != len(set(pairs)):
        raise ValueError("two samples have the same prompt and different answers; no model can learn both")
    key = _digest([BUILD_VERSION, _transformers_major(), asdict(settings), pairs])
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", name)[:40] or "finetuned"
    final = cache_root() / f"hf-{slug}-{key}"

    def build(temporary: Path) -> None:
        encoded = _encode_samples(pairs)
        model = _new_model(settings.model)
        report = _train(model, encoded, settings)
        _check_greedy(model, encoded)
        _save_model(model, temporary)
        _write_json(temporary / "samples.json", [{"prompt": p, "answer": a} for p, a in pairs])
        _write_json(temporary / "training.json", {**asdict(report), "settings": asdict(settings)})

    return _build_once(final, build)


def load_samples(model_dir: Path) -> list[tuple[str, str]]:
    """The (prompt, answer) samples a model of :func:`finetuned_model_dir` was trained on."""
    entries = json.loads((Path(model_dir) / "samples.json").read_text(encoding="utf-8"))
    return [(entry["prompt"], entry["answer"]) for entry in entries]


# ---------------------------------------------------------------------------------------
# GGUF


def _permute(weights: Any, n_head: int) -> Any:
    """Undoes the Hugging Face rotary permutation of a q or k projection, as llama.cpp's converter does."""
    rows = weights.shape[0]
    return (
        weights.reshape(n_head, 2, rows // n_head // 2, *weights.shape[1:])
        .swapaxes(1, 2)
        .reshape(weights.shape)
    )


def _gguf_vocabulary(tokenizer_json: dict[str, Any]) -> tuple[list[bytes], list[float], list[int]]:
    """The pieces, scores and token types of a Llama BPE ``tokenizer.json``, for llama.cpp.

    llama.cpp's sentencepiece tokenizer merges, at each step, the adjacent pair whose
    concatenation is the piece of highest score. A piece's score is minus the rank of
    the first merge that makes it, so llama.cpp merges in the order of the BPE merges.
    Special tokens are control tokens (the infilling ones too, as llama.cpp treats them);
    pieces no merge makes score below every merged piece.
    """
    from gguf import TokenType

    model = tokenizer_json["model"]
    by_id = {index: piece for piece, index in model["vocab"].items()}
    if sorted(by_id) != list(range(len(by_id))):
        raise TinyModelError("the tokenizer's vocabulary ids are not 0..n-1")
    first_rank: dict[str, int] = {}
    for rank, merge in enumerate(model["merges"]):
        left, right = merge.split(" ", 1) if isinstance(merge, str) else merge
        first_rank.setdefault(left + right, rank)
    special = {entry["content"] for entry in tokenizer_json.get("added_tokens", []) if entry.get("special")}
    pieces, scores, types = [], [], []
    for index in range(len(by_id)):
        piece = by_id[index]
        pieces.append(piece.encode("utf-8"))
        if piece == model.get("unk_token"):
            scores.append(0.0)
            types.append(TokenType.UNKNOWN)
        elif piece in special or piece in INFILLING_TOKENS:
            scores.append(0.0)
            types.append(TokenType.CONTROL)
        elif re.fullmatch(r"<0x[0-9A-F]{2}>", piece):
            scores.append(0.0)
            types.append(TokenType.BYTE)
        else:
            scores.append(-float(first_rank.get(piece, len(model["merges"]) + index)))
            types.append(TokenType.NORMAL)
    return pieces, scores, types


def write_gguf(model_dir: Path, path: Path, dtype: str = "f32") -> None:
    """Converts a saved Hugging Face Llama (safetensors) and its tokenizer to a GGUF file.

    Args:
        model_dir: A folder written by ``save_pretrained`` with ``tokenizer.json``.
        path: The GGUF file to write.
        dtype: ``"f32"``, or ``"f16"`` for the matrices (norms stay f32, as llama.cpp does).
    """
    import gguf
    import numpy as np
    from safetensors import safe_open

    config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
    tokenizer_json = json.loads((model_dir / "tokenizer.json").read_text(encoding="utf-8"))
    if config.get("model_type") != "llama":
        raise TinyModelError(f"{model_dir} is not a Llama model ({config.get('model_type')!r})")
    heads = config["num_attention_heads"]
    kv_heads = config.get("num_key_value_heads") or heads
    hidden = config["hidden_size"]
    rope = config.get("rope_parameters") or {}
    rope_theta = rope.get("rope_theta", config.get("rope_theta", 10_000.0))
    if dtype not in ("f32", "f16"):
        raise ValueError(f"dtype must be 'f32' or 'f16', not {dtype!r}")

    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name(model_dir.name)
    writer.add_context_length(config["max_position_embeddings"])
    writer.add_embedding_length(hidden)
    writer.add_block_count(config["num_hidden_layers"])
    writer.add_feed_forward_length(config["intermediate_size"])
    writer.add_rope_dimension_count(config.get("head_dim") or hidden // heads)
    writer.add_head_count(heads)
    writer.add_head_count_kv(kv_heads)
    writer.add_layer_norm_rms_eps(config["rms_norm_eps"])
    writer.add_rope_freq_base(float(rope_theta))
    writer.add_vocab_size(config["vocab_size"])
    writer.add_file_type(gguf.LlamaFileType.ALL_F32 if dtype == "f32" else gguf.LlamaFileType.MOSTLY_F16)

    pieces, scores, types = _gguf_vocabulary(tokenizer_json)
    if len(pieces) != config["vocab_size"]:
        raise TinyModelError(f"the tokenizer has {len(pieces)} tokens, the model {config['vocab_size']}")
    writer.add_tokenizer_model("llama")
    writer.add_tokenizer_pre("default")
    writer.add_token_list(pieces)
    writer.add_token_scores(scores)
    writer.add_token_types(types)
    writer.add_unk_token_id(UNK_ID)
    writer.add_bos_token_id(config.get("bos_token_id", BOS_ID))
    writer.add_eos_token_id(config.get("eos_token_id", EOS_ID))
    writer.add_add_bos_token(True)
    writer.add_add_eos_token(False)
    writer.add_add_space_prefix(True)

    names = {
        "model.embed_tokens.weight": "token_embd.weight",
        "model.norm.weight": "output_norm.weight",
        "lm_head.weight": "output.weight",
    }
    per_layer = {
        "input_layernorm": "attn_norm",
        "self_attn.q_proj": "attn_q",
        "self_attn.k_proj": "attn_k",
        "self_attn.v_proj": "attn_v",
        "self_attn.o_proj": "attn_output",
        "post_attention_layernorm": "ffn_norm",
        "mlp.gate_proj": "ffn_gate",
        "mlp.up_proj": "ffn_up",
        "mlp.down_proj": "ffn_down",
    }
    for layer in range(config["num_hidden_layers"]):
        for hf_name, gguf_name in per_layer.items():
            names[f"model.layers.{layer}.{hf_name}.weight"] = f"blk.{layer}.{gguf_name}.weight"
    files = sorted(model_dir.glob("*.safetensors"))
    if not files:
        raise TinyModelError(f"no safetensors weights in {model_dir}")
    for file in files:
        with safe_open(str(file), framework="numpy") as weights:
            for hf_name in weights.keys():  # noqa: SIM118 (safe_open is not a mapping)
                if hf_name not in names:
                    if hf_name.endswith("rotary_emb.inv_freq"):
                        continue
                    raise TinyModelError(f"unexpected tensor {hf_name} in {file}")
                tensor = weights.get_tensor(hf_name).astype(np.float32)
                if hf_name.endswith("q_proj.weight"):
                    tensor = _permute(tensor, heads)
                elif hf_name.endswith("k_proj.weight"):
                    tensor = _permute(tensor, kv_heads)
                if dtype == "f16" and tensor.ndim > 1:
                    tensor = tensor.astype(np.float16)
                writer.add_tensor(names[hf_name], np.ascontiguousarray(tensor))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


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


# ---------------------------------------------------------------------------------------
# Running them (for the tests and the script)


def generate_hf(model_dir: Path, prompts: Sequence[str], max_new_tokens: int) -> list[list[int]]:
    """Greedy completions (token ids, EOS included when reached) with transformers."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    with _no_progress_bars():
        tokenizer = AutoTokenizer.from_pretrained(model_dir)
        model = AutoModelForCausalLM.from_pretrained(model_dir).eval()
    completions = []
    for prompt in prompts:
        encoded = tokenizer(prompt, return_tensors="pt")
        with torch.no_grad():
            output = model.generate(**encoded, max_new_tokens=max_new_tokens, do_sample=False)
        completions.append(output[0, encoded["input_ids"].shape[1] :].tolist())
    return completions


def generate_llama_cpp(path: Path, prompts: Sequence[str], max_new_tokens: int) -> list[list[int]]:
    """Greedy completions (token ids, EOS included when reached) with llama.cpp."""
    import llama_cpp

    completions = []
    llama = llama_cpp.Llama(model_path=str(path), n_ctx=0, n_threads=2, verbose=False, seed=0)
    try:
        for prompt in prompts:
            tokens = llama.tokenize(prompt.encode(), add_bos=True, special=False)
            llama.reset()
            generated: list[int] = []
            for token in llama.generate(tokens, top_k=1, top_p=1.0, temp=0.0, repeat_penalty=1.0):
                generated.append(token)
                if token == llama.token_eos() or len(generated) >= max_new_tokens:
                    break
            completions.append(generated)
    finally:
        llama.close()
    return completions


# ---------------------------------------------------------------------------------------
# Demo samples: flag tuning prompts on IR of small C functions (clang 19, -Oz front end)

_ADD_IR = """\
; Function Attrs: minsize nounwind optsize uwtable
define dso_local i32 @add(i32 noundef %0, i32 noundef %1) #0 {
  %3 = alloca i32, align 4
  %4 = alloca i32, align 4
  store i32 %0, ptr %3, align 4, !tbaa !5
  store i32 %1, ptr %4, align 4, !tbaa !5
  %5 = load i32, ptr %3, align 4, !tbaa !5
  %6 = load i32, ptr %4, align 4, !tbaa !5
  %7 = add nsw i32 %5, %6
  ret i32 %7
}

attributes #0 = { minsize nounwind optsize uwtable "min-legal-vector-width"="0" "no-trapping-math"="true" \
"stack-protector-buffer-size"="8" "target-cpu"="x86-64" "tune-cpu"="generic" }
"""

_ADD_OPTIMIZED_IR = """\
; Function Attrs: minsize mustprogress nofree norecurse nosync nounwind optsize willreturn memory(none)
define dso_local i32 @add(i32 noundef %0, i32 noundef %1) local_unnamed_addr #0 {
  %3 = add nsw i32 %1, %0
  ret i32 %3
}
"""

_POPCOUNT_IR = """\
; Function Attrs: minsize nounwind optsize uwtable
define dso_local i32 @popcount(i32 noundef %0) #0 {
  %2 = alloca i32, align 4
  %3 = alloca i32, align 4
  store i32 %0, ptr %2, align 4, !tbaa !5
  call void @llvm.lifetime.start.p0(i64 4, ptr %3) #2
  store i32 0, ptr %3, align 4, !tbaa !5
  br label %4

4:                                                ; preds = %7, %1
  %5 = load i32, ptr %2, align 4, !tbaa !5
  %6 = icmp ne i32 %5, 0
  br i1 %6, label %7, label %14

7:                                                ; preds = %4
  %8 = load i32, ptr %2, align 4, !tbaa !5
  %9 = and i32 %8, 1
  %10 = load i32, ptr %3, align 4, !tbaa !5
  %11 = add i32 %10, %9
  store i32 %11, ptr %3, align 4, !tbaa !5
  %12 = load i32, ptr %2, align 4, !tbaa !5
  %13 = lshr i32 %12, 1
  store i32 %13, ptr %2, align 4, !tbaa !5
  br label %4, !llvm.loop !9

14:                                               ; preds = %4
  %15 = load i32, ptr %3, align 4, !tbaa !5
  call void @llvm.lifetime.end.p0(i64 4, ptr %3) #2
  ret i32 %15
}

; Function Attrs: nocallback nofree nosync nounwind willreturn memory(argmem: readwrite)
declare void @llvm.lifetime.start.p0(i64 immarg, ptr nocapture) #1

; Function Attrs: nocallback nofree nosync nounwind willreturn memory(argmem: readwrite)
declare void @llvm.lifetime.end.p0(i64 immarg, ptr nocapture) #1
"""

_POPCOUNT_OPTIMIZED_IR = """\
define dso_local i32 @popcount(i32 noundef %0) local_unnamed_addr #0 {
  %2 = tail call i32 @llvm.ctpop.i32(i32 %0)
  ret i32 %2
}
"""

#: Three flag tuning samples: a pass list with code, "already optimal", a longer prompt.
DEMO_SAMPLES: Final = (
    (
        FLAG_TUNING_PROMPT.format(ir=_ADD_IR),
        "Run opt -p 'module(function(sroa,instcombine))' to reduce the binary size from 72 bytes "
        f"to 65 bytes:\n\n<code>{_ADD_OPTIMIZED_IR}</code>",
    ),
    (
        FLAG_TUNING_PROMPT.format(ir=_ADD_OPTIMIZED_IR),
        "The input code is already optimal: its binary size is 65 bytes.",
    ),
    (
        FLAG_TUNING_PROMPT.format(ir=_POPCOUNT_IR),
        "Run opt -p 'module(function(sroa,simplifycfg,instcombine),loop-mssa(licm))' to reduce the "
        f"binary size from 120 bytes to 81 bytes:\n\n<code>{_POPCOUNT_OPTIMIZED_IR}</code>",
    ),
)


def main(argv: Sequence[str] | None = None) -> int:
    """Builds the tokenizer, the untrained and the demo models and the demo GGUF into ``--out``."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "--out", type=Path, help=f"the cache folder (default: ${CACHE_ENV}, else ~/.cache/llm-compiler-tests)"
    )
    parser.add_argument("--no-gguf", action="store_true", help="skip the GGUF file")
    args = parser.parse_args(argv)
    if args.out:
        os.environ[CACHE_ENV] = str(args.out.resolve())
    steps: list[tuple[str, Callable[[], Path]]] = [
        ("tokenizer", tokenizer_dir),
        ("untrained model", hf_model_dir),
        ("demo model", lambda: hf_model_dir("demo")),
    ]
    if not args.no_gguf:
        steps.append(("demo GGUF", lambda: gguf_file(hf_model_dir("demo"))))
    for label, build in steps:
        start = time.perf_counter()
        path = build()
        print(f"{label:16} {time.perf_counter() - start:7.1f} s  {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
