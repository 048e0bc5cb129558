"""Code Llama's tokenizer (the released LLM Compiler models'), written from Llama 2's vocabulary.

The released models use Code Llama's tokenizer: Llama 2's sentencepiece BPE vocabulary
of 32,000 pieces plus 16 pieces for infilling (32,016 in all). A model trained from
scratch (``llm-compiler train --init llama:SIZE``) needs that tokenizer without the
released weights, and nothing here is downloaded from a model hub: Llama 2's vocabulary
and merges come from the npm package ``llama-tokenizer-js`` 1.2.2 (:func:`npm_tarball`
fetches the tarball with ``npm pack`` and checks it against a pinned SHA-256), where
they are embedded base64-encoded: the vocabulary as the pieces joined by newlines, the
merges as pairs of little-endian 16-bit piece ids (:func:`llama2_vocabulary`).
:func:`write_tokenizer` makes them a ``tokenizers`` BPE ``tokenizer.json`` laid out like
Llama 2's own (byte fallback; the normalizer prepends ``▁`` and writes spaces as ``▁``;
BOS ``<s>`` added in front), plus Code Llama's 16 extra pieces (see
:data:`CODE_LLAMA_EXTRA_PIECES`), and checks that it encodes known texts as Llama 2
does; token counts equal Llama 2's. :func:`code_llama_tokenizer` builds it once into
``~/.cache/llm-compiler/tokenizers``. Needs ``tokenizers``.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import re
import shutil
import struct
import tarfile
import tempfile
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Final

from llm_compiler.errors import ToolchainError, TrainingError
from llm_compiler.files import cache_dir, file_sha256
from llm_compiler.toolchain.runner import run_command

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX
    fcntl = None  # type: ignore[assignment]

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
#: The released models' context (``max_position_embeddings``), the tokenizer's ``model_max_length``.
CONTEXT_LENGTH: Final = 16_384


class TokenizerUnavailable(TrainingError):
    """The npm package holding Llama 2's vocabulary could not be fetched (no npm, no network)."""


def npm_tarball(cache: Path | None = None) -> Path:
    """The ``llama-tokenizer-js`` 1.2.2 tarball, fetched into ``cache`` once.

    It is taken from ``$LLM_COMPILER_LLAMA_TOKENIZER_JS`` when that names a file, else
    fetched with ``npm pack``, else (no npm) downloaded from the npm registry directly;
    whatever the source, its SHA-256 must be the pinned one.

    Args:
        cache: The folder to keep it in (default: ``~/.cache/llm-compiler/tokenizers/npm``).

    Raises:
        TokenizerUnavailable: It could not be fetched.
        TrainingError: It is not the expected file.
    """
    final = (cache or cache_dir("tokenizers", "npm")) / f"{NPM_PACKAGE}-{NPM_VERSION}.tgz"

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
                    run_command(command, timeout=300, subject=NPM_PACKAGE)
                except ToolchainError as error:
                    raise TokenizerUnavailable(f"fetching {NPM_PACKAGE} failed: {error}") from error
                packed = Path(where) / final.name
                if not packed.is_file():
                    raise TokenizerUnavailable(f"`npm pack` wrote no {final.name}")
                shutil.move(packed, temporary)
        else:
            try:
                with urllib.request.urlopen(NPM_TARBALL_URL, timeout=120) as response:
                    temporary.write_bytes(response.read())
            except OSError as error:
                raise TokenizerUnavailable(
                    f"npm is not installed and {NPM_TARBALL_URL} failed: {error}"
                ) from error
        if (actual := file_sha256(temporary)) != NPM_SHA256:
            raise TrainingError(f"{final.name} has SHA-256 {actual}, expected {NPM_SHA256}")

    return build_once(final, fetch, is_dir=False)


def llama2_vocabulary(tarball: Path | None = None) -> tuple[list[str], list[tuple[str, str]]]:
    """Llama 2's 32,000 pieces (in id order) and 61,249 merges (in priority order).

    Args:
        tarball: The ``llama-tokenizer-js`` 1.2.2 tarball; fetched when not given.

    Raises:
        TrainingError: The package does not hold what version 1.2.2 holds.
    """
    with tarfile.open(tarball or npm_tarball()) as archive:
        member = archive.extractfile(NPM_SOURCE)
        if member is None:
            raise TrainingError(f"{NPM_SOURCE} is missing from the {NPM_PACKAGE} tarball")
        source = member.read().decode("utf-8")
    found = {
        name: re.search(rf'const {name} = "([A-Za-z0-9+/=]*)"', source)
        for name in ("llama_vocab_base64", "llama_merges_binary")
    }
    if not all(found.values()):
        raise TrainingError(f"{NPM_SOURCE} does not embed the vocabulary and the merges")
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
        raise TrainingError(f"{NPM_PACKAGE} {NPM_VERSION} does not hold Llama 2's vocabulary and merges")
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
        TrainingError: The vocabulary cannot be had, or the result does not count like Llama 2.
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
            raise TrainingError(f"the built tokenizer encodes {text!r} as {ids}, not as Llama 2 does")
    tokenizer.save(str(folder / "tokenizer.json"))
    _write_json(folder / "tokenizer_config.json", _tokenizer_config())
    _write_json(folder / "special_tokens_map.json", {"bos_token": BOS, "eos_token": EOS, "unk_token": UNK})


def code_llama_tokenizer(cache: Path | None = None) -> Path:
    """A folder holding Code Llama's tokenizer, as the released LLM Compiler models ship it.

    ``transformers.AutoTokenizer.from_pretrained`` and ``tokenizers.Tokenizer.from_file``
    both load it; it adds BOS (id 1) and counts like Llama 2. Built once.

    Args:
        cache: Where to keep it (default: ``~/.cache/llm-compiler/tokenizers``).

    Raises:
        TokenizerUnavailable: The npm package could not be fetched; the message says how
            to point at a tokenizer instead.
    """
    root = cache or cache_dir("tokenizers")
    final = root / f"code-llama-v{TOKENIZER_VERSION}"
    try:
        return build_once(final, lambda temporary: write_tokenizer(temporary, npm_tarball(root / "npm")))
    except TokenizerUnavailable as error:
        raise TokenizerUnavailable(
            f"Code Llama's tokenizer could not be built: {error}. Give --tokenizer DIR, a folder holding "
            f"the tokenizer files of a released model (facebook/llm-compiler-7b or any Code Llama), or set "
            f"${TARBALL_ENV} to a copy of {NPM_PACKAGE}-{NPM_VERSION}.tgz."
        ) from error


#: Bump when what :func:`write_tokenizer` writes changes, so that old builds are not reused.
TOKENIZER_VERSION: Final = 1


def _write_json(path: Path, value: object) -> None:
    path.write_text(json.dumps(value, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


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


def build_once(final: Path, build: Callable[[Path], object], *, is_dir: bool = True) -> Path:
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
