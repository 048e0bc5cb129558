"""Facts read from textual LLVM IR: the instruction count, defined functions.

**IR instruction count** (LLM Compiler's second code-size metric) is the number of
instructions inside the bodies of the functions *defined* in a module: every
instruction of every basic block, terminators and phis included. Declarations,
globals, metadata and attributes count for nothing. In the printed IR that is one
per line of a ``define ... {`` ... ``}`` body, except

* block labels (``entry:``, ``12:``), comments and blank lines;
* continuation lines of one instruction: the case list of a ``switch`` (up to its
  closing ``]``), the ``to label ... unwind label ...`` line of an ``invoke`` or
  ``callbr``, and the clauses of a ``landingpad`` (``catch``, ``filter``,
  ``cleanup``);
* debug records (``#dbg_value(...)``) and ``uselistorder`` directives, which are
  not instructions.

It equals what LLVM itself counts when it walks every instruction of every block
of every function (``Function::getInstructionCount``; the tests compare with LLVM's
reader through its C API), without a process. Note that
``opt -passes='print<func-properties>'`` differs: it skips unreachable blocks.
"""

from __future__ import annotations

import re
from collections.abc import Collection

_LABEL_RE = re.compile(r'^(?:[-a-zA-Z$._0-9]+|"[^"]*"):(?:\s*;.*)?$')
_CONTINUATION_PREFIXES = ("to ", "catch ", "filter ", "cleanup")
#: A ``define`` line; group 1 is the function's name (quoted where LLVM quotes it).
DEFINE_RE = re.compile(r'^define\b[^@]*@("(?:[^"\\]|\\.)*"|[-a-zA-Z$._0-9]+)')


def count_instructions(ir_text: str) -> int:
    """Counts the instructions in the function bodies of textual IR.

    Args:
        ir_text: A module as printed by ``opt -S`` or ``clang -emit-llvm -S``.

    Returns:
        The number of instructions (see the module docstring for the definition).

    Example:
        >>> count_instructions("define i32 @f() {\\nentry:\\n  ret i32 0\\n}\\n")
        1
    """
    count = 0
    in_body = False
    in_switch = False
    for raw in ir_text.splitlines():
        line = raw.strip()
        if not in_body:
            if line.startswith("define ") and line.endswith("{"):
                in_body = True
            continue
        if in_switch:
            if line.startswith("]"):
                in_switch = False
            continue
        if not line or line.startswith(";"):
            continue
        if line == "}":
            in_body = False
            continue
        if _LABEL_RE.match(line):
            continue
        if line.startswith(_CONTINUATION_PREFIXES) or line.startswith(("#dbg_", "uselistorder")):
            continue
        count += 1
        if line.endswith("[") and (line.startswith("switch ") or " = switch " in line):
            in_switch = True
    return count


def defined_functions(ir_text: str) -> list[str]:
    """Names of the functions defined (not just declared) in textual IR, in order."""
    names = []
    for raw in ir_text.splitlines():
        match = DEFINE_RE.match(raw)
        if match:
            names.append(match.group(1).strip('"'))
    return names


_ATTRIBUTE_GROUP_RE = re.compile(r"^attributes #(\d+) = \{ (.*) \}$")
_GROUP_REF_RE = re.compile(r" #(\d+)\b")


def with_function_attribute(ir_text: str, attribute: str, functions: Collection[str] | None = None) -> str:
    """Textual IR with a string attribute (``"frame-pointer"="non-leaf"``) added to
    defined functions: those named in ``functions``, or all of them.

    A function whose attributes already set the attribute's key keeps its own value (a
    choice of the user's flags is never overridden). Each changed function gets a new
    attribute group, a copy of its own with the attribute added, so functions that
    shared the group and were not named keep theirs. A function without an attribute
    group, and a ``naked`` one, is left as it is.

    Args:
        ir_text: IR as LLVM prints it (one ``define`` per line, groups at the end).
        attribute: ``"key"="value"``.
        functions: Names of the functions to change (None: every defined function).
    """
    key = attribute.split("=", 1)[0]
    lines = ir_text.split("\n")
    groups = {m.group(1): m.group(2) for m in map(_ATTRIBUTE_GROUP_RE.match, lines) if m}
    next_id = max(map(int, groups), default=-1) + 1
    copies: dict[str, str] = {}
    for index, line in enumerate(lines):
        match = DEFINE_RE.match(line)
        if not match or (functions is not None and match.group(1).strip('"') not in functions):
            continue
        references = _GROUP_REF_RE.findall(line[match.end() :])
        if not references or references[-1] not in groups:
            continue
        if f"{key}=" in groups[references[-1]] or "naked" in groups[references[-1]].split():
            continue
        group = references[-1]
        if group not in copies:
            copies[group] = str(next_id)
            next_id += 1
        head, tail = line[: match.end()], line[match.end() :]
        lines[index] = head + re.sub(rf" #{group}\b", f" #{copies[group]}", tail)
    if not copies:
        return ir_text
    added = [f"attributes #{new} = {{ {groups[old]} {attribute} }}" for old, new in copies.items()]
    while lines and lines[-1] == "":
        lines.pop()
    return "\n".join([*lines, *added]) + "\n"


def functions_with_inline_asm(ir_text: str) -> set[str]:
    """Names of the defined functions whose body holds inline assembly (``asm``)."""
    found: set[str] = set()
    current = None
    for line in ir_text.splitlines():
        match = DEFINE_RE.match(line)
        if match:
            current = match.group(1).strip('"')
        elif line == "}":
            current = None
        elif current is not None and " asm " in line:  # call, invoke or callbr of inline asm
            found.add(current)
    return found


def is_position_independent(ir_text: str) -> bool:
    """Whether the module is compiled as position-independent code (``-fPIC``, ``-fPIE``
    or a default PIE): its module flags set a ``PIC Level``."""
    return '!"PIC Level"' in ir_text
