"""The three LLM Compiler tasks as text: compiler emulation, flag tuning and disassembly.

:mod:`llm_compiler.tasks.prompts` builds the prompts byte for byte as the released models
expect them and reads them back; :mod:`llm_compiler.tasks.answers` holds the typed answers,
the text our datasets give them, and lenient parsers for what models write.
"""
