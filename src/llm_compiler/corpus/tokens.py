"""Token counts of LLVM-IR and assembly text, for the models' prompt budgets.

LLM Compiler's prompts have budgets in tokens of its tokenizer (system notes, sections
7 and 8): a flag-tuning or emulation prompt must fit in 15,000 tokens (larger units are
split per function, and what still does not fit scores as -Oz), and disassembly
samples are 8,000 tokens in and 8,000 out. The tokenizer is Code Llama's: Llama 2's
sentencepiece BPE vocabulary of 32,000 pieces plus 16 infilling tokens that never
occur in IR or assembly.

Two counters answer "how many tokens is this text", behind one small interface,
:class:`TokenCounter`:

* :class:`HFTokenCounter` runs a real Hugging Face tokenizer (``tokenizer.json`` or a
  model directory) given by path. It is exact, and needs the ``tokenizers`` package
  (or ``transformers``), imported only when such a counter is made.
* :class:`EstimatedTokenCounter` needs nothing and reads megabytes per second. It cuts
  the text into pieces the way Llama's tokenizer does and adds up a cost per piece:

  - the tokenizer prepends a space to the text and writes every space as ``▁``, which
    joins the word or punctuation after it (``' load'`` is one token);
  - every digit is a token of its own, and a space before a digit is one more;
  - a newline or a tab is one token (a byte token);
  - a run of spaces costs one token per 16 (the longest ``▁▁...`` piece);
  - a letters-only word or a punctuation run costs what the tokenizer measured for it
    when it is one of the calibration corpus's frequent pieces (the lexicon), and
    otherwise what a linear model of its shape predicts (letters, capitals, case
    runs; characters and a leading space for punctuation).

  The sum is scaled to the corpus, then raised by a safety ``margin`` (3% by default)
  so that a budget check errs on the side of rejecting: with the margin, 95% of
  function-sized pieces of the calibration corpus are not under-counted.

Calibration (``bench/tokens/calibrate.py`` fits the constants below): against the Llama
2 tokenizer (its vocabulary and merges as shipped in the npm package
``llama-tokenizer-js`` 1.2.2, run through ``tokenizers``; the counts equal that
package's own), on LLVM 19 IR and x86-64 assembly of the 134 bundled C and C++ programs
(``examples/`` and the builtin PassListEval suite): clang's -Oz front-end IR, that IR
after ``opt -passes='default<Oz>'``, and the assembly of each (``clang -S -Oz``,
``llc -O2``). On the 30% of programs held out, without the margin, the mean absolute
error was 0.8% per file and 1.3% per function, the worst under-count 2.4% per file and
7.3% per function; with the margin no held-out file and 3.4% of functions (worst 4.3%)
were under-counted.

Example:
    >>> counter = get_token_counter(None)
    >>> counter.name
    'estimate:llama2-ir'
    >>> EstimatedTokenCounter(margin=0.0).count("  %5 = load i32, ptr %3, align 4")
    16
    >>> counter.count("") == 0
    True
"""

from __future__ import annotations

import importlib
import math
import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Protocol, runtime_checkable

from llm_compiler.errors import InvalidInput

#: The budget of a flag-tuning or compiler-emulation prompt, in tokens (section 8).
PROMPT_TOKEN_BUDGET: Final = 15_000
#: The budget of a disassembly sample's assembly (input) and IR (output), in tokens.
DISASSEMBLY_TOKEN_BUDGET: Final = 8_000

HF_INSTALL_HINT: Final = "pip install tokenizers (or pip install 'llm-compiler[hf]')"


class TokenizerError(InvalidInput):
    """A tokenizer given for counting tokens cannot be used."""


class TokenizerNotFound(TokenizerError, FileNotFoundError):
    """The tokenizer path does not exist or holds no tokenizer file."""


class TokenizerLibraryMissing(TokenizerError, ImportError):
    """Neither ``tokenizers`` nor ``transformers`` is installed, so no tokenizer can be loaded."""


@runtime_checkable
class TokenCounter(Protocol):
    """Counts the tokens of a text, as the model's tokenizer would encode it on its own.

    Counts leave out special tokens (BOS, EOS): a prompt's count is the sum of its parts
    give or take one token where two parts meet.
    """

    @property
    def name(self) -> str:
        """What counts: ``estimate:<calibration>`` or ``hf:<path>``."""
        ...

    def count(self, text: str) -> int:
        """The number of tokens of ``text``."""
        ...


# --- The estimator -----------------------------------------------------------------------

#: The pieces, in the order tried: a letters-only word, a digit run, a punctuation run
#: (each with the one space before it that the tokenizer joins to it), a run of spaces
#: that leaves its last space to the next piece, any other single whitespace character.
PIECE: Final = re.compile(r" ?[A-Za-z]+| ?[0-9]+| ?[^\sA-Za-z0-9]+| +(?= )|\s")
_CASE_RUN: Final = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
#: The longest run of ``▁`` in the Llama vocabulary.
LONGEST_SPACE_PIECE: Final = 16
_CACHE_LIMIT: Final = 100_000


def split_pieces(text: str) -> list[str]:
    """The pieces of ``text`` the estimator prices, with the tokenizer's leading space.

    >>> split_pieces("  br label %7")
    ['  ', ' br', ' label', ' %', '7']
    """
    return PIECE.findall(" " + text) if text else []


def word_features(word: str) -> tuple[float, float, float, float]:
    """The features of a letters-only word for the word model: 1, letters, capitals, case runs.

    A leading space is ignored (the tokenizer joins it to the word's first token).

    >>> word_features(" ZNSt")
    (1.0, 4.0, 3.0, 2.0)
    """
    body = word.lstrip(" ")
    capitals = sum(1 for char in body if char.isupper())
    return (1.0, float(len(body)), float(capitals), float(len(_CASE_RUN.findall(body))))


def punct_features(run: str) -> tuple[float, float, float]:
    """The features of a punctuation run for the punctuation model: 1, characters, leading space."""
    body = run.lstrip(" ")
    return (1.0, float(len(body)), float(len(run) - len(body)))


def lexicon_from_text(groups: Mapping[int, str]) -> dict[str, int]:
    """A lexicon from its compact form: cost -> pieces split by spaces, ``▁`` for a leading space.

    >>> lexicon_from_text({1: "▁load align", 3: "tbaa"})
    {' load': 1, 'align': 1, 'tbaa': 3}
    """
    return {piece.replace("▁", " "): cost for cost, text in groups.items() for piece in text.split()}


def lexicon_to_text(lexicon: Mapping[str, int]) -> dict[int, str]:
    """The compact form of a lexicon (see :func:`lexicon_from_text`), cheapest pieces first.

    Raises:
        InvalidInput: A piece is not ASCII, or has a space other than one leading space.
    """
    groups: dict[int, list[str]] = {}
    for piece, cost in sorted(lexicon.items(), key=lambda item: (item[1], item[0])):
        if (
            not piece.isascii()
            or " " in piece[1:]
            or not piece.strip()
            or any(c.isspace() for c in piece[1:])
        ):
            raise InvalidInput(f"lexicon piece {piece!r} cannot be written in the compact form")
        groups.setdefault(cost, []).append(piece.replace(" ", "▁"))
    return {cost: " ".join(pieces) for cost, pieces in groups.items()}


@dataclass(frozen=True)
class Calibration:
    """The constants of :class:`EstimatedTokenCounter`, fitted by ``bench/tokens/calibrate.py``.

    Attributes:
        name: A short name for the tokenizer and corpus, e.g. ``llama2-ir``.
        lexicon: Exact costs (tokens) of frequent words and punctuation runs, keyed by
            the piece as :func:`split_pieces` returns it (with its leading space).
        word_weights: Weights of :func:`word_features` for words not in the lexicon.
        punct_weights: Weights of :func:`punct_features` for punctuation not in the lexicon.
        scale: The factor that makes the sum of piece costs match the corpus's counts.
        margin: The default safety margin (fraction added to the scaled estimate).
    """

    name: str
    lexicon: Mapping[str, int]
    word_weights: tuple[float, float, float, float]
    punct_weights: tuple[float, float, float]
    scale: float
    margin: float

    def piece_cost(self, piece: str) -> float:
        """The estimated tokens of one piece from :func:`split_pieces` (at least 1)."""
        known = self.lexicon.get(piece)
        if known is not None:
            return float(known)
        last = piece[-1]
        if last == " ":
            return float(math.ceil(len(piece) / LONGEST_SPACE_PIECE))
        if last.isspace():
            return 1.0
        body = piece.lstrip(" ")
        space = len(piece) - len(body)
        if not piece.isascii():
            return float(len(body.encode("utf-8")) + space)
        if last.isdigit():
            return float(len(body) + space)
        if last.isalpha():
            weights: tuple[float, ...] = self.word_weights
            features: tuple[float, ...] = word_features(piece)
        else:
            weights, features = self.punct_weights, punct_features(piece)
        return max(1.0, sum(w * f for w, f in zip(weights, features, strict=True)))


# Fitted by bench/tokens/calibrate.py (see the module docstring for the tokenizer and
# corpus). Regenerate with that script rather than by hand.
LLAMA2_IR_CALIBRATION: Final = Calibration(
    name="llama2-ir",
    lexicon=lexicon_from_text(
        {
            1: (
                '▁! ▁" ▁# ▁% ▁%. ▁- ▁-- ▁. ▁; ▁= ▁@ ▁Begin ▁Call ▁End ▁Function ▁Header ▁Loop ▁[ ▁] '
                "▁], ▁_ ▁add ▁align ▁and ▁any ▁br ▁call ▁constant ▁distinct ▁double ▁eq ▁function ▁i "
                "▁imm ▁in ▁internal ▁label ▁load ▁memory ▁ptr ▁ret ▁store ▁tail ▁to ▁void ▁x ▁{ ▁} ! "
                '" ", # $ $_ % ( (% () ) ), , ," - -. . .. ._ / : :: ; = @ Any BB E EE Function L M N '
                "S Select St T Vector \\ ] ], _ _( __ addr al align attributes base basic bb begin "
                "buffer byte char class const cpu d data def default define edi end esi exit function "
                "generic gnu i iterator iv je local long loop main new node normal not object offset "
                "p ptr quad r rip section size stack start std str struct target text tree type "
                "unique v weak x }"
            ),
            2: (
                '▁%" ▁(% ▁@_ ▁Depth ▁alloca ▁cleanup ▁comdat ▁dso ▁icmp ▁inbounds ▁linkonce '
                "▁mustprogress ▁nofree ▁nonnull ▁nsw ▁optsize ▁phi ▁preds ▁sext ▁unnamed ▁volatile "
                '▁willreturn ",@ "=" ,+ ,@ ,_ -_ ::_ ESt Ev LBB Lfunc Ltmp PLT Rb ZL ZN ZSt abort '
                "addq adjust allocator axG callq cfa cfi cmpl cmpq comdat cxx declare deleteIS eax "
                "ecx edx endproc indvars jmp jne leaq lessIS llvm mainE movl movq odr popq preheader "
                "progbits pushq rax rbx rcx rdi rdx retq rsi rsp sse stIS startproc subq uleb xmm"
            ),
            3: (
                "▁!{! ▁Attrs ▁dereferenceable ▁getelementptr ▁minsize ▁noundef ▁nounwind ▁uwtable "
                "ESaIS GLOBAL ZNK ZNSt iESt lifetime pairIKS tbaa treeINSt xorl"
            ),
            4: ("▁unreachable ZNKSt stringIcSt"),
            11: ("traitsIcESaIcEEESt"),
        }
    ),
    word_weights=(0.0314, 0.1409, 0.2381, 0.7247),
    punct_weights=(0.279, 0.5211, 0.1757),
    scale=0.9998,
    margin=0.03,
)


@dataclass(frozen=True)
class EstimatedTokenCounter:
    """A dependency-free estimate of Llama token counts for IR and assembly.

    See the module docstring for the method and its measured error.

    Attributes:
        calibration: The fitted constants (Llama 2 on LLVM IR and x86-64 assembly).
        margin: Fraction added to the estimate so that budget checks err on the side of
            rejecting; None takes the calibration's (3%). 0 gives the unbiased estimate.

    Raises:
        InvalidInput: ``margin`` is negative.
    """

    calibration: Calibration = LLAMA2_IR_CALIBRATION
    margin: float | None = None
    _costs: dict[str, float] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.margin is not None and not self.margin >= 0:
            raise InvalidInput(f"token estimate margin must be 0 or more, got {self.margin!r}")

    @property
    def name(self) -> str:
        """``estimate:<calibration name>``."""
        return f"estimate:{self.calibration.name}"

    def raw_count(self, text: str) -> float:
        """The scaled estimate of ``text`` before the margin and rounding."""
        if not text:
            return 0.0
        costs = self._costs
        if len(costs) > _CACHE_LIMIT:
            costs.clear()
        total = 0.0
        for piece, times in Counter(split_pieces(text)).items():
            cost = costs.get(piece)
            if cost is None:
                cost = costs[piece] = self.calibration.piece_cost(piece)
            total += cost * times
        return total * self.calibration.scale

    def count(self, text: str) -> int:
        """The estimated tokens of ``text``, margin included, rounded up."""
        margin = self.calibration.margin if self.margin is None else self.margin
        return math.ceil(round(self.raw_count(text) * (1.0 + margin), 6))


# --- A real tokenizer --------------------------------------------------------------------


class HFTokenCounter:
    """Counts with a Hugging Face tokenizer loaded from local files (no download).

    The tokenizer is loaded when the counter is made, with the ``tokenizers`` package
    when the path gives a ``tokenizer.json`` (a file, or a directory holding one), else
    with ``transformers``' ``AutoTokenizer`` from the directory. Neither package is
    imported before that.

    Args:
        path: A ``tokenizer.json`` file, or a model directory (e.g. a local copy of
            ``facebook/llm-compiler-7b``).

    Raises:
        TokenizerNotFound: ``path`` does not exist, or is a directory with no tokenizer.
        TokenizerLibraryMissing: The package needed to load it is not installed.
        TokenizerError: The file could not be loaded as a tokenizer.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).expanduser()
        self.name = f"hf:{self.path}"
        if not self.path.exists():
            raise TokenizerNotFound(
                f"tokenizer {str(self.path)!r} does not exist; give a tokenizer.json file or a "
                "model directory holding one (e.g. a local copy of facebook/llm-compiler-7b)"
            )
        if self.path.is_dir():
            json_file = self.path / "tokenizer.json"
            if not json_file.is_file() and not (self.path / "tokenizer_config.json").is_file():
                raise TokenizerNotFound(
                    f"no tokenizer.json or tokenizer_config.json in {str(self.path)!r}; give the "
                    "tokenizer.json file or a model directory that holds one"
                )
        else:
            json_file = self.path
        encode = self._load_tokenizers(json_file) if json_file.is_file() else None
        self._encode: Callable[[str], int] = encode or self._load_transformers()

    def count(self, text: str) -> int:
        """The number of tokens of ``text``, special tokens (BOS, EOS) left out."""
        return self._encode(text)

    def __repr__(self) -> str:
        return f"HFTokenCounter({str(self.path)!r})"

    def _load_tokenizers(self, json_file: Path) -> Callable[[str], int] | None:
        try:
            tokenizers = importlib.import_module("tokenizers")
        except ImportError:
            return None  # transformers may still load it
        try:
            tokenizer = tokenizers.Tokenizer.from_file(str(json_file))
        except Exception as error:  # the Rust side raises a plain Exception
            raise TokenizerError(f"cannot load tokenizer {str(json_file)!r}: {error}") from error

        def encode(text: str) -> int:
            return len(tokenizer.encode(text, add_special_tokens=False).ids)

        return encode

    def _load_transformers(self) -> Callable[[str], int]:
        directory = self.path if self.path.is_dir() else self.path.parent
        try:
            transformers = importlib.import_module("transformers")
        except ImportError:
            raise TokenizerLibraryMissing(
                f"counting tokens with {str(self.path)!r} needs the tokenizers or transformers "
                f"package, and neither is installed: {HF_INSTALL_HINT}; or leave --tokenizer out "
                "to use the built-in estimate"
            ) from None
        try:
            tokenizer = transformers.AutoTokenizer.from_pretrained(str(directory), local_files_only=True)
        except Exception as error:
            raise TokenizerError(f"cannot load a tokenizer from {str(directory)!r}: {error}") from error

        def encode(text: str) -> int:
            return len(tokenizer(text, add_special_tokens=False)["input_ids"])

        return encode


def get_token_counter(path: str | Path | None) -> TokenCounter:
    """The counter for a ``--tokenizer`` option: the real tokenizer at ``path``, else the estimate.

    Raises:
        TokenizerNotFound, TokenizerLibraryMissing, TokenizerError: As :class:`HFTokenCounter`.
    """
    if path is None:
        return EstimatedTokenCounter()
    return HFTokenCounter(path)
