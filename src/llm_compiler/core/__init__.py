"""The compile path every command shares: programs, the compiler, executors, metrics.

It sits above :mod:`llm_compiler.toolchain` (running LLVM) and :mod:`llm_compiler.passes`
(the pass grammar and the searchable set), and below everything that measures, searches,
validates or makes data.
"""
