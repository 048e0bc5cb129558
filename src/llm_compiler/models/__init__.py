"""Models: the released LLM Compiler weights and any model trained on the project's data.

:mod:`.base` is the interface (batch generation with token budgets), :mod:`.registry`
names backends by spec and imports them lazily, :mod:`.backends` holds one backend per
file. :mod:`.optimize`, :mod:`.disassemble` and :mod:`.emulate` put a model's answers
through the same measurement and validation as everything else in the tool.
"""
