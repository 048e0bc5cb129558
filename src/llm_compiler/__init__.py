"""llm-compiler: measure, tune and learn LLVM pass lists for code size.

An open implementation of the system around Meta's LLM Compiler: the measurement
pipeline (clang front end, ``opt`` pass lists, ``llc``, Berkeley text + data), the
searchable pass set, autotuning, validation, the three instruction tasks as data,
and model backends. Importing this package loads no heavy dependency.
"""

__version__ = "0.1.0"
