"""Prompts of the three LLM Compiler tasks, byte for byte as the released models were trained on.

The released weights (``facebook/llm-compiler-7b``, ``-13b`` and their ``-ftd``
variants) only answer well when the prompt is exactly the one they saw during
instruction tuning, so the builders here reproduce it to the byte:

Compiler emulation, IR out (assembly out says ``assembly`` instead of ``LLVM-IR``)::

    [INST] Give the LLVM-IR for the following code when optimized using opt -p '{passes}':

    <code>{ir}</code>

    The input code has instruction count {ir_count} and binary size {bin_size} bytes. [/INST]

Flag tuning::

    [INST] Tell me how to optimize this LLVM-IR for object file size:

    <code>{ir}</code> [/INST]

Disassembly::

    [INST] Disassemble this code to LLVM-IR:

    <code>{asm}</code> [/INST]

``{passes}`` is :attr:`PassList.pipeline`, the text ``opt -passes=`` takes. No BOS token
is written: the tokenizer adds it. Each prompt is a frozen value object
(:class:`EmulationPrompt`, :class:`FlagTuningPrompt`, :class:`DisassemblyPrompt`) that
checks its fields when made; :func:`build_prompt` turns it into text and
:func:`parse_prompt` reads such text back (to load a dataset), so that
``parse_prompt(build_prompt(p)) == p``. Code placed between ``<code>`` and ``</code>`` is
kept verbatim, whitespace included; it may not itself contain ``</code>``, which would
end the block early.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

from llm_compiler.errors import InvalidInput, InvalidPassList, LlmCompilerError
from llm_compiler.passes.pipeline import PassList, parse_pipeline

#: The closing tag of a code block; code placed in a prompt or answer may not contain it.
CODE_END = "</code>"

#: Largest number of digits read back from a count or size (``int()`` refuses very long ones).
MAX_DIGITS = 30


class PromptParseError(LlmCompilerError, ValueError):
    """Text is not one of the three task prompts.

    Attributes:
        reason: What was wrong, in a few words.
        text: The text that was read.
    """

    def __init__(self, reason: str, *, text: str) -> None:
        excerpt = text if len(text) <= 80 else text[:77] + "..."
        super().__init__(f"Not an LLM Compiler prompt ({reason}): {excerpt!r}")
        self.reason = reason
        self.text = text


class EmulationTarget(enum.Enum):
    """What a compiler emulation prompt asks for: optimized IR or the assembly lowered from it."""

    IR = "LLVM-IR"
    ASSEMBLY = "assembly"


def check_code(code: object, field: str) -> None:
    """Checks that ``code`` can be placed verbatim in a ``<code>`` block.

    Raises:
        InvalidInput: ``code`` is not text, or contains ``</code>``.
    """
    if not isinstance(code, str):
        raise InvalidInput(f"{field} must be text, not {type(code).__name__}.")
    if CODE_END in code:
        raise InvalidInput(
            f"{field} contains {CODE_END!r}, which would end its <code> block early; remove it from the code."
        )


def check_count(value: object, field: str) -> None:
    """Checks that ``value`` is a non-negative ``int`` (a count or a size in bytes).

    Raises:
        InvalidInput: ``value`` is not an int (bool is refused) or is negative.
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInput(f"{field} must be an int, not {type(value).__name__}.")
    if value < 0:
        raise InvalidInput(f"{field} must not be negative, got {value}.")


def check_pass_list(passes: object, field: str = "passes") -> None:
    """Checks that ``passes`` is a non-empty :class:`PassList` whose text parses back to it.

    Raises:
        InvalidInput: ``passes`` is not a PassList, is empty, or does not print as valid
            pipeline text (a hand-made :class:`PassNode` with a bad name, say).
    """
    if not isinstance(passes, PassList):
        raise InvalidInput(f"{field} must be a PassList, not {type(passes).__name__}; use parse_pipeline().")
    try:
        valid = parse_pipeline(passes.pipeline) == passes
    except InvalidPassList as error:
        raise InvalidInput(f"{field} is not a valid pass list: {error}") from error
    if not valid:
        raise InvalidInput(f"{field} {passes.pipeline!r} does not read back as the same pass list.")


@dataclass(frozen=True)
class EmulationPrompt:
    """A compiler emulation prompt: predict the code ``opt -p passes`` makes of ``ir``.

    Attributes:
        ir: The unoptimized LLVM-IR (verbatim; may not contain ``</code>``).
        passes: The pass list to emulate (non-empty).
        ir_count: The input's IR instruction count.
        bin_size: The input's binary size in bytes (.text + .data of its object file).
        target: Whether the answer is to be optimized IR or assembly.
    """

    ir: str
    passes: PassList
    ir_count: int
    bin_size: int
    target: EmulationTarget = EmulationTarget.IR

    def __post_init__(self) -> None:
        check_code(self.ir, "ir")
        check_pass_list(self.passes)
        check_count(self.ir_count, "ir_count")
        check_count(self.bin_size, "bin_size")
        if not isinstance(self.target, EmulationTarget):
            raise InvalidInput(f"target must be an EmulationTarget, not {self.target!r}.")


@dataclass(frozen=True)
class FlagTuningPrompt:
    """A flag tuning prompt: find the pass list that makes ``ir``'s object file smallest.

    Attributes:
        ir: The unoptimized LLVM-IR (verbatim; may not contain ``</code>``).
    """

    ir: str

    def __post_init__(self) -> None:
        check_code(self.ir, "ir")


@dataclass(frozen=True)
class DisassemblyPrompt:
    """A disassembly prompt: lift ``asm`` back to LLVM-IR.

    Attributes:
        asm: The assembly (verbatim; may not contain ``</code>``).
    """

    asm: str

    def __post_init__(self) -> None:
        check_code(self.asm, "asm")


Prompt = EmulationPrompt | FlagTuningPrompt | DisassemblyPrompt


def emulation_prompt(
    ir: str,
    passes: PassList,
    *,
    ir_count: int,
    bin_size: int,
    target: EmulationTarget = EmulationTarget.IR,
) -> str:
    """The compiler emulation prompt for ``ir``, as the released models expect it.

    Raises:
        InvalidInput: A field is not valid (see :class:`EmulationPrompt`).
    """
    return build_prompt(EmulationPrompt(ir, passes, ir_count, bin_size, target))


def flag_tuning_prompt(ir: str) -> str:
    """The flag tuning prompt for ``ir``, as the released models expect it.

    Example:
        >>> flag_tuning_prompt("define void @f() {\\n  ret void\\n}")
        '[INST] Tell me how to optimize this LLVM-IR for object file size:\\n\\n<code>define void @f() {\\n  ret void\\n}</code> [/INST]'

    Raises:
        InvalidInput: ``ir`` contains ``</code>``.
    """  # noqa: E501
    return build_prompt(FlagTuningPrompt(ir))


def disassembly_prompt(asm: str) -> str:
    """The disassembly prompt for ``asm``, as the released models expect it.

    Raises:
        InvalidInput: ``asm`` contains ``</code>``.
    """
    return build_prompt(DisassemblyPrompt(asm))


def build_prompt(prompt: Prompt) -> str:
    """The text of a prompt, byte for byte the released models' format (see the module docstring)."""
    if isinstance(prompt, EmulationPrompt):
        return (
            f"[INST] Give the {prompt.target.value} for the following code when optimized using "
            f"opt -p '{prompt.passes.pipeline}':\n\n<code>{prompt.ir}</code>\n\n"
            f"The input code has instruction count {prompt.ir_count} and binary size "
            f"{prompt.bin_size} bytes. [/INST]"
        )
    if isinstance(prompt, FlagTuningPrompt):
        return (
            "[INST] Tell me how to optimize this LLVM-IR for object file size:\n\n"
            f"<code>{prompt.ir}</code> [/INST]"
        )
    if isinstance(prompt, DisassemblyPrompt):
        return f"[INST] Disassemble this code to LLVM-IR:\n\n<code>{prompt.asm}</code> [/INST]"
    raise TypeError(f"Not a prompt: {type(prompt).__name__}.")


# The code groups are lazy and the patterns anchored at both ends, so a group ends at the
# first "</code>" that the rest of the pattern accepts; as the code may not contain
# "</code>", that is the one the builder wrote.
_NUMBER = rf"[0-9]{{1,{MAX_DIGITS}}}"
_EMULATION_RE = re.compile(
    r"\[INST\] Give the (?P<target>LLVM-IR|assembly) for the following code when optimized using "
    r"opt -p '(?P<passes>[^'\n]*)':\n\n<code>(?P<code>.*?)</code>\n\n"
    rf"The input code has instruction count (?P<ir_count>{_NUMBER}) and binary size "
    rf"(?P<bin_size>{_NUMBER}) bytes\. \[/INST\]",
    re.DOTALL,
)
_FLAG_TUNING_RE = re.compile(
    r"\[INST\] Tell me how to optimize this LLVM-IR for object file size:\n\n"
    r"<code>(?P<code>.*?)</code> \[/INST\]",
    re.DOTALL,
)
_DISASSEMBLY_RE = re.compile(
    r"\[INST\] Disassemble this code to LLVM-IR:\n\n<code>(?P<code>.*?)</code> \[/INST\]", re.DOTALL
)


def _match(pattern: re.Pattern[str], text: object, task: str) -> re.Match[str]:
    if not isinstance(text, str):
        raise PromptParseError(f"a prompt is text, not {type(text).__name__}", text=repr(text))
    match = pattern.fullmatch(text.strip())
    if match is None or CODE_END in match.group("code"):
        raise PromptParseError(f"not in the {task} prompt format", text=text)
    return match


def parse_emulation_prompt(text: str) -> EmulationPrompt:
    """Reads a compiler emulation prompt made by :func:`build_prompt`.

    Whitespace around the prompt is ignored; everything else must be exactly the format.

    Raises:
        PromptParseError: ``text`` is not an emulation prompt, or its pass list is not
            valid pipeline text (checked with :func:`parse_pipeline`).
    """
    match = _match(_EMULATION_RE, text, "compiler emulation")
    try:
        passes = parse_pipeline(match.group("passes"))
    except InvalidPassList as error:
        raise PromptParseError(f"invalid pass list: {error}", text=text) from error
    return EmulationPrompt(
        ir=match.group("code"),
        passes=passes,
        ir_count=int(match.group("ir_count")),
        bin_size=int(match.group("bin_size")),
        target=EmulationTarget(match.group("target")),
    )


def parse_flag_tuning_prompt(text: str) -> FlagTuningPrompt:
    """Reads a flag tuning prompt made by :func:`build_prompt`.

    Raises:
        PromptParseError: ``text`` is not a flag tuning prompt.
    """
    return FlagTuningPrompt(_match(_FLAG_TUNING_RE, text, "flag tuning").group("code"))


def parse_disassembly_prompt(text: str) -> DisassemblyPrompt:
    """Reads a disassembly prompt made by :func:`build_prompt`.

    Raises:
        PromptParseError: ``text`` is not a disassembly prompt.
    """
    return DisassemblyPrompt(_match(_DISASSEMBLY_RE, text, "disassembly").group("code"))


def parse_prompt(text: str) -> Prompt:
    """Reads any of the three prompts, telling them apart by their first sentence.

    Raises:
        PromptParseError: ``text`` is none of the three prompts.
    """
    if not isinstance(text, str):
        raise PromptParseError(f"a prompt is text, not {type(text).__name__}", text=repr(text))
    head = text.lstrip()
    if head.startswith("[INST] Give the "):
        return parse_emulation_prompt(text)
    if head.startswith("[INST] Tell me how to optimize "):
        return parse_flag_tuning_prompt(text)
    if head.startswith("[INST] Disassemble "):
        return parse_disassembly_prompt(text)
    raise PromptParseError("does not start like any of the three task prompts", text=text)
