"""The two ways a :class:`~llm_compiler.core.compiler.Compiler` runs LLVM, behind one interface.

An engine takes a program and a pipeline and returns a
:class:`~llm_compiler.core.program.CompileResult`: the measurement, plus the optimized
IR, the assembly and the object file when they are asked for, all from one compile.

* :class:`SubprocessEngine` runs ``opt`` and ``llc`` as processes.
* :class:`InProcessEngine` runs LLVM through its C API in crash-isolated workers
  (:mod:`llm_compiler.toolchain.worker_pool`) and saves the processes' start-up; it also
  keeps states after pipeline prefixes for stepwise searches.
* :class:`ZygoteEngine` sends each compile to a child forked from a zygote that loaded
  LLVM once (:mod:`llm_compiler.toolchain.zygote`): the start-up saved, and every
  compile starts from the same state as a fresh process does.

All give the same objects, sizes, IR text and assembly (the tests compare them byte
for byte). :class:`Engine` names them; ``auto`` picks the in-process engine when the
LLVM library loads.
"""

from __future__ import annotations

import enum
import os
import re
from collections.abc import Collection, Sequence
from typing import Protocol

from llm_compiler.core.program import CompileResult, IRCount, Measurement, Program
from llm_compiler.errors import InvalidInput, ToolchainError
from llm_compiler.toolchain.elf import berkeley_size
from llm_compiler.toolchain.inprocess import Evaluation, ir_hash
from llm_compiler.toolchain.ir import count_instructions
from llm_compiler.toolchain.llvm import Toolchain
from llm_compiler.toolchain.runner import fixed_layout, run_command
from llm_compiler.toolchain.worker_pool import WorkerPool
from llm_compiler.toolchain.zygote import ENVIRONMENT as ZYGOTE_ENVIRONMENT
from llm_compiler.toolchain.zygote import Zygote, ZygoteGone, find

#: What a compile can return besides its measurement.
OUTPUTS = frozenset({"ir", "asm", "obj"})

#: An LLVM option as ``clang -mllvm`` passes it: ``-name`` or ``-name=value``.
_LLVM_OPTION = re.compile(r"--?([A-Za-z][\w.-]*)(=[^\0]*)?")
#: Options of ``opt`` and ``llc`` themselves (their input, output, pipeline, level,
#: plugins): not LLVM options a build may set.
_TOOL_OPTIONS = frozenset(
    {"o", "S", "f", "p", "x", "passes", "load", "load-pass-plugin", "filetype", "disable-output",
     "help", "help-hidden", "help-list", "version", "mtriple", "march", "O", "O0", "O1", "O2", "O3",
     "Os", "Oz", "Og"}
)  # fmt: skip


def check_llvm_options(options: Sequence[str]) -> tuple[str, ...]:
    """``options`` checked as LLVM options (what ``clang -mllvm X`` gives LLVM), for
    ``opt`` and ``llc`` to take beside their own arguments.

    Raises:
        InvalidInput: An option is not of the form ``-name`` or ``-name=value``, or is
            one of opt's or llc's own (input, output, pipeline, level, plugin).

    Example:
        >>> check_llvm_options(["-inline-threshold=10"])
        ('-inline-threshold=10',)
    """
    for option in options:
        found = _LLVM_OPTION.fullmatch(option)
        if found is None or found.group(1) in _TOOL_OPTIONS:
            raise InvalidInput(
                f"{option!r} is not an LLVM option opt and llc can be given: -mllvm takes "
                "-name or -name=value, other than their input, output, pipeline and -O options."
            )
    return tuple(options)


class Engine(enum.StrEnum):
    """Which engine a compiler uses (``auto`` resolves to ``inprocess`` or ``subprocess``;
    ``zygote`` is only used when asked for)."""

    AUTO = "auto"
    INPROCESS = "inprocess"
    SUBPROCESS = "subprocess"
    ZYGOTE = "zygote"

    @classmethod
    def parse(cls, value: str | Engine) -> Engine:
        """The engine named ``value``.

        Raises:
            InvalidInput: No engine has that name.
        """
        try:
            return cls(value)
        except ValueError:
            names = ", ".join(engine.value for engine in cls)
            raise InvalidInput(f"Unknown engine {value!r}; choose one of {names}.") from None


class CompileEngine(Protocol):
    """Compiles programs with pipelines; one implementation per :class:`Engine`."""

    kind: Engine

    def compile(
        self, program: Program, pipeline: str | None, outputs: Collection[str], replay: list[str]
    ) -> CompileResult:
        """Applies ``pipeline`` (None: none) and lowers the result; returns ``outputs`` too."""
        ...

    def compile_stepwise(
        self,
        program: Program,
        elements: tuple[str, ...],
        use_cache: bool,
        replay: list[str],
        want_ir: bool = False,
    ) -> CompileResult:
        """The same, running top-level elements one at a time (prefix states reused)."""
        ...

    def count_stepwise(
        self,
        program: Program,
        elements: tuple[str, ...],
        use_cache: bool,
        replay: list[str],
        want_ir: bool = False,
    ) -> tuple[IRCount, str | None]:
        """Counts the IR after the elements run one at a time (no code generated);
        returns the optimized IR text too when ``want_ir``."""
        ...

    def count(self, program: Program, pipeline: str | None, replay: list[str]) -> IRCount:
        """Applies ``pipeline`` (None: none) and counts the optimized IR; no code generation."""
        ...

    def lower_ir(self, ir: str, pipeline: str | None, name: str, replay: list[str]) -> Measurement:
        """Measures already optimized IR text."""
        ...

    def close(self) -> None:
        """Releases what the engine holds (workers)."""
        ...


def subject(program: Program, pipeline: str | None) -> str:
    """What errors name: the program, and the pipeline when there is one."""
    return f"{program.name} with -passes='{pipeline}'" if pipeline else program.name


def run_llc(
    toolchain: Toolchain,
    ir: str,
    filetype: str,
    *,
    timeout: float,
    name: str,
    llvm_options: Sequence[str] = (),
) -> bytes:
    """``llc -filetype=obj|asm`` on IR text, as a process; returns what it writes.
    ``llvm_options`` come first (checked by :func:`check_llvm_options`)."""
    if filetype not in ("obj", "asm"):
        raise ValueError(f"filetype must be 'obj' or 'asm', not {filetype!r}")
    options = check_llvm_options(llvm_options)
    result = run_command(
        fixed_layout([toolchain.tool("llc"), *options, f"-filetype={filetype}", "-o", "-", "-"]),
        timeout=timeout,
        input=ir.encode(),
        subject=name,
    )
    return result.stdout


def counted(ir: str, elements: tuple[str, ...], version: str, want_ir: bool) -> tuple[IRCount, str | None]:
    """The count of ``ir`` (reached by ``elements``), and the text when ``want_ir``."""
    return IRCount(",".join(elements) or None, count_instructions(ir), version, ir_hash(ir)), (
        ir if want_ir else None
    )


class SubprocessEngine:
    """Runs ``opt -passes=P -S`` and ``llc -filetype=obj|asm`` as processes, each given
    ``llvm_options`` (:func:`check_llvm_options`) as ``clang -mllvm`` gives them."""

    kind = Engine.SUBPROCESS

    def __init__(self, toolchain: Toolchain, timeout: float, llvm_options: Sequence[str] = ()) -> None:
        self.toolchain = toolchain
        self.timeout = timeout
        self.llvm_options = check_llvm_options(llvm_options)

    def _llc(self, ir: str, filetype: str, name: str) -> bytes:
        options = self.llvm_options
        return run_llc(self.toolchain, ir, filetype, timeout=self.timeout, name=name, llvm_options=options)

    def _measure(self, ir: str, obj: bytes, pipeline: str | None) -> Measurement:
        size = berkeley_size(obj)
        return Measurement(
            pipeline=pipeline,
            binary_size=size.binary_size,
            text=size.text,
            data=size.data,
            ir_instructions=count_instructions(ir),
            llvm_version=self.toolchain.version,
            ir_hash=ir_hash(ir),
        )

    def compile(
        self, program: Program, pipeline: str | None, outputs: Collection[str], replay: list[str]
    ) -> CompileResult:
        ir = self._optimized(program, pipeline)
        obj = self._llc(ir, "obj", program.name)
        assembly = None
        if "asm" in outputs:
            assembly = self._llc(ir, "asm", program.name).decode("utf-8", errors="replace")
        return CompileResult(
            self._measure(ir, obj, pipeline),
            ir=ir if "ir" in outputs else None,
            assembly=assembly,
            obj=obj if "obj" in outputs else None,
        )

    def _optimized(self, program: Program, pipeline: str | None) -> str:
        if pipeline is None:
            return program.ir
        return self._opt(program.ir, pipeline, subject(program, pipeline))

    def _opt(self, ir: str, pipeline: str, name: str) -> str:
        return run_command(
            fixed_layout(
                [self.toolchain.tool("opt"), *self.llvm_options, f"-passes={pipeline}", "-S", "-o", "-", "-"]
            ),
            timeout=self.timeout,
            input=ir.encode(),
            subject=name,
        ).stdout_text

    def stepwise_ir(self, program: Program, elements: tuple[str, ...]) -> str:
        """The IR after ``elements``, one ``opt`` run each (what prefix states give)."""
        ir = program.ir
        for index, element in enumerate(elements):
            ir = self._opt(ir, element, subject(program, ",".join(elements[: index + 1])))
        return ir

    def count(self, program: Program, pipeline: str | None, replay: list[str]) -> IRCount:
        ir = self._optimized(program, pipeline)
        return IRCount(pipeline, count_instructions(ir), self.toolchain.version, ir_hash(ir))

    def compile_stepwise(
        self,
        program: Program,
        elements: tuple[str, ...],
        use_cache: bool,
        replay: list[str],
        want_ir: bool = False,
    ) -> CompileResult:
        # One opt run per element, as the in-process engine's prefix states run them.
        ir = self.stepwise_ir(program, elements)
        pipeline = ",".join(elements)
        obj = self._llc(ir, "obj", program.name)
        return CompileResult(self._measure(ir, obj, pipeline), ir=ir if want_ir else None)

    def count_stepwise(
        self,
        program: Program,
        elements: tuple[str, ...],
        use_cache: bool,
        replay: list[str],
        want_ir: bool = False,
    ) -> tuple[IRCount, str | None]:
        return counted(self.stepwise_ir(program, elements), elements, self.toolchain.version, want_ir)

    def lower_ir(self, ir: str, pipeline: str | None, name: str, replay: list[str]) -> Measurement:
        return self._measure(ir, self._llc(ir, "obj", name), pipeline)

    def close(self) -> None:
        pass


class InProcessEngine:
    """LLVM's C API in crash-isolated worker processes (started on first use)."""

    kind = Engine.INPROCESS

    def __init__(self, toolchain: Toolchain, timeout: float, workers: int) -> None:
        self.toolchain = toolchain
        self.timeout = timeout
        self.workers = workers
        self._pool: WorkerPool | None = None

    @property
    def pool(self) -> WorkerPool:
        """The workers (started on first use)."""
        if self._pool is None:
            self._pool = WorkerPool(self.toolchain, size=self.workers, timeout=self.timeout)
        return self._pool

    def _result(self, evaluation: Evaluation, pipeline: str | None) -> CompileResult:
        measurement = Measurement(
            pipeline=pipeline,
            binary_size=evaluation.text + evaluation.data,
            text=evaluation.text,
            data=evaluation.data,
            ir_instructions=evaluation.ir_instructions,
            llvm_version=self.toolchain.version,
            ir_hash=evaluation.ir_hash,
        )
        return CompileResult(measurement, evaluation.ir, evaluation.assembly, evaluation.obj)

    def compile(
        self, program: Program, pipeline: str | None, outputs: Collection[str], replay: list[str]
    ) -> CompileResult:
        evaluation = self.pool.evaluate(
            program.text_key,
            program.ir,
            pipeline,
            subject=subject(program, pipeline),
            replay=replay,
            want_ir="ir" in outputs,
            want_asm="asm" in outputs,
            want_obj="obj" in outputs,
        )
        return self._result(evaluation, pipeline)

    def compile_stepwise(
        self,
        program: Program,
        elements: tuple[str, ...],
        use_cache: bool,
        replay: list[str],
        want_ir: bool = False,
    ) -> CompileResult:
        pipeline = ",".join(elements)
        evaluation = self.pool.evaluate(
            program.text_key,
            program.ir,
            pipeline,
            subject=subject(program, pipeline),
            replay=replay,
            stepwise=elements,
            use_cache=use_cache,
            want_ir=want_ir,
        )
        return self._result(evaluation, pipeline)

    def count_stepwise(
        self,
        program: Program,
        elements: tuple[str, ...],
        use_cache: bool,
        replay: list[str],
        want_ir: bool = False,
    ) -> tuple[IRCount, str | None]:
        pipeline = ",".join(elements)
        evaluation = self.pool.evaluate(
            program.text_key,
            program.ir,
            pipeline,
            subject=subject(program, pipeline),
            replay=replay,
            stepwise=elements,
            use_cache=use_cache,
            want_ir=want_ir,
            lower=False,
        )
        version = self.toolchain.version
        count = IRCount(pipeline or None, evaluation.ir_instructions, version, evaluation.ir_hash)
        return count, evaluation.ir

    def count(self, program: Program, pipeline: str | None, replay: list[str]) -> IRCount:
        count, digest = self.pool.count(
            program.text_key, program.ir, pipeline, subject=subject(program, pipeline), replay=replay
        )
        return IRCount(pipeline, count, self.toolchain.version, digest)

    def lower_ir(self, ir: str, pipeline: str | None, name: str, replay: list[str]) -> Measurement:
        return self._result(self.pool.lower(ir, subject=name, replay=replay), pipeline).measurement

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool = None


class ZygoteEngine:
    """Each compile in a child of the zygote that :data:`ZYGOTE_ENVIRONMENT` names
    (:mod:`llm_compiler.toolchain.zygote`), measured as :class:`SubprocessEngine`
    measures. Should the zygote go away, compiles run as processes.

    Raises:
        ToolchainError: No zygote of ``toolchain`` answers there.
    """

    kind = Engine.ZYGOTE

    def __init__(self, toolchain: Toolchain, timeout: float, zygote: Zygote | None = None) -> None:
        self.toolchain = toolchain
        self.timeout = timeout
        found = zygote or find(toolchain)
        if found is None:
            raise ToolchainError(
                f"No zygote of LLVM {toolchain.version} ({toolchain.bin_dir}) answers at "
                f"${ZYGOTE_ENVIRONMENT} ({os.environ.get(ZYGOTE_ENVIRONMENT, 'unset')})."
            )
        self.zygote = found
        self._processes = SubprocessEngine(toolchain, timeout)

    def _compile(
        self, ir: str, pipeline: str | None, want_asm: bool, name: str
    ) -> tuple[str, bytes, str | None]:
        """(optimized IR, object, assembly) of ``ir`` through ``pipeline`` (None: as it is).

        Raises:
            ZygoteGone: No zygote took the request (nothing ran).
        """
        message = ("compile", ir.encode(), pipeline, want_asm, self.timeout)
        _, text, obj, asm = self.zygote.request(message, timeout=self.timeout, subject=name)
        return (ir if text is None else text), obj, asm

    def compile(
        self, program: Program, pipeline: str | None, outputs: Collection[str], replay: list[str]
    ) -> CompileResult:
        try:
            ir, obj, assembly = self._compile(
                program.ir, pipeline, "asm" in outputs, subject(program, pipeline)
            )
        except ZygoteGone:
            return self._processes.compile(program, pipeline, outputs, replay)
        return CompileResult(
            self._processes._measure(ir, obj, pipeline),
            ir=ir if "ir" in outputs else None,
            assembly=assembly,
            obj=obj if "obj" in outputs else None,
        )

    def _optimized(self, program: Program, pipeline: str | None) -> str:
        if pipeline is None:
            return program.ir
        try:
            message = ("optimize", program.ir.encode(), pipeline, self.timeout)
            answer = self.zygote.request(message, timeout=self.timeout, subject=subject(program, pipeline))
            return str(answer[1])
        except ZygoteGone:
            return self._processes._optimized(program, pipeline)

    def count(self, program: Program, pipeline: str | None, replay: list[str]) -> IRCount:
        ir = self._optimized(program, pipeline)
        return IRCount(pipeline, count_instructions(ir), self.toolchain.version, ir_hash(ir))

    def compile_stepwise(
        self,
        program: Program,
        elements: tuple[str, ...],
        use_cache: bool,
        replay: list[str],
        want_ir: bool = False,
    ) -> CompileResult:
        ir = self._stepwise_ir(program, elements)
        pipeline = ",".join(elements)
        try:
            _, obj, _ = self._compile(ir, None, False, subject(program, pipeline))
        except ZygoteGone:
            obj = self._processes._llc(ir, "obj", program.name)
        return CompileResult(self._processes._measure(ir, obj, pipeline), ir=ir if want_ir else None)

    def _stepwise_ir(self, program: Program, elements: tuple[str, ...]) -> str:
        ir = program.ir
        for element in elements:
            ir = self._optimized(Program(program.name, ir), element)
        return ir

    def count_stepwise(
        self,
        program: Program,
        elements: tuple[str, ...],
        use_cache: bool,
        replay: list[str],
        want_ir: bool = False,
    ) -> tuple[IRCount, str | None]:
        return counted(self._stepwise_ir(program, elements), elements, self.toolchain.version, want_ir)

    def lower_ir(self, ir: str, pipeline: str | None, name: str, replay: list[str]) -> Measurement:
        try:
            _, obj, _ = self._compile(ir, None, False, name)
        except ZygoteGone:
            return self._processes.lower_ir(ir, pipeline, name, replay)
        return self._processes._measure(ir, obj, pipeline)

    def close(self) -> None:
        pass
