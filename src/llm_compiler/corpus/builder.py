"""Turning source files into corpus units: front end, measurement, token budget, splitting.

For each source file, :class:`CorpusBuilder` runs the measurement front end (clang's
``-Oz`` front end with the LLVM passes disabled, with the file's own build flags),
measures the IR under ``default<O0>`` and ``default<Oz>``, counts the tokens of the
flag-tuning prompt that holds it, and stores it. A unit whose prompt exceeds the
token limit (15,000 by default, the paper's) is also split into one module per
function with ``llvm-extract``, as LLM Compiler did; each function module becomes a
unit of its own, linked to its translation unit by ``parent``.

Paths are made reproducible: sources of a package are compiled with
``-ffile-prefix-map=<tree>=<package>-<version>`` and the ``ModuleID`` and
``source_filename`` lines are rewritten the same way, so the same package version
gives the same content hashes wherever it is unpacked.

Where GCC for a unit's target is installed, the unit's source preprocessed by GCC
(``gcc -E`` with the file's flags translated, :mod:`llm_compiler.toolchain.gcc`) is
stored beside its IR with GCC's code-generation flags, so ``gcc-os`` can compile the
same unit later without the source tree; a unit is added without it when no GCC is
installed for its target or GCC cannot preprocess it (logged). Per-function units have
no source of their own.

Anything that fails (a file that does not compile, a unit that does not measure
under -Oz, a function llvm-extract cannot take out) is recorded in the store's
failures with the reason, and excluded.
"""

from __future__ import annotations

import hashlib
import logging
import re
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

from llm_compiler.core.compiler import Compiler
from llm_compiler.core.program import O0_PIPELINE, OZ_PIPELINE, Program
from llm_compiler.corpus.functions import extract_function, module_bitcode
from llm_compiler.corpus.store import SPLITS, CorpusStore, Failure, Provenance, Unit
from llm_compiler.corpus.tokens import PROMPT_TOKEN_BUDGET, TokenCounter
from llm_compiler.errors import InvalidInput, LlmCompilerError
from llm_compiler.toolchain import gcc
from llm_compiler.toolchain.frontend import FrontendOptions, emit_ir, language_of
from llm_compiler.toolchain.ir import count_instructions, defined_functions

logger = logging.getLogger(__name__)

#: The paper's prompt budget for flag tuning and emulation (system notes, section 8).
DEFAULT_TOKEN_LIMIT = PROMPT_TOKEN_BUDGET


def split_for(group: str) -> str:
    """A stable split for a package or project name: 80% train, 10% validation, 10% test."""
    bucket = int(hashlib.sha256(group.encode()).hexdigest(), 16) % 10
    return "test" if bucket == 0 else "validation" if bucket == 1 else "train"


@dataclass(frozen=True)
class SourceFile:
    """A file to turn into a unit.

    Attributes:
        path: The C/C++ (or .ll) file.
        options: Its front-end options (from its build, or given by the user).
        provenance: Where it comes from (its id-independent part).
        tree: The package's root, rewritten to ``<package>-<version>`` in paths.
    """

    path: Path
    options: FrontendOptions
    provenance: Provenance
    tree: Path | None = None


@dataclass
class AddReport:
    """What adding a batch of files did."""

    added: int = 0
    functions: int = 0
    duplicates: int = 0
    failed: int = 0
    over_limit: int = 0

    def merge(self, other: AddReport) -> None:
        self.added += other.added
        self.functions += other.functions
        self.duplicates += other.duplicates
        self.failed += other.failed
        self.over_limit += other.over_limit


def _rewrite_paths(ir: str, tree: Path, prefix: str) -> str:
    root = str(tree)

    def rewrite(match: re.Match[str]) -> str:
        return match.group(0).replace(root, prefix)

    return re.sub(r"^(; ModuleID = |source_filename = ).*$", rewrite, ir, count=2, flags=re.MULTILINE)


def _rewrite_line_markers(text: str, tree: Path, prefix: str) -> str:
    root = str(tree)
    return re.sub(r'^# \d+ ".*$', lambda m: m.group(0).replace(root, prefix), text, flags=re.MULTILINE)


@dataclass(frozen=True)
class GccKept:
    """A unit's GCC-preprocessed source and how to compile it (``Unit.extra["gcc"]``)."""

    text: str
    flags: tuple[str, ...]
    target: str | None
    language: str


class CorpusBuilder:
    """Adds source files to a corpus store.

    Args:
        store: The corpus.
        compiler: Front end and measurement.
        counter: Counts prompt tokens.
        prompt: The prompt a unit's IR is sent in (the flag-tuning prompt of
            :mod:`llm_compiler.tasks.prompts`); the token limit applies to it.
        token_limit: Prompts above this many tokens are split per function.
        split_functions: Split units over the limit (True, as the paper did).
        jobs: Files processed at once.
        keep_gcc: Keep each source unit's GCC-preprocessed source where GCC for its
            target is installed (True).
    """

    def __init__(
        self,
        store: CorpusStore,
        compiler: Compiler,
        counter: TokenCounter,
        *,
        prompt: Callable[[str], str],
        token_limit: int = DEFAULT_TOKEN_LIMIT,
        split_functions: bool = True,
        jobs: int = 2,
        keep_gcc: bool = True,
    ) -> None:
        self.keep_gcc = keep_gcc
        self.store = store
        self.compiler = compiler
        self.counter = counter
        self.prompt = prompt
        self.token_limit = token_limit
        self.split_functions = split_functions
        self.jobs = max(1, jobs)
        self._lock = threading.Lock()
        self._stop = threading.Event()

    def prompt_tokens(self, ir: str) -> int:
        """Tokens of the prompt holding ``ir``."""
        return self.counter.count(self.prompt(ir))

    def add(
        self, files: Iterable[SourceFile], split: str, *, on_file: Callable[[SourceFile], None] | None = None
    ) -> AddReport:
        """Compiles, measures and stores each file (in parallel); failures are recorded.

        Args:
            files: What to add.
            split: The split of every unit made from them.
            on_file: Called after each file (for progress).

        Raises:
            InvalidInput: ``split`` is not train, validation or test.
        """
        if split not in SPLITS:
            raise InvalidInput(f"unknown split {split!r}; choose one of {', '.join(SPLITS)}.")
        report = AddReport()
        self._stop.clear()

        def work(file: SourceFile) -> None:
            if self._stop.is_set():
                return
            try:
                result = self._add_file(file, split)
                with self._lock:
                    report.merge(result)
                if on_file is not None:
                    on_file(file)
            except BaseException:
                self._stop.set()  # before this thread takes the next file
                raise

        pool = ThreadPoolExecutor(self.jobs)
        try:
            for future in [pool.submit(work, file) for file in files]:
                future.result()
        except BaseException:
            # Ctrl-C (or an error): stop at the next file or function instead of
            # finishing every file already queued. What is stored stays stored.
            self._stop.set()
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        pool.shutdown()
        return report

    def _fail(self, provenance: Provenance, stage: str, error: Exception | str) -> AddReport:
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        file = provenance.file + (f":{provenance.function}" if provenance.function else "")
        with self._lock:
            self.store.record_failure(
                Failure(provenance.origin, provenance.package, file, stage, reason[:500])
            )
        return AddReport(failed=1)

    def _options(self, file: SourceFile) -> tuple[FrontendOptions, str]:
        """The file's front-end options with its tree mapped to ``<package>-<version>``."""
        if file.tree is None:
            return file.options, ""
        prefix = f"{file.provenance.package}-{file.provenance.version.split(':')[-1]}".rstrip("-")
        flags = (*file.options.extra_flags, f"-ffile-prefix-map={file.tree}={prefix}")
        return replace(file.options, extra_flags=flags), prefix

    def _load(self, file: SourceFile) -> Program:
        language = language_of(file.path)
        if language == "ir":
            return self.compiler.load(file.path)
        options, prefix = self._options(file)
        ir = emit_ir(self.compiler.toolchain, file.path, options, timeout=self.compiler.timeout)
        if file.tree is not None:
            ir = _rewrite_paths(ir, file.tree, prefix)
        return Program(name=f"{file.provenance.package}/{file.provenance.file}", ir=ir, language=language)

    def _gcc(self, file: SourceFile) -> GccKept | None:
        """The file preprocessed by GCC, or None (IR, no GCC for its target, or GCC fails)."""
        language = language_of(file.path)
        if not self.keep_gcc or language == "ir":
            return None
        options, prefix = self._options(file)
        flags = options.to_flags()
        target = options.target or gcc.target_of(flags)
        try:
            gcc.gcc_driver(target, language)
        except InvalidInput as missing:
            logger.debug("%s: no GCC source kept: %s", file.path, missing)
            return None
        try:
            text = gcc.preprocess(
                file.path, gcc.translate_flags(flags, target=target), target=target, language=language,
                cwd=options.cwd, timeout=self.compiler.timeout,
            )  # fmt: skip
        except LlmCompilerError as error:
            logger.warning("%s: no GCC source kept (gcc-os will not report it): %s", file.path, error)
            return None
        if file.tree is not None:
            text = _rewrite_line_markers(text, file.tree, prefix)
        # the original flags: the tree's path is already mapped in the text, and no path is stored
        return GccKept(text, tuple(gcc.codegen_flags(file.options.to_flags())), target, language)

    def _measure_and_store(
        self, program: Program, provenance: Provenance, split: str, kept: GccKept | None = None
    ) -> tuple[Unit, bool]:
        o0 = self.compiler.measure(program, self.compiler.passes(O0_PIPELINE))
        oz = self.compiler.measure(program, self.compiler.passes(OZ_PIPELINE))
        unit = Unit(
            id=program.id,
            split=split,
            language=program.language,
            provenance=provenance,
            o0_size=o0.binary_size,
            oz_size=oz.binary_size,
            instructions=count_instructions(program.ir),
            tokens=self.prompt_tokens(program.ir),
            token_counter=self.counter.name,
            llvm_version=self.compiler.llvm_version,
        )
        if kept is not None:
            record = {"flags": list(kept.flags), "target": kept.target, "language": kept.language}
            unit = replace(
                unit, extra={**unit.extra, "gcc": {"source": unit.gcc_path(kept.language), **record}}
            )
        with self._lock:
            added = self.store.add(unit, program.ir, kept.text if kept is not None else None)
        return unit, added

    def _add_file(self, file: SourceFile, split: str) -> AddReport:
        provenance = file.provenance
        try:
            program = self._load(file)
        except LlmCompilerError as error:
            return self._fail(provenance, "front end", error)
        with self._lock:
            known = self.store.split_of(program.id) is not None
        kept = None if known else self._gcc(file)
        try:
            unit, added = self._measure_and_store(program, provenance, split, kept)
        except LlmCompilerError as error:
            return self._fail(provenance, "measure", error)
        if not added:
            return AddReport(duplicates=1)
        report = AddReport(added=1)
        if unit.tokens > self.token_limit:
            report.over_limit = 1
            if self.split_functions:
                report.merge(self._add_functions(program, unit, split))
        return report

    def _add_functions(self, program: Program, unit: Unit, split: str) -> AddReport:
        report = AddReport()
        try:
            bitcode: bytes | None = module_bitcode(self.compiler, program)
        except LlmCompilerError:
            bitcode = None  # llvm-extract reads the text, only slower
        for function in defined_functions(program.ir):
            if self._stop.is_set():
                break
            provenance = replace(unit.provenance, function=function, parent=unit.id)
            try:
                extracted = extract_function(self.compiler, program, function, bitcode)
                extracted = replace(extracted, language=program.language)
                _, added = self._measure_and_store(extracted, provenance, split)
            except LlmCompilerError as error:
                report.merge(self._fail(provenance, "split", error))
                continue
            if added:
                report.functions += 1
            else:
                report.duplicates += 1
        return report
