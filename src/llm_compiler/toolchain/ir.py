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
