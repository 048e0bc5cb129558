"""Autophase-like features of one LLVM IR module, read from its text.

Autophase (Haj-Ali et al., "AutoPhase: Juggling HLS Phase Orderings in Random Forests
with Deep Reinforcement Learning", MLSys 2020) describes a program to a learned model
by a vector of counts of properties of its IR: instructions of each kind, basic blocks
with one or more predecessors and successors, phi nodes and their incoming values,
constants, calls, memory accesses. A model that ranks candidate pass lists for code
size can condition on such a vector instead of reading the IR.

This is our own version, not Autophase's 56 features. It is computed from the textual
IR (the unoptimized module that clang's ``-Oz`` front end prints with LLVM's passes
disabled, in LLVM 17 to 19 syntax) by string operations and regular expressions over
its lines: pure Python, no process, no LLVM library, a few milliseconds for a module of
2,000 lines. Lines it does not understand are ignored, so odd input gives odd counts,
never an exception. "Function bodies" below are those of the functions *defined* in the
module; declarations count only as declarations.

The groups of :data:`FEATURE_NAMES`, in their order:

* **module** — ``functions_defined``, ``functions_declared`` (declarations other than
  ``llvm.*`` intrinsics), ``intrinsics_declared``, ``functions_internal`` (definitions
  with ``internal`` or ``private`` linkage), ``functions_noinline`` and
  ``functions_alwaysinline`` (the attribute written on the ``define`` line or in one of
  its ``attributes #N`` groups), ``functions_varargs``, ``function_arguments`` (the
  parameters of the definitions), ``global_variables`` (``global`` and ``constant``),
  ``global_constants``, ``struct_types`` (``%T = type`` lines), ``string_constants``
  and ``string_constant_bytes`` (``[N x i8] c"..."`` initializers and their N).
* **size** — ``basic_blocks`` (labels plus each entry block), ``instructions`` (as
  :func:`llm_compiler.toolchain.ir.count_instructions` counts them),
  ``max_function_instructions``, ``max_function_blocks``, ``mean_block_instructions``.
* **opcodes** — ``op_<opcode>`` for each opcode of :data:`OPCODES`, then ``op_other``
  for the rare ones (``callbr`` and the funclet exception-handling instructions).
* **calls** — call sites (``call``, ``invoke``, ``callbr``) by callee:
  ``calls_defined`` (a function defined in the module), ``calls_declared`` (any other
  named function), ``calls_intrinsic`` (``@llvm.*``), ``calls_mem_intrinsic`` (the
  ``llvm.memcpy``/``memmove``/``memset`` ones among them), ``calls_indirect`` (through
  a ``%`` value), ``calls_inline_asm``.
* **control flow** — ``branches_conditional``, ``branches_unconditional``,
  ``switch_cases`` (all cases, defaults not counted), ``phi_incoming`` (incoming
  values of all phis), ``blocks_one_successor``, ``blocks_many_successors``,
  ``blocks_one_predecessor``, ``blocks_many_predecessors`` (distinct blocks, from the
  label operands of the terminators), ``critical_edges`` (from a block with several
  successors to one with several predecessors), ``loops_back_edges`` (edges to a block
  at or before the branching one in the function's text: a loop each in the front
  end's output, where blocks follow the source).
* **memory** — ``loads_pointer``, ``loads_integer``, ``loads_float``, the same three
  for ``stores_``, and ``memory_volatile`` (volatile loads and stores).
* **types** — a rough histogram of the types written in instruction lines:
  ``types_i1`` ... ``types_i64``, ``types_float``, ``types_double``, ``types_pointer``
  (``ptr``), ``types_vector`` (``<N x``), ``types_array`` (``[N x``), ``types_struct``
  (``%struct.``/``%union.``/``%class.`` names and literal ``{`` struct types).
* **constants** — integer literal operands in instruction lines: ``const_int_zero``
  (``0``, ``false``), ``const_int_one`` (``1``, ``true``), ``const_int_other``
  (alignments, array and vector lengths not counted).

The values are raw counts (and one mean) as floats; :func:`log_scaled` compresses them
for a model. Bump :data:`FEATURE_VERSION` whenever a name, the order or the meaning of
a feature changes, so that a model is never fed vectors of another version.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

FEATURE_VERSION: int = 1
"""The version of :data:`FEATURE_NAMES` and their meaning."""

OPCODES: tuple[str, ...] = (
    # terminators
    "ret", "br", "switch", "indirectbr", "invoke", "resume", "unreachable",
    # unary and binary arithmetic
    "fneg", "add", "fadd", "sub", "fsub", "mul", "fmul", "udiv", "sdiv", "fdiv", "urem", "srem", "frem",
    # bitwise
    "shl", "lshr", "ashr", "and", "or", "xor",
    # vector and aggregate
    "extractelement", "insertelement", "shufflevector", "extractvalue", "insertvalue",
    # memory
    "alloca", "load", "store", "fence", "cmpxchg", "atomicrmw", "getelementptr",
    # conversions
    "trunc", "zext", "sext", "fptrunc", "fpext", "fptoui", "fptosi", "uitofp", "sitofp",
    "ptrtoint", "inttoptr", "bitcast", "addrspacecast",
    # other
    "icmp", "fcmp", "phi", "select", "call", "freeze", "va_arg", "landingpad",
)  # fmt: skip
"""The opcodes with a feature ``op_<opcode>`` each, in that order."""

_MODULE_FEATURES = (
    "functions_defined", "functions_declared", "intrinsics_declared", "functions_internal",
    "functions_noinline", "functions_alwaysinline", "functions_varargs", "function_arguments",
    "global_variables", "global_constants", "struct_types", "string_constants", "string_constant_bytes",
)  # fmt: skip
_SIZE_FEATURES = (
    "basic_blocks", "instructions", "max_function_instructions", "max_function_blocks",
    "mean_block_instructions",
)  # fmt: skip
_OPCODE_FEATURES = (*(f"op_{op}" for op in OPCODES), "op_other")
_CALL_FEATURES = (
    "calls_defined", "calls_declared", "calls_intrinsic", "calls_mem_intrinsic", "calls_indirect",
    "calls_inline_asm",
)  # fmt: skip
_CFG_FEATURES = (
    "branches_conditional", "branches_unconditional", "switch_cases", "phi_incoming",
    "blocks_one_successor", "blocks_many_successors", "blocks_one_predecessor",
    "blocks_many_predecessors", "critical_edges", "loops_back_edges",
)  # fmt: skip
_MEMORY_FEATURES = (
    "loads_pointer", "loads_integer", "loads_float", "stores_pointer", "stores_integer", "stores_float",
    "memory_volatile",
)  # fmt: skip
_TYPE_FEATURES = (
    "types_i1", "types_i8", "types_i16", "types_i32", "types_i64", "types_float", "types_double",
    "types_pointer", "types_vector", "types_array", "types_struct",
)  # fmt: skip
_CONSTANT_FEATURES = ("const_int_zero", "const_int_one", "const_int_other")

FEATURE_NAMES: tuple[str, ...] = (
    _MODULE_FEATURES
    + _SIZE_FEATURES
    + _OPCODE_FEATURES
    + _CALL_FEATURES
    + _CFG_FEATURES
    + _MEMORY_FEATURES
    + _TYPE_FEATURES
    + _CONSTANT_FEATURES
)
"""The names of the features, in the order of :func:`ir_features` (see the module docstring)."""

_OP_KEYS = {op: f"op_{op}" for op in OPCODES}
_RARE_OPCODES = frozenset({"callbr", "catchswitch", "catchpad", "cleanuppad", "catchret", "cleanupret"})
_TERMINATORS = frozenset(
    {"ret", "br", "switch", "indirectbr", "invoke", "resume", "unreachable"}
    | {"callbr", "catchswitch", "catchret", "cleanupret"}
)
_CALL_OPCODES = frozenset({"call", "invoke", "callbr"})
_CALL_PREFIXES = frozenset({"tail", "musttail", "notail"})
_MEM_INTRINSICS = ("llvm.memcpy", "llvm.memmove", "llvm.memset")
_FLOAT_TYPES = frozenset({"half", "bfloat", "float", "double", "fp128", "x86_fp80", "ppc_fp128"})
_TYPE_KEYS = {
    "i1": "types_i1",
    "i8": "types_i8",
    "i16": "types_i16",
    "i32": "types_i32",
    "i64": "types_i64",
    "float": "types_float",
    "double": "types_double",
    "ptr": "types_pointer",
}

_NAME = r'(?:"[^"]*"|[-\w$.]+)'
_LABEL_DEF = re.compile(rf"({_NAME}):")
_LABEL_REF = re.compile(rf"\blabel\s+%({_NAME})")
_RESULT = re.compile(rf"%{_NAME}\s*=\s*")
_CALLEE = re.compile(rf'(?<![-\w$."])([@%])({_NAME})\s*\(')
_SYMBOL = re.compile(rf"@({_NAME})\s*\(")
_GLOBAL = re.compile(rf"@{_NAME}\s*=\s*")
_TYPE_DEF = re.compile(rf"%{_NAME}\s*=\s*type\b")
_ATTRIBUTES = re.compile(r"attributes\s+#(\d+)\s*=\s*\{(.*)\}")
_GROUP_REF = re.compile(r"#(\d+)")
_PARENTHESIS = re.compile(r"[()]")
_QUOTED = re.compile(r'"[^"]*"')
_LINKAGE_LOCAL = re.compile(r"\b(?:internal|private)\b")
_NOINLINE = re.compile(r"(?<![-\w])noinline\b")
_ALWAYSINLINE = re.compile(r"(?<![-\w])alwaysinline\b")
_STRING = re.compile(r'\[(\d+) x i8\]\s*c"')
_PHI_INCOMING = re.compile(r",\s*%[^\s,\]]+\s*\]")
_VECTOR = re.compile(r"<(?:vscale x )?(\d+) x ")
_ARRAY = re.compile(r"\[(\d+) x ")
_ALIGN = re.compile(r"\balign (\d+)")
_PUNCTUATION = ",()[]{}<>*"
_STRUCT_PREFIXES = ("%struct.", "%union.", "%class.", '%"struct.', '%"union.', '%"class.')
_INT_TYPE = re.compile(r"i\d+")


def ir_features(ir: str) -> tuple[float, ...]:
    """Computes the feature vector of one module.

    Args:
        ir: The textual IR of the module (any text is accepted; what is not IR is ignored).

    Returns:
        One float per name of :data:`FEATURE_NAMES`, in that order: raw counts (and a mean),
        all zero for an empty text.
    """
    reader = _Reader()
    line = reader.line
    for raw in ir.splitlines():
        line(raw)
    counts = reader.finish()
    return tuple(counts[name] for name in FEATURE_NAMES)


def feature_dict(ir: str) -> dict[str, float]:
    """The features of :func:`ir_features` by name.

    Example:
        >>> features = feature_dict("define i32 @f(i32 %x) {\\n  %y = add i32 %x, 1\\n  ret i32 %y\\n}\\n")
        >>> features["functions_defined"], features["instructions"], features["op_add"]
        (1.0, 2.0, 1.0)
    """
    return dict(zip(FEATURE_NAMES, ir_features(ir), strict=True))


def log_scaled(values: Sequence[float]) -> tuple[float, ...]:
    """``log1p`` of each value, for a model that should see ratios rather than raw counts.

    The features are never negative; a negative value is scaled by its magnitude and keeps
    its sign (so the function is defined everywhere and odd).

    Example:
        >>> log_scaled([0.0, math.e - 1])
        (0.0, 1.0)
    """
    return tuple(math.copysign(math.log1p(abs(value)), value) for value in values)


def _strip_comment(line: str) -> str:
    """The line without its ``;`` comment (one inside a quoted string is kept) and outer blanks."""
    semicolon = line.find(";")
    if semicolon < 0:
        return line.strip()
    quote = line.find('"')
    if quote < 0 or quote > semicolon:
        return line[:semicolon].strip()
    inside = False
    for index, char in enumerate(line):
        if char == '"':
            inside = not inside
        elif char == ";" and not inside:
            return line[:index].strip()
    return line.strip()


def _parameters(text: str, start: int) -> str:
    """The text from ``start`` (just after an opening parenthesis) to its closing one."""
    depth = 0
    for match in _PARENTHESIS.finditer(text, start):
        if match.group() == "(":
            depth += 1
        elif depth == 0:
            return text[start : match.start()]
        else:
            depth -= 1
    return text[start:]


def _split_top_level(text: str) -> list[str]:
    """``text`` split at the commas outside brackets, each piece stripped."""
    if not any(bracket in text for bracket in "([{<"):
        return [piece for piece in (part.strip() for part in text.split(",")) if piece]
    pieces: list[str] = []
    depth = 0
    begin = 0
    for index, char in enumerate(text):
        if char in "([{<":
            depth += 1
        elif char in ")]}>":
            depth = max(depth - 1, 0)
        elif char == "," and depth == 0:
            pieces.append(text[begin:index].strip())
            begin = index + 1
    pieces.append(text[begin:].strip())
    return [piece for piece in pieces if piece]


def _value_kind(rest: str) -> tuple[str | None, bool]:
    """The kind (pointer, integer, float or None) of a load's or store's type, and its volatility."""
    volatile = False
    while True:
        if rest.startswith("volatile "):
            volatile = True
            rest = rest[9:].lstrip()
        elif rest.startswith("atomic "):
            rest = rest[7:].lstrip()
        else:
            break
    end = 0
    while end < len(rest) and rest[end] not in " ,":
        end += 1
    token = rest[:end]
    if token == "ptr" or token.endswith("*"):
        return "pointer", volatile
    if _INT_TYPE.fullmatch(token):
        return "integer", volatile
    if token in _FLOAT_TYPES:
        return "float", volatile
    return None, volatile


class _Function:
    """The blocks of the function body being read: label names and successor labels."""

    def __init__(self) -> None:
        self.names: list[str | None] = [None]
        self.successors: list[list[str]] = [[]]
        self.instructions = 0
        self.terminated = False
        self.in_switch = False

    def new_block(self, name: str | None) -> None:
        """Starts a block (a label before the first instruction names the entry block)."""
        if name is not None and len(self.names) == 1 and self.names[0] is None and self.instructions == 0:
            self.names[0] = name
            return
        self.names.append(name)
        self.successors.append([])
        self.terminated = False


class _Reader:
    """Reads a module line by line and accumulates the counts."""

    def __init__(self) -> None:
        self.counts: dict[str, float] = dict.fromkeys(FEATURE_NAMES, 0.0)
        self.function: _Function | None = None
        self.defined: set[str] = set()
        self.callees: list[str] = []
        self.function_attributes: list[tuple[str, list[str]]] = []
        self.groups: dict[str, str] = {}
        self.body: list[str] = []

    # Lines --------------------------------------------------------------------

    def line(self, raw: str) -> None:
        """Takes one line of the module."""
        text = raw.strip() if ";" not in raw else _strip_comment(raw)
        if not text:
            return
        if self.function is not None:
            if text == "}":
                self._end_function()
                return
            if not text.startswith(("define ", "declare ", "attributes ")):
                self._body_line(self.function, text)
                return
            self._end_function()  # a body without its closing brace
        self._top_line(text)

    def _top_line(self, text: str) -> None:
        counts = self.counts
        if text.startswith("define "):
            self._define(text)
        elif text.startswith("declare "):
            match = _SYMBOL.search(text)
            if match and match.group(1).startswith("llvm."):
                counts["intrinsics_declared"] += 1
            else:
                counts["functions_declared"] += 1
        elif text.startswith("@"):
            self._global(text)
        elif text.startswith("attributes "):
            match = _ATTRIBUTES.match(text)
            if match:
                self.groups[match.group(1)] = _QUOTED.sub("", match.group(2))
        elif text.startswith("%") and _TYPE_DEF.match(text):
            counts["struct_types"] += 1

    def _define(self, text: str) -> None:
        counts = self.counts
        counts["functions_defined"] += 1
        match = _SYMBOL.search(text)
        if match is None:
            head, parameters, tail = text, "", ""
        else:
            self.defined.add(match.group(1))
            head = text[: match.start()]
            parameters = _parameters(text, match.end())
            tail = text[match.end() + len(parameters) + 1 :]
        if _LINKAGE_LOCAL.search(head):
            counts["functions_internal"] += 1
        pieces = _split_top_level(parameters)
        if "..." in pieces:
            counts["functions_varargs"] += 1
        counts["function_arguments"] += sum(1 for piece in pieces if piece != "...")
        tail = _QUOTED.sub("", tail)
        self.function_attributes.append((tail, _GROUP_REF.findall(tail)))
        self.function = _Function()

    def _global(self, text: str) -> None:
        match = _GLOBAL.match(text)
        if match is None:
            return
        rest = text[match.end() :]
        for word in rest.split(None, 8)[:8]:
            if word in ("alias", "ifunc"):
                return
            if word in ("global", "constant"):
                self.counts["global_variables"] += 1
                if word == "constant":
                    self.counts["global_constants"] += 1
                break
        else:
            return
        for size in _STRING.findall(rest):
            self.counts["string_constants"] += 1
            self.counts["string_constant_bytes"] += int(size)

    def _body_line(self, function: _Function, text: str) -> None:
        if function.in_switch:
            self.body.append(text)
            self._switch_cases(function, text)
            return
        if text.endswith(":"):
            match = _LABEL_DEF.fullmatch(text)
            if match:
                function.new_block(match.group(1))
            return
        if text.startswith(("to ", "unwind ")):  # the second line of an invoke or callbr
            function.successors[-1].extend(_LABEL_REF.findall(text))
            return
        body = text
        if text[0] == "%":
            equals = text.find(" = ") if text[1:2] != '"' else -1
            if equals >= 0:
                body = text[equals + 3 :]
            else:
                match = _RESULT.match(text)
                if match is None:
                    return
                body = text[match.end() :]
        op, _, rest = body.partition(" ")
        if op in _CALL_PREFIXES:
            op, _, rest = rest.lstrip().partition(" ")
        key = _OP_KEYS.get(op)
        if key is None:
            if op not in _RARE_OPCODES:
                return  # landingpad clauses, debug records, uselistorder, anything unknown
            key = "op_other"
        if function.terminated:
            function.new_block(None)  # a block without a label after a terminator
        function.instructions += 1
        counts = self.counts
        counts[key] += 1
        self.body.append(text)
        rest = rest.lstrip()
        if op in _CALL_OPCODES:
            self._call(rest)
        elif op in ("load", "store"):
            kind, volatile = _value_kind(rest)
            if kind is not None:
                counts[f"{op}s_{kind}"] += 1
            if volatile:
                counts["memory_volatile"] += 1
        elif op == "phi":
            counts["phi_incoming"] += len(_PHI_INCOMING.findall(rest))
        if op in _TERMINATORS:
            self._terminator(function, op, rest)

    def _call(self, rest: str) -> None:
        counts = self.counts
        if rest.startswith("asm ") or " asm " in rest:
            counts["calls_inline_asm"] += 1
            return
        match = _CALLEE.search(rest)
        if match is None or match.group(1) == "%":
            counts["calls_indirect"] += 1
            return
        name = match.group(2)
        if name.startswith("llvm."):
            counts["calls_intrinsic"] += 1
            if name.startswith(_MEM_INTRINSICS):
                counts["calls_mem_intrinsic"] += 1
        else:
            self.callees.append(name)

    def _terminator(self, function: _Function, op: str, rest: str) -> None:
        function.terminated = True
        successors = function.successors[-1]
        if op == "br":
            successors.extend(_LABEL_REF.findall(rest))
            key = "branches_unconditional" if rest.startswith("label") else "branches_conditional"
            self.counts[key] += 1
        elif op == "switch":
            bracket = rest.find("[")
            if bracket < 0:
                successors.extend(_LABEL_REF.findall(rest))
                return
            successors.extend(_LABEL_REF.findall(rest, 0, bracket))
            self._switch_cases(function, rest[bracket + 1 :])
        else:
            successors.extend(_LABEL_REF.findall(rest))

    def _switch_cases(self, function: _Function, text: str) -> None:
        """Takes (part of) a switch's case list; a ``]`` ends it."""
        cases = _LABEL_REF.findall(text)
        function.successors[-1].extend(cases)
        self.counts["switch_cases"] += len(cases)
        function.in_switch = "]" not in text

    # Functions and module -----------------------------------------------------

    def _end_function(self) -> None:
        function = self.function
        if function is None:
            return
        self.function = None
        counts = self.counts
        blocks = len(function.names)
        counts["basic_blocks"] += blocks
        counts["instructions"] += function.instructions
        counts["max_function_instructions"] = max(
            counts["max_function_instructions"], float(function.instructions)
        )
        counts["max_function_blocks"] = max(counts["max_function_blocks"], float(blocks))
        index = {name: i for i, name in enumerate(function.names) if name is not None}
        predecessors: list[set[int]] = [set() for _ in range(blocks)]
        targets: list[set[int]] = []
        for source, labels in enumerate(function.successors):
            distinct = set(labels)
            if len(distinct) == 1:
                counts["blocks_one_successor"] += 1
            elif len(distinct) > 1:
                counts["blocks_many_successors"] += 1
            resolved = {index[label] for label in distinct if label in index}
            targets.append(resolved)
            for target in resolved:
                predecessors[target].add(source)
                if target <= source:
                    counts["loops_back_edges"] += 1
        for sources in predecessors:
            if len(sources) == 1:
                counts["blocks_one_predecessor"] += 1
            elif len(sources) > 1:
                counts["blocks_many_predecessors"] += 1
        for source, resolved in enumerate(targets):
            if len(set(function.successors[source])) > 1:
                counts["critical_edges"] += sum(1 for target in resolved if len(predecessors[target]) > 1)

    def finish(self) -> dict[str, float]:
        """The counts, once every line is read."""
        self._end_function()
        counts = self.counts
        for name in self.callees:
            counts["calls_defined" if name in self.defined else "calls_declared"] += 1
        for tail, groups in self.function_attributes:
            text = " ".join([tail, *(self.groups.get(group, "") for group in groups)])
            if _NOINLINE.search(text):
                counts["functions_noinline"] += 1
            if _ALWAYSINLINE.search(text):
                counts["functions_alwaysinline"] += 1
        if counts["basic_blocks"]:
            counts["mean_block_instructions"] = counts["instructions"] / counts["basic_blocks"]
        self._operands("\n".join(self.body))
        return counts

    def _operands(self, text: str) -> None:
        """Counts the types and integer literals written in the instruction lines ``text``.

        One pass over the distinct blank-separated tokens (with their brackets and commas
        stripped) instead of a regular expression over the text: several times faster.
        """
        counts = self.counts
        numbers: Counter[str] = Counter()
        for token, number in Counter(text.split()).items():
            if "(" in token:  # "@f(i64", "(ptr", "byval(%struct.S)", "dereferenceable(8)"
                head, _, token = token.rpartition("(")
                if head.isidentifier() and token.rstrip(_PUNCTUATION).lstrip("-").isdigit():
                    continue  # an attribute's argument
            word = token.strip(_PUNCTUATION)
            key = _TYPE_KEYS.get(word)
            if key is not None:
                counts[key] += number
            elif word.startswith(_STRUCT_PREFIXES) or (not word and "{" in token):
                counts["types_struct"] += number
            elif word in ("true", "false") or word.lstrip("-").isdigit():
                numbers[word] += number
        vectors = _VECTOR.findall(text)
        arrays = _ARRAY.findall(text)
        counts["types_vector"] += len(vectors)
        counts["types_array"] += len(arrays)
        numbers.subtract([*vectors, *arrays, *_ALIGN.findall(text)])  # lengths and alignments
        zero = max(numbers["0"] + numbers["-0"] + numbers["false"], 0)
        one = max(numbers["1"] + numbers["true"], 0)
        counts["const_int_zero"] += zero
        counts["const_int_one"] += one
        counts["const_int_other"] += max(sum(numbers.values()) - zero - one, 0)
