"""The target's own link check on the real toolchain: a build past the time limit."""

from __future__ import annotations

from llm_compiler.core.compiler import Compiler
from llm_compiler.toolchain.llvm import Toolchain
from llm_compiler.validation.gate import Gate
from llm_compiler.validation.linkage import LinkageCheck
from llm_compiler.validation.outcomes import Outcome
from tests.conftest import EXAMPLES


def test_a_build_past_the_time_limit_is_a_transient_timeout_not_a_link_failure(toolchain: Toolchain) -> None:
    with Compiler(toolchain, engine="subprocess", workers=1) as roomy:
        program = roomy.load(EXAMPLES / "crc32.c")
        oz = roomy.passes("module(default<Oz>)")
        obj, _ = roomy.object_code(program, oz)
        # opt cannot even start within a millisecond: every build times out
        with Compiler(toolchain, timeout=0.001, engine="subprocess", workers=1) as tight:
            check = LinkageCheck(tight)
            result = check.check(program, oz)
            assert not result.passed and result.transient and result.outcome is Outcome.TIMEOUT
            assert result.detail.startswith(
                "the target's build with the list ran past the compiler's time limit"
            )
            # an object built elsewhere: the default<Oz> build the rule compares with times out
            on_object = check.check_object(program, obj)
            assert on_object.transient and "default<Oz> build ran past" in on_object.detail
            gate = Gate(tight, [])
            gated = gate.check(program, oz)
            assert not gated.passed and gated.check == "linkage" and gated.transient
            assert gated.outcome is Outcome.TIMEOUT and "not kept" in gated.description
            joined = gate.check_object(program, obj, "built elsewhere")
            assert joined.check == "linkage" and joined.transient and joined.outcome is Outcome.TIMEOUT
        # nothing was remembered: with time to build, the same check passes
        check.compiler = roomy
        assert check.check_object(program, obj).passed and check.check(program, oz).outcome is Outcome.PASS
