"""Evaluation: the paper's figures for any model, search or baseline, on any program set.

:mod:`.flag_tuning` runs systems over units and sums the rows up, :mod:`.disassembly`
and :mod:`.emulation` score the other two tasks, :mod:`.perplexity` a model's
next-token perplexity, and :mod:`.report` writes what a person reads.
"""
