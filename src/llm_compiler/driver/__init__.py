"""A drop-in C and C++ compiler driver that builds a project with tuned pass lists.

``llm-compiler cc`` and ``llm-compiler c++`` stand in for the compiler of a project's
own build (``make CC="llm-compiler cc"``, or CMake's
``-DCMAKE_C_COMPILER_LAUNCHER="llm-compiler;cc"``). Each command that compiles one C
or C++ translation unit to an object is split into LLM Compiler's steps: clang's front
end emits the unoptimized IR, a chooser picks the unit's pass list (a list tuned and
validated by ``llm-compiler tune``, a predicted one, or ``-Oz``), ``opt`` runs it, and
clang lowers the result with the build's code-generation flags. The object is never
larger than ``-Oz``'s, and any failure of these steps falls back to ``clang -Oz``.
Every other command (links, preprocessing, assembly, queries) runs as clang unchanged.

* :mod:`~llm_compiler.driver.arguments` reads a compiler command line;
* :mod:`~llm_compiler.driver.choose` says where a unit's pass list comes from;
* :mod:`~llm_compiler.driver.cc` runs the steps.
"""
