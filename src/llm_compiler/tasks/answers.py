"""Answers of the three LLM Compiler tasks: typed values, their text, and lenient parsers.

An answer is what follows ``[/INST]``. Our documented formats (what the builders write
and the datasets hold) are:

Compiler emulation (:class:`EmulationAnswer`), the predicted size of the result, then the
result (IR or assembly, as the prompt asked)::

    The optimized code has instruction count {ir_count} and binary size {bin_size} bytes:

    <code>{code}</code>

Flag tuning, when a pass list beats the input (:class:`PassListAnswer`)::

    Run opt -p '{pipeline}' to reduce the binary size from {size_before} bytes to {size_after} bytes:

    <code>{code}</code>

Flag tuning, when nothing beats the input (:class:`AlreadyOptimalAnswer`)::

    The input code is already optimal: its binary size is {size_before} bytes.

Disassembly (:class:`DisassemblyAnswer`)::

    <code>{ir}</code>

``parse_x(build_x(answer)) == answer`` for every format. The parsers also read what the
released models write, which strays from the format; they accept:

- whitespace around the answer, any spacing and letter case in the prose, and text
  after the last code block (an end-of-sequence marker, a remark);
- ``size`` misspelt ``sise``; numbers with thousands separators (``1,234``);
- several code blocks: the *first complete* ``<code>...</code>`` block is the answer (a
  model that goes on usually repeats itself or drifts, the first block is the one the
  numbers describe); an unclosed ``<code>`` block (the generation ran out of tokens) is
  an error, as the code is incomplete;
- the pass list as ``opt -p '...'``, ``opt -p "..."``, ``opt -p ...`` (unquoted, ending at
  whitespace), ``opt   -p   '...'``, ``-passes=...`` or ``--passes=...`` with or without
  quotes, or between backquotes. The first such mention outside the code blocks counts.

Counts, sizes and the pass list are read only from the prose, never from inside a code
block. The pass list is always parsed with :func:`parse_pipeline` — never passed on as
text — so a list such as ``instcombine;rm -rf /`` is refused with the reason. Code is
kept verbatim (no stripping), and may not contain ``</code>``.

Each ``parse_*`` function raises :class:`AnswerParseError` (and nothing else) for text it
cannot read; each ``try_parse_*`` returns that error instead of raising it. For
evaluation, where only the pass list of a flag tuning answer matters,
:func:`extract_pass_list` reads just that and tolerates a truncated code block.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from llm_compiler.errors import InvalidPassList, LlmCompilerError
from llm_compiler.passes.pipeline import PassList, parse_pipeline
from llm_compiler.tasks.prompts import CODE_END, MAX_DIGITS, check_code, check_count, check_pass_list


class AnswerParseError(LlmCompilerError, ValueError):
    """A model's answer could not be read in the expected format.

    Attributes:
        reason: What was wrong, in a few words (e.g. ``"no complete <code> block"``).
        text: The answer that was read.
        pass_list_error: The :class:`InvalidPassList` raised by :func:`parse_pipeline`, when
            the answer's pass list was the problem.
    """

    def __init__(self, reason: str, *, text: str, pass_list_error: InvalidPassList | None = None) -> None:
        excerpt = text if len(text) <= 120 else text[:117] + "..."
        super().__init__(f"Cannot read the model's answer: {reason}. Answer: {excerpt!r}")
        self.reason = reason
        self.text = text
        self.pass_list_error = pass_list_error


@dataclass(frozen=True)
class EmulationAnswer:
    """A compiler emulation answer: the code after the passes and its predicted size.

    Attributes:
        code: The optimized IR or assembly (verbatim; may not contain ``</code>``).
        ir_count: The predicted IR instruction count of the result.
        bin_size: The predicted binary size of the result in bytes.
    """

    code: str
    ir_count: int
    bin_size: int

    def __post_init__(self) -> None:
        check_code(self.code, "code")
        check_count(self.ir_count, "ir_count")
        check_count(self.bin_size, "bin_size")


@dataclass(frozen=True)
class PassListAnswer:
    """A flag tuning answer naming a pass list that shrinks the input.

    Attributes:
        passes: The pass list to run (non-empty).
        size_before: The input's binary size in bytes.
        size_after: The binary size after the passes, in bytes.
        code: The IR after the passes (verbatim; may not contain ``</code>``).
    """

    passes: PassList
    size_before: int
    size_after: int
    code: str

    def __post_init__(self) -> None:
        check_pass_list(self.passes)
        check_count(self.size_before, "size_before")
        check_count(self.size_after, "size_after")
        check_code(self.code, "code")


@dataclass(frozen=True)
class AlreadyOptimalAnswer:
    """A flag tuning answer saying no pass list beats the input.

    Attributes:
        size_before: The input's binary size in bytes.
    """

    size_before: int

    def __post_init__(self) -> None:
        check_count(self.size_before, "size_before")

    @property
    def passes(self) -> None:
        """No pass list (so ``answer.passes`` can be read on any flag tuning answer)."""
        return None


FlagTuningAnswer = PassListAnswer | AlreadyOptimalAnswer


@dataclass(frozen=True)
class DisassemblyAnswer:
    """A disassembly answer: the IR lifted from the prompt's assembly.

    Attributes:
        ir: The lifted LLVM-IR (verbatim; may not contain ``</code>``).
    """

    ir: str

    def __post_init__(self) -> None:
        check_code(self.ir, "ir")


# ---------------------------------------------------------------------------------------
# Builders


def build_emulation_answer(answer: EmulationAnswer) -> str:
    """The text of a compiler emulation answer (format in the module docstring)."""
    return (
        f"The optimized code has instruction count {answer.ir_count} and binary size "
        f"{answer.bin_size} bytes:\n\n<code>{answer.code}</code>"
    )


def build_flag_tuning_answer(answer: FlagTuningAnswer) -> str:
    """The text of a flag tuning answer (formats in the module docstring).

    Example:
        >>> build_flag_tuning_answer(AlreadyOptimalAnswer(size_before=120))
        'The input code is already optimal: its binary size is 120 bytes.'
    """
    if isinstance(answer, AlreadyOptimalAnswer):
        return f"The input code is already optimal: its binary size is {answer.size_before} bytes."
    return (
        f"Run opt -p '{answer.passes.pipeline}' to reduce the binary size from {answer.size_before} "
        f"bytes to {answer.size_after} bytes:\n\n<code>{answer.code}</code>"
    )


def build_disassembly_answer(answer: DisassemblyAnswer) -> str:
    """The text of a disassembly answer: the IR in one code block."""
    return f"<code>{answer.ir}</code>"


# ---------------------------------------------------------------------------------------
# Reading answers

_CODE_START = "<code>"

# A number, maybe with thousands separators; the digits are capped so that int() never
# refuses them (Python limits int("...") to 4,300 digits).
_NUMBER = (
    r"(?<![0-9,])(?:[0-9]{1,3}(?:,[0-9]{3}){1,9}"
    rf"|[0-9]{{1,{MAX_DIGITS}}})(?![0-9])"
)
_SIZE_WORD = r"si[sz]e"

_EMULATION_COUNTS_RE = re.compile(
    rf"instruction\s+count\s*(?:of\s+|is\s+|=\s*|:\s*)?(?P<ir_count>{_NUMBER})"
    rf".{{0,200}}?binary\s+{_SIZE_WORD}\s*(?:of\s+|is\s+|=\s*|:\s*)?(?P<bin_size>{_NUMBER})\s*bytes?",
    re.IGNORECASE | re.DOTALL,
)
_SIZES_RE = re.compile(
    rf"from\s+(?P<before>{_NUMBER})\s*(?:bytes?\s+)?to\s+(?P<after>{_NUMBER})\s*bytes?",
    re.IGNORECASE,
)
_OPTIMAL_SIZE_RE = re.compile(
    rf"(?P<binary>binary\s+)?{_SIZE_WORD}\s*(?:of\s+|is\s+|=\s*|:\s*)?(?P<before>{_NUMBER})\s*bytes?",
    re.IGNORECASE,
)
# "-p" or "-passes=" / "--passes" (not part of a longer word), then the pipeline quoted
# with ', " or `, or unquoted up to whitespace or a quote.
_PASSES_RE = re.compile(
    r"(?<![\w-])(?:-p(?:\s*=\s*|\s+)|--?passes(?:\s*=\s*|\s+))"
    r"(?:'(?P<single>[^'\n]*)'|\"(?P<double>[^\"\n]*)\"|`(?P<back>[^`\n]*)`|(?P<bare>[^\s'\"`]+))"
)
_ALREADY_OPTIMAL_RE = re.compile(
    r"already\s+optimal|cannot\s+be\s+(?:further\s+)?optimi[sz]ed", re.IGNORECASE
)


@dataclass(frozen=True)
class _Split:
    """An answer cut into prose and code: ``prose`` has every code block taken out."""

    prose: str
    first_block: str | None
    truncated: bool


def _split(text: str) -> _Split:
    """Cuts ``text`` at its code blocks; an unclosed block runs to the end of the text."""
    prose: list[str] = []
    first_block: str | None = None
    truncated = False
    pos = 0
    while True:
        start = text.find(_CODE_START, pos)
        if start < 0:
            prose.append(text[pos:])
            break
        prose.append(text[pos:start])
        end = text.find(CODE_END, start + len(_CODE_START))
        if end < 0:
            truncated = True
            break
        if first_block is None:
            first_block = text[start + len(_CODE_START) : end]
        prose.append("\n")
        pos = end + len(CODE_END)
    return _Split(" ".join(prose), first_block, truncated)


def _number(text: str) -> int:
    return int(text.replace(",", ""))


def _check_text(text: object) -> str:
    if not isinstance(text, str):
        raise AnswerParseError(f"an answer is text, not {type(text).__name__}", text=repr(text))
    if not text.strip():
        raise AnswerParseError("the answer is empty", text=text)
    return text


def _code(split: _Split, text: str) -> str:
    if split.first_block is None:
        if split.truncated:
            raise AnswerParseError("the <code> block is not closed (was the answer cut short?)", text=text)
        raise AnswerParseError("no <code> block", text=text)
    return split.first_block


def _pass_list(split: _Split, text: str) -> PassList | None:
    """The first pass list named in the prose, parsed; None when the prose names none."""
    match = _PASSES_RE.search(split.prose)
    if match is None:
        return None
    pipeline = next(group for group in match.group("single", "double", "back", "bare") if group is not None)
    if match.group("bare") is not None:
        pipeline = pipeline.rstrip(".,:")
    try:
        return parse_pipeline(pipeline)
    except InvalidPassList as error:
        raise AnswerParseError(
            f"invalid pass list {pipeline!r}: {error}", text=text, pass_list_error=error
        ) from error


def parse_emulation_answer(text: str) -> EmulationAnswer:
    """Reads a compiler emulation answer (format and leniency in the module docstring).

    Raises:
        AnswerParseError: No instruction count and binary size in the prose, or no
            complete code block.
    """
    text = _check_text(text)
    split = _split(text)
    code = _code(split, text)
    match = _EMULATION_COUNTS_RE.search(split.prose)
    if match is None:
        raise AnswerParseError("no 'instruction count N and binary size N bytes'", text=text)
    return EmulationAnswer(code, _number(match.group("ir_count")), _number(match.group("bin_size")))


def parse_flag_tuning_answer(text: str) -> FlagTuningAnswer:
    """Reads a flag tuning answer (formats and leniency in the module docstring).

    An answer naming a pass list is a :class:`PassListAnswer` and must give both sizes
    and the code; one naming none is an :class:`AlreadyOptimalAnswer` and must give the
    input's size.

    Example:
        >>> parse_flag_tuning_answer("Run opt -passes=instcombine to reduce the binary sise "
        ...                          "from 1,024 bytes to 96 bytes:\\n\\n<code>IR</code>")
        PassListAnswer(passes=PassList('instcombine'), size_before=1024, size_after=96, code='IR')

    Raises:
        AnswerParseError: The pass list is not valid pipeline text (the error's
            ``pass_list_error`` says why), or a size or the code is missing.
    """
    text = _check_text(text)
    split = _split(text)
    passes = _pass_list(split, text)
    if passes is None:
        if split.first_block is not None or split.truncated:
            raise AnswerParseError("the answer has code but names no pass list ('opt -p ...')", text=text)
        match = _OPTIMAL_SIZE_RE.search(split.prose)
        if match is None or not (match.group("binary") or _ALREADY_OPTIMAL_RE.search(split.prose)):
            raise AnswerParseError(
                "neither a pass list ('opt -p ...') nor 'already optimal: ... size is N bytes'", text=text
            )
        return AlreadyOptimalAnswer(_number(match.group("before")))
    sizes = _SIZES_RE.search(split.prose)
    if sizes is None:
        raise AnswerParseError("no binary sizes ('from N bytes to N bytes')", text=text)
    code = _code(split, text)
    return PassListAnswer(passes, _number(sizes.group("before")), _number(sizes.group("after")), code)


def parse_disassembly_answer(text: str) -> DisassemblyAnswer:
    """Reads a disassembly answer: the first complete code block is the IR.

    Raises:
        AnswerParseError: No complete code block.
    """
    text = _check_text(text)
    return DisassemblyAnswer(_code(_split(text), text))


def extract_pass_list(text: str) -> PassList:
    """Reads only the pass list of a flag tuning answer: what evaluation runs.

    Unlike :func:`parse_flag_tuning_answer`, sizes may be missing and the code block
    truncated or absent.

    Raises:
        AnswerParseError: The answer names no pass list, or an invalid one.
    """
    text = _check_text(text)
    passes = _pass_list(_split(text), text)
    if passes is None:
        raise AnswerParseError("no pass list ('opt -p ...')", text=text)
    return passes


@dataclass(frozen=True)
class FlagTuningHead:
    """What a flag tuning answer says before its code: all that applying it needs.

    Attributes:
        passes: The pass list, or None when the answer says the input is already optimal.
        size_before: The predicted size of the input, when the answer gives it.
        size_after: The predicted size after the passes, when the answer gives it.
    """

    passes: PassList | None
    size_before: int | None
    size_after: int | None


def parse_flag_tuning_head(text: str) -> FlagTuningHead:
    """Reads the prose of a flag tuning answer, which may stop at (or before) its code.

    Generation can stop at the first ``<code>``: the list and the predicted sizes come
    before it, and the optimized IR after it is not needed to apply the list.

    Example:
        >>> parse_flag_tuning_head("Run opt -p 'module(default<Oz>)' to reduce the binary size "
        ...                        "from 120 bytes to 96 bytes:\\n\\n")
        FlagTuningHead(passes=PassList('module(default<Oz>)'), size_before=120, size_after=96)

    Raises:
        AnswerParseError: The answer names neither a valid pass list nor an optimal input.
    """
    text = _check_text(text)
    split = _split(text)
    passes = _pass_list(split, text)
    if passes is None:
        match = _OPTIMAL_SIZE_RE.search(split.prose)
        if match is None or not (match.group("binary") or _ALREADY_OPTIMAL_RE.search(split.prose)):
            raise AnswerParseError(
                "neither a pass list ('opt -p ...') nor 'already optimal: ... size is N bytes'", text=text
            )
        return FlagTuningHead(None, _number(match.group("before")), None)
    sizes = _SIZES_RE.search(split.prose)
    if sizes is None:
        return FlagTuningHead(passes, None, None)
    return FlagTuningHead(passes, _number(sizes.group("before")), _number(sizes.group("after")))


def try_parse_emulation_answer(text: str) -> EmulationAnswer | AnswerParseError:
    """:func:`parse_emulation_answer`, returning the error instead of raising it."""
    try:
        return parse_emulation_answer(text)
    except AnswerParseError as error:
        return error


def try_parse_flag_tuning_answer(text: str) -> FlagTuningAnswer | AnswerParseError:
    """:func:`parse_flag_tuning_answer`, returning the error instead of raising it."""
    try:
        return parse_flag_tuning_answer(text)
    except AnswerParseError as error:
        return error


def try_parse_disassembly_answer(text: str) -> DisassemblyAnswer | AnswerParseError:
    """:func:`parse_disassembly_answer`, returning the error instead of raising it."""
    try:
        return parse_disassembly_answer(text)
    except AnswerParseError as error:
        return error


def try_extract_pass_list(text: str) -> PassList | AnswerParseError:
    """:func:`extract_pass_list`, returning the error instead of raising it."""
    try:
        return extract_pass_list(text)
    except AnswerParseError as error:
        return error
