"""CompilerGym's ``InstCount`` and ``Autophase`` observations, read from textual IR.

CompilerGym's LLVM environments describe a module by two integer vectors, computed in C++
by visitors over LLVM 10's in-memory IR. This module computes the same vectors, with the
same names, order and definitions, from the module's text (as ``clang -S -emit-llvm`` or
``opt -S`` of LLVM 17 to 22 print it): pure Python, no process, no LLVM library, a few
milliseconds for a module of 2,000 lines. Lines it does not understand are ignored, so odd
input gives odd counts, never an exception. An agent written against CompilerGym's
``observation_space="InstCount"`` or ``"Autophase"`` reads these vectors unchanged.

**InstCount** (:func:`inst_count`, 70 integers named by :data:`INST_COUNT_NAMES`, the names
of CompilerGym's ``compiler_gym/third_party/llvm/instcount.py``): ``TotalInsts``,
``TotalBlocks``, ``TotalFuncs``, then the number of instructions of each of the 67 opcodes
of LLVM 10's ``Instruction.def``, in that file's order (``Ret``, ``Br``, ... ``Freeze``).
CompilerGym's ``InstCountDict`` keys are these names with ``Count`` appended.

**Autophase** (:func:`autophase`, 56 integers named by :data:`AUTOPHASE_NAMES`, the order of
``compiler_gym/third_party/autophase/InstCount.cc``): per basic block, the number with one,
two or more predecessors and successors and their combinations, phi nodes (``BeginPhi``: a
phi is the block's first instruction; ``BB03Phi``/``BBHiPhi``/``BBNoPhi``: blocks with 1-3,
more than 3, no phis; ``BBNumArgsHi``/``BBNumArgsLo``: blocks whose phis have more than 5,
or 1 to 5, incoming values in all; ``ArgsPhi``: incoming values of all phis), ``BlockLow``
and ``BlockMid`` (blocks of fewer than 15, of 15 to 500 instructions); over all edges,
``NumEdges`` (successor slots of the terminators, a repeated target counted each time) and
``CriticalCount`` (edges from a terminator with several successors to a block with several
predecessor edges); per instruction, ``BranchCount`` and ``UncondBranches`` (``br``),
``returnInt`` (``call`` of a function, by name, that returns an integer), ``binaryConstArg``
(binary operators with a constant operand: a literal, ``undef``, ``poison``, ``null``, a
global or a constant expression), ``testUnary`` (unary instructions: ``fneg``, casts,
``alloca``, ``load``, ``va_arg``, ``extractvalue``; not ``freeze``, which LLVM 10's
``isa<UnaryInstruction>`` does not recognise, though LLVM 22's does), ``TotalMemInst``
(``getelementptr``, ``load``, ``store``, ``call``, ``invoke`` and ``alloca``); over the
operands of all instructions, integer constants: ``const32Bit`` and ``const64Bit`` (of
types ``i32`` and ``i64``), ``numConstOnes`` and ``numConstZeroes`` (of value 1 and 0, any
width, ``true`` and ``false`` included); then 25 opcode counts, ``TotalBlocks``,
``TotalInsts`` and ``TotalFuncs``, as in InstCount.

Where it follows CompilerGym exactly:

* ``TotalFuncs`` counts *every* function of the module, declarations (intrinsics included)
  as well as definitions: CompilerGym runs its visitor on each function of the module
  directly, and the visitor counts a function before it walks its (possibly empty) body.
  Its test on ``cbench-v1/crc32`` expects 15 functions beside 5 ``ret``. LLVM's own
  ``instcount`` pass, run by ``opt``, skips declarations instead. Blocks and instructions
  are those of the definitions.
* An ``alloca`` without an explicit element count has the operand ``i32 1`` in memory, so
  it adds one to ``const32Bit`` and ``numConstOnes``. Operands are those of the instruction
  itself: the integers inside a constant expression, a vector or aggregate constant, the
  indices of ``extractvalue``/``insertvalue`` and the ``metadata`` arguments of debug
  intrinsics are not integer constant operands; the case values of a ``switch`` and the
  constant incoming values of a phi are.
* Predecessors are counted per edge (a block reached by both arms of one ``br`` has two),
  like LLVM's ``pred_iterator``; ``blockaddress`` uses are not edges.

Where textual IR of LLVM 17-22 differs from LLVM 10's:

* The opcodes are LLVM 10's. The one added since, ``ptrtoaddr`` (LLVM 22), is counted as
  ``PtrToInt``, the cast it refines, so the opcode counts still sum to ``TotalInsts``.
  ``UserOp1`` and ``UserOp2`` (pass-internal) are always 0.
* Debug records (``#dbg_value(...)``, LLVM 19 onward) are not instructions; LLVM 10's
  ``call @llvm.dbg.*`` were ``Call`` instructions. IR printed with debug intrinsics still
  counts them as calls.
* With opaque pointers (LLVM 15 onward) front ends emit no pointer ``bitcast`` and fewer
  ``getelementptr`` constant expressions, so the same source gives other counts than under
  LLVM 10; the definitions are unchanged.
* ``returnInt`` counts a ``call`` whose callee is a function named directly (not an alias,
  not a pointer, not inline assembly) and whose return type, written on the call, is an
  integer type and the one on the callee's ``define`` or ``declare`` line: LLVM finds no
  called function when the call's type differs from its callee's (LLVM 10 wrote such a
  call through a ``bitcast``). Only the return types are compared, not the parameters.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from llm_compiler.predictor.features import (
    _LABEL_DEF,
    _LABEL_REF,
    _PHI_INCOMING,
    _QUOTED,
    _split_top_level,
    _strip_comment,
)

_OPCODES: tuple[tuple[str, str], ...] = (
    ("ret", "Ret"), ("br", "Br"), ("switch", "Switch"), ("indirectbr", "IndirectBr"),
    ("invoke", "Invoke"), ("resume", "Resume"), ("unreachable", "Unreachable"),
    ("cleanupret", "CleanupRet"), ("catchret", "CatchRet"), ("catchswitch", "CatchSwitch"),
    ("callbr", "CallBr"), ("fneg", "FNeg"), ("add", "Add"), ("fadd", "FAdd"), ("sub", "Sub"),
    ("fsub", "FSub"), ("mul", "Mul"), ("fmul", "FMul"), ("udiv", "UDiv"), ("sdiv", "SDiv"),
    ("fdiv", "FDiv"), ("urem", "URem"), ("srem", "SRem"), ("frem", "FRem"), ("shl", "Shl"),
    ("lshr", "LShr"), ("ashr", "AShr"), ("and", "And"), ("or", "Or"), ("xor", "Xor"),
    ("alloca", "Alloca"), ("load", "Load"), ("store", "Store"), ("getelementptr", "GetElementPtr"),
    ("fence", "Fence"), ("cmpxchg", "AtomicCmpXchg"), ("atomicrmw", "AtomicRMW"),
    ("trunc", "Trunc"), ("zext", "ZExt"), ("sext", "SExt"), ("fptoui", "FPToUI"),
    ("fptosi", "FPToSI"), ("uitofp", "UIToFP"), ("sitofp", "SIToFP"), ("fptrunc", "FPTrunc"),
    ("fpext", "FPExt"), ("ptrtoint", "PtrToInt"), ("inttoptr", "IntToPtr"), ("bitcast", "BitCast"),
    ("addrspacecast", "AddrSpaceCast"), ("cleanuppad", "CleanupPad"), ("catchpad", "CatchPad"),
    ("icmp", "ICmp"), ("fcmp", "FCmp"), ("phi", "PHI"), ("call", "Call"), ("select", "Select"),
    ("", "UserOp1"), ("", "UserOp2"), ("va_arg", "VAArg"), ("extractelement", "ExtractElement"),
    ("insertelement", "InsertElement"), ("shufflevector", "ShuffleVector"),
    ("extractvalue", "ExtractValue"), ("insertvalue", "InsertValue"), ("landingpad", "LandingPad"),
    ("freeze", "Freeze"),
)  # fmt: skip
"""LLVM 10's opcodes in ``Instruction.def`` order: (textual opcode, ``Instruction.def`` name)."""

INST_COUNT_NAMES: tuple[str, ...] = (
    "TotalInsts",
    "TotalBlocks",
    "TotalFuncs",
    *(name for _, name in _OPCODES),
)
"""The names of :func:`inst_count`'s 70 features, in order (CompilerGym's)."""

AUTOPHASE_NAMES: tuple[str, ...] = (
    "BBNumArgsHi", "BBNumArgsLo", "onePred", "onePredOneSuc", "onePredTwoSuc", "oneSuccessor",
    "twoPred", "twoPredOneSuc", "twoEach", "twoSuccessor", "morePreds", "BB03Phi", "BBHiPhi",
    "BBNoPhi", "BeginPhi", "BranchCount", "returnInt", "CriticalCount", "NumEdges", "const32Bit",
    "const64Bit", "numConstZeroes", "numConstOnes", "UncondBranches", "binaryConstArg",
    "NumAShrInst", "NumAddInst", "NumAllocaInst", "NumAndInst", "BlockMid", "BlockLow",
    "NumBitCastInst", "NumBrInst", "NumCallInst", "NumGetElementPtrInst", "NumICmpInst",
    "NumLShrInst", "NumLoadInst", "NumMulInst", "NumOrInst", "NumPHIInst", "NumRetInst",
    "NumSExtInst", "NumSelectInst", "NumShlInst", "NumStoreInst", "NumSubInst", "NumTruncInst",
    "NumXorInst", "NumZExtInst", "TotalBlocks", "TotalInsts", "TotalMemInst", "TotalFuncs",
    "ArgsPhi", "testUnary",
)  # fmt: skip
"""The names of :func:`autophase`'s 56 features, in order (CompilerGym's)."""

_OPCODE_INDEX: dict[str, int] = {op: index for index, (op, _) in enumerate(_OPCODES) if op}
_OPCODE_INDEX["ptrtoaddr"] = _OPCODE_INDEX["ptrtoint"]
_NAME_INDEX = {name: index for index, (_, name) in enumerate(_OPCODES)}
_TERMINATORS = frozenset(
    {"ret", "br", "switch", "indirectbr", "invoke", "resume", "unreachable"}
    | {"cleanupret", "catchret", "catchswitch", "callbr"}
)
_BINARY = frozenset(
    {"add", "fadd", "sub", "fsub", "mul", "fmul", "udiv", "sdiv", "fdiv", "urem", "srem", "frem"}
    | {"shl", "lshr", "ashr", "and", "or", "xor"}
)
_UNARY = frozenset(  # LLVM 10's UnaryInstruction::classof: freeze is not among them
    {"fneg", "alloca", "load", "va_arg", "extractvalue", "trunc", "zext", "sext"}
    | {"fptoui", "fptosi", "uitofp", "sitofp", "fptrunc", "fpext", "ptrtoint", "ptrtoaddr"}
    | {"inttoptr", "bitcast", "addrspacecast"}
)
_MEMORY = frozenset({"getelementptr", "load", "store", "call", "invoke", "alloca"})
_CALLS = frozenset({"call", "invoke", "callbr"})
_CALL_PREFIXES = frozenset({"tail", "musttail", "notail"})
_FLAGS = frozenset(
    {"nuw", "nsw", "exact", "disjoint", "samesign", "fast", "nnan", "ninf", "nsz", "arcp"}
    | {"contract", "afn", "reassoc", "eq", "ne", "ugt", "uge", "ult", "ule", "sgt", "sge", "slt", "sle"}
)
_PARAMETER_ATTRIBUTES = r"(?:(?:noundef|signext|zeroext|inreg|immarg|returned)\s+)*"
_TYPED_INT = re.compile(
    rf"(?<![-\w$.%@\"])(?<!metadata )i(\d+)\s+{_PARAMETER_ATTRIBUTES}(-?\d+|true|false)\b"
)
_INT_LITERAL = re.compile(r"-?\d+|true|false")
_INT_TYPE = re.compile(r"i(\d+)")
_PHI_VALUE = re.compile(r"\[\s*([^,\[\]\s]+)\s*,\s*%")
_GROUP = re.compile(r"[()\[\]{}<>]")
_FUNCTION_NAME = re.compile(r'@("[^"]*"|[-\w$.]+)\s*\(')
_CALLEE = re.compile(r'@("[^"]*"|[-\w$.]+)\s*$')
_ALIAS = re.compile(r'@("[^"]*"|[-\w$.]+)\s*=.*\b(?:alias|ifunc)\b')


def inst_count(ir: str) -> tuple[int, ...]:
    """CompilerGym's ``InstCount`` observation of a module.

    Args:
        ir: The textual IR of the module (any text is accepted; what is not IR is ignored).

    Returns:
        70 counts, named by :data:`INST_COUNT_NAMES`: ``TotalInsts``, ``TotalBlocks``,
        ``TotalFuncs`` (declarations included), then one count per opcode.

    Example:
        >>> counts = dict(zip(INST_COUNT_NAMES, inst_count("define i32 @f(i32 %x) {\\n  ret i32 %x\\n}\\n")))
        >>> counts["TotalInsts"], counts["TotalBlocks"], counts["TotalFuncs"], counts["Ret"]
        (1, 1, 1, 1)
    """
    reader = _Reader(detailed=False)
    reader.read(ir.splitlines())
    return (reader.instructions, reader.blocks, reader.functions, *reader.opcodes)


def autophase(ir: str) -> tuple[int, ...]:
    """CompilerGym's ``Autophase`` observation of a module.

    Args:
        ir: The textual IR of the module (any text is accepted; what is not IR is ignored).

    Returns:
        56 counts, named by :data:`AUTOPHASE_NAMES` (see the module docstring).

    Example:
        >>> ir = "define i32 @f(i32 %x) {\\n  %y = add i32 %x, 1\\n  ret i32 %y\\n}\\n"
        >>> features = dict(zip(AUTOPHASE_NAMES, autophase(ir)))
        >>> features["binaryConstArg"], features["numConstOnes"], features["const32Bit"]
        (1, 1, 1)
    """
    reader = _Reader(detailed=True)
    reader.read(ir.splitlines())
    counts = reader.counts
    opcodes = reader.opcodes
    for name in AUTOPHASE_NAMES:
        if name.startswith("Num") and name.endswith("Inst"):
            counts[name] = opcodes[_NAME_INDEX[name[3:-4]]]
    counts["TotalBlocks"] = reader.blocks
    counts["TotalInsts"] = reader.instructions
    counts["TotalFuncs"] = reader.functions
    return tuple(counts[name] for name in AUTOPHASE_NAMES)


class _Block:
    """One basic block of the function being read."""

    __slots__ = ("instructions", "name", "phi_args", "phis", "successors", "terminated")

    def __init__(self, name: str | None) -> None:
        self.name = name
        self.instructions = 0
        self.phis = 0
        self.phi_args = 0
        self.successors: list[str] = []
        self.terminated = False


class _Reader:
    """Reads a module line by line and accumulates the counts of both vectors.

    Args:
        detailed: Whether to compute the Autophase counts besides the InstCount ones.
    """

    def __init__(self, detailed: bool) -> None:
        self.detailed = detailed
        self.functions = 0
        self.blocks = 0
        self.instructions = 0
        self.opcodes = [0] * len(_OPCODES)
        self.counts: dict[str, int] = dict.fromkeys(AUTOPHASE_NAMES, 0)
        self.body: list[_Block] | None = None
        self.in_switch = False
        self.aliases: set[str] = set()
        self.return_types: dict[str, str] = {}
        self.int_calls: list[tuple[str, str]] = []

    def read(self, lines: Iterable[str]) -> None:
        """Takes the lines of the module, then closes the last function."""
        for raw in lines:
            text = raw.strip() if ";" not in raw else _strip_comment(raw)
            if not text:
                continue
            if self.body is not None:
                if text == "}":
                    self._end_function()
                    continue
                if not text.startswith(("define ", "declare ")):
                    self._body_line(self.body, text)
                    continue
                self._end_function()  # a body without its closing brace
            if text.startswith(("define ", "declare ")):
                self.functions += 1
                if text.startswith("define "):
                    self.body = []
                match = _FUNCTION_NAME.search(text)
                if match:
                    self.return_types[match.group(1)] = _last_type(text[: match.start()])
            elif text.startswith("@") and ("alias" in text or "ifunc" in text):
                match = _ALIAS.match(text)
                if match:
                    self.aliases.add(match.group(1))
        self._end_function()
        return_types = self.return_types
        self.counts["returnInt"] = sum(
            1
            for callee, kind in self.int_calls
            if callee not in self.aliases and return_types.get(callee, kind) == kind
        )

    def _body_line(self, body: list[_Block], text: str) -> None:
        if self.in_switch:
            if body:
                body[-1].successors.extend(_LABEL_REF.findall(text))
                if self.detailed:
                    self._typed_ints(text)
            self.in_switch = "]" not in text
            return
        if text.endswith(":"):
            match = _LABEL_DEF.fullmatch(text)
            if match:
                body.append(_Block(match.group(1)))
            return
        if text.startswith(("to ", "unwind ")):  # the second line of an invoke or callbr
            if body:
                body[-1].successors.extend(_LABEL_REF.findall(text))
            return
        rest = text
        if text[0] == "%":
            equals = text.find("= ")
            if equals < 0:
                return
            rest = text[equals + 2 :].lstrip()
        op, _, rest = rest.partition(" ")
        if op in _CALL_PREFIXES:
            op, _, rest = rest.lstrip().partition(" ")
        op = op.rstrip(",")  # "unreachable, !dbg !7
        index = _OPCODE_INDEX.get(op)
        if index is None:
            return  # landingpad clauses, debug records, uselistorder, anything unknown
        if not body or body[-1].terminated:
            body.append(_Block(None))
        block = body[-1]
        self.opcodes[index] += 1
        rest = rest.lstrip()
        if op in _TERMINATORS:
            block.terminated = True
            if op == "switch":
                bracket = rest.find("[")
                self.in_switch = bracket >= 0 and "]" not in rest[bracket:]
            block.successors.extend(_LABEL_REF.findall(rest))
        if self.detailed:
            self._instruction(block, op, rest)
        block.instructions += 1

    def _instruction(self, block: _Block, op: str, rest: str) -> None:
        """Counts the per-instruction Autophase features of one instruction."""
        counts = self.counts
        if op == "br":
            counts["BranchCount"] += 1
            if rest.startswith("label"):
                counts["UncondBranches"] += 1
        if op in _UNARY:
            counts["testUnary"] += 1
        if op in _MEMORY:
            counts["TotalMemInst"] += 1
        if op == "phi":
            if block.instructions == 0:
                counts["BeginPhi"] += 1
            incoming = len(_PHI_INCOMING.findall(rest))
            block.phis += 1
            block.phi_args += incoming
            counts["ArgsPhi"] += incoming
            words = rest.split(None, 8)
            kind = next((word for word in words if word not in _FLAGS), "")
            match = _INT_TYPE.fullmatch(kind)
            if match:
                bits = int(match.group(1))
                for value in _PHI_VALUE.findall(rest):
                    if _INT_LITERAL.fullmatch(value):
                        self._constant(bits, value)
            return
        if op in _BINARY or op == "icmp":
            self._binary(op, rest)
            return
        text, head = _operand_text(op, rest)
        self._typed_ints(text)
        if op == "alloca":
            pieces = _split_top_level(rest)
            if len(pieces) < 2 or pieces[1].startswith(("align", "addrspace", "!")):
                self._constant(32, "1")  # the implicit element count ``i32 1``
        elif op == "call" and head is not None:
            match = _CALLEE.search(head)
            if match:
                kind = _last_type(head[: match.start()])
                if _INT_TYPE.fullmatch(kind):
                    self.int_calls.append((match.group(1), kind))

    def _binary(self, op: str, rest: str) -> None:
        """Counts the constant operands of a binary operator or an ``icmp``."""
        words = rest.split(" ")
        start = 0
        while start < len(words) and words[start] in _FLAGS:
            start += 1
        rest = " ".join(words[start:])
        if rest.startswith("<"):
            close = rest.find(">")
            kind, operands = rest[: close + 1], rest[close + 1 :]
        else:
            kind, _, operands = rest.partition(" ")
        values = _split_top_level(operands)[:2]
        if op != "icmp" and any(not value.startswith("%") for value in values):
            self.counts["binaryConstArg"] += 1
        match = _INT_TYPE.fullmatch(kind)
        if match:
            bits = int(match.group(1))
            for value in values:
                if _INT_LITERAL.fullmatch(value):
                    self._constant(bits, value)

    def _typed_ints(self, text: str) -> None:
        for bits, value in _TYPED_INT.findall(text):
            self._constant(int(bits), value)

    def _constant(self, bits: int, literal: str) -> None:
        """Counts one integer constant operand of type ``i<bits>``."""
        counts = self.counts
        if bits == 32:
            counts["const32Bit"] += 1
        elif bits == 64:
            counts["const64Bit"] += 1
        value = 1 if literal == "true" else 0 if literal == "false" else int(literal)
        if 0 < bits <= 128:
            value %= 1 << bits  # the two's complement bits, as LLVM compares them
        if value == 1:
            counts["numConstOnes"] += 1
        elif value == 0:
            counts["numConstZeroes"] += 1

    def _end_function(self) -> None:
        body = self.body
        if body is None:
            return
        self.body = None
        self.in_switch = False
        self.blocks += len(body)
        self.instructions += sum(block.instructions for block in body)
        if self.detailed:
            self._blocks(body)

    def _blocks(self, body: list[_Block]) -> None:
        """Counts the per-block Autophase features of one function."""
        counts = self.counts
        index = {block.name: position for position, block in enumerate(body) if block.name is not None}
        predecessors = [0] * len(body)
        for block in body:
            for label in block.successors:
                target = index.get(label)
                if target is not None:
                    predecessors[target] += 1
        for block, preds in zip(body, predecessors, strict=True):
            succs = len(block.successors)
            counts["NumEdges"] += succs
            if succs > 1:
                for label in block.successors:
                    target = index.get(label)
                    if target is not None and predecessors[target] > 1:
                        counts["CriticalCount"] += 1
            if succs == 1:
                counts["oneSuccessor"] += 1
            elif succs == 2:
                counts["twoSuccessor"] += 1
            if preds == 1:
                counts["onePred"] += 1
            elif preds == 2:
                counts["twoPred"] += 1
            elif preds > 2:
                counts["morePreds"] += 1
            if preds == 1 and succs == 1:
                counts["onePredOneSuc"] += 1
            elif preds == 2 and succs == 1:
                counts["twoPredOneSuc"] += 1
            elif preds == 1 and succs == 2:
                counts["onePredTwoSuc"] += 1
            elif preds == 2 and succs == 2:
                counts["twoEach"] += 1
            if block.phis == 0:
                counts["BBNoPhi"] += 1
            elif block.phis <= 3:
                counts["BB03Phi"] += 1
            else:
                counts["BBHiPhi"] += 1
            if block.phi_args > 5:
                counts["BBNumArgsHi"] += 1
            elif block.phi_args >= 1:
                counts["BBNumArgsLo"] += 1
            if block.instructions < 15:
                counts["BlockLow"] += 1
            elif block.instructions <= 500:
                counts["BlockMid"] += 1


def _operand_text(op: str, rest: str) -> tuple[str, str | None]:
    """The text of an instruction's own operands, and the text of a call up to its arguments.

    Args:
        op: The opcode.
        rest: The instruction after its opcode.

    Returns:
        ``rest`` with each bracketed group that holds no operand of the instruction (a type,
        a constant expression, a vector or aggregate constant, an attribute's argument)
        replaced by ``?``, keeping the contents of a call's argument list and of the
        brackets of a ``phi`` or ``switch``; for a call, the text before its argument list
        (else None).
    """
    text = rest
    if '"' in rest:  # blanked out, keeping the positions
        rest = _QUOTED.sub(lambda match: '"' + "_" * (len(match.group()) - 2) + '"', rest)
    if not _GROUP.search(rest):
        return rest, None
    pieces: list[str] = []
    head: str | None = None
    depth = 0
    position = 0
    keep = False
    for match in _GROUP.finditer(rest):
        char = match.group()
        at = match.start()
        if char in "([{<":
            if depth == 0:
                pieces.append(rest[position:at])
                pieces.append(" ")
                keep = (char == "[" and op in ("phi", "switch")) or (
                    char == "(" and op in _CALLS and head is None and _follows_callee(rest, at)
                )
                if keep and char == "(":
                    head = text[:at]
                position = at + 1
            elif depth == 1 and keep:
                pieces.append(rest[position:at])
                pieces.append(" ")
            depth += 1
        elif depth > 0:
            depth -= 1
            if depth == 0:
                if keep:
                    pieces.append(rest[position:at])
                pieces.append(" ? ")
                position = at + 1
                keep = False
            elif depth == 1 and keep:
                pieces.append(" ? ")
                position = at + 1
    if depth == 0 or (depth == 1 and keep):
        pieces.append(rest[position:])
    return "".join(pieces), head


def _follows_callee(text: str, at: int) -> bool:
    """Whether the ``(`` at ``at`` opens a call's argument list (it follows the callee)."""
    space = text.rfind(" ", 0, at)
    token = text[space + 1 : at]
    return token[:1] in ("@", "%", '"')


def _last_type(text: str) -> str:
    """The last type in ``text``, the head of a call or function up to its name: a return type.

    A varargs call's function type (``i32 (ptr, ...)``) is skipped for its return type.
    """
    text = text.rstrip()
    if text.endswith(")"):
        depth = 0
        for position in range(len(text) - 1, -1, -1):
            if text[position] == ")":
                depth += 1
            elif text[position] == "(":
                depth -= 1
                if depth == 0:
                    text = text[:position].rstrip()
                    break
    return text[text.rfind(" ") + 1 :]
