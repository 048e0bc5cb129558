"""The real backends (transformers, llama.cpp, an OpenAI-compatible server) with tiny models.

The tiny models have the released models' architecture and tokenizer
(:mod:`tests.models.tiny_models`, built once and cached outside the clone). An
untrained one answers nonsense: every unit must keep -Oz and say why. One fine-tuned
here on three flag-tuning answers must have its lists applied, measured and validated,
and give the same results through ``hf:``, ``gguf:`` and ``openai:``. The server is
llama-cpp-python's, on 127.0.0.1, serving the same GGUF file.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from llm_compiler.core.compiler import Compiler
from llm_compiler.corpus.program_set import ProgramSource
from llm_compiler.models.base import GenerationRequest, Model, PromptTooLong
from llm_compiler.models.optimize import ModelOptimizer, OptimizeSettings, Verdict
from llm_compiler.models.registry import load_model
from llm_compiler.tasks.answers import AlreadyOptimalAnswer, build_flag_tuning_answer
from llm_compiler.tasks.prompts import flag_tuning_prompt
from llm_compiler.toolchain.llvm import Toolchain
from llm_compiler.validation.gate import Gate, load_suites
from tests.conftest import EXAMPLES, run_cli
from tests.models.programs import DATA, TAUGHT

pytest.importorskip("torch")
pytest.importorskip("transformers")
tiny_models = pytest.importorskip("tests.models.tiny_models")

BACKENDS = [
    "hf",
    pytest.param("gguf", marks=pytest.mark.llamacpp),
    pytest.param("openai", marks=pytest.mark.llamacpp),
]


def _answer(name: str) -> str:
    pipeline, before, after = TAUGHT[name]
    if pipeline is None:
        return build_flag_tuning_answer(AlreadyOptimalAnswer(before))
    return (
        f"Run opt -p '{pipeline}' to reduce the binary size from {before} bytes to {after} bytes:\n\n<code>"
    )


@pytest.fixture(scope="module")
def one_compiler(toolchain: Toolchain) -> Iterator[Compiler]:
    with Compiler(toolchain, engine="subprocess") as compiler:
        yield compiler


@pytest.fixture(scope="module")
def trained(one_compiler: Compiler) -> Path:
    """A tiny model that answers the three examples' prompts with the lists above."""
    samples = [(flag_tuning_prompt(one_compiler.load(DATA / name).ir), _answer(name)) for name in TAUGHT]
    return tiny_models.finetuned_model_dir(samples, "flag-tuning-examples")


@pytest.fixture(scope="module")
def untrained() -> Path:
    return tiny_models.hf_model_dir("untrained")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[Path, str]]:
    """llama-cpp-python's OpenAI-compatible server, one per GGUF file asked for, on 127.0.0.1."""
    started: dict[Path, tuple[subprocess.Popen[bytes], str]] = {}

    class Servers(dict[Path, str]):
        def __missing__(self, path: Path) -> str:
            port = _free_port()
            command = [sys.executable, "-m", "llama_cpp.server", "--model", str(path), "--host", "127.0.0.1",
                       "--port", str(port), "--n_ctx", "16384", "--model_alias", "tiny"]  # fmt: skip
            process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            url = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 60
            while True:
                try:
                    urllib.request.urlopen(f"{url}/v1/models", timeout=2).close()
                    break
                except OSError:
                    if process.poll() is not None or time.monotonic() > deadline:
                        process.kill()
                        pytest.fail(f"llama_cpp.server did not start: {command}")
                    time.sleep(0.3)
            started[path] = (process, url)
            self[path] = url
            return url

    yield Servers()
    for process, _ in started.values():
        process.terminate()
        process.wait(timeout=30)


def _spec(backend: str, model_dir: Path, servers: dict[Path, str]) -> str:
    if backend == "hf":
        return f"hf:{model_dir}"
    gguf = tiny_models.gguf_file(model_dir)
    return f"gguf:{gguf}" if backend == "gguf" else f"openai:{servers[gguf]}#tiny"


def _load(backend: str, model_dir: Path, servers: dict[Path, str], **options: object) -> Model:
    extra = {"device": "cpu", "dtype": "float32"} if backend == "hf" else {}
    return load_model(_spec(backend, model_dir, servers), **extra, **options)


def _optimize(
    compiler: Compiler, model: Model, names: list[str], folder: Path = EXAMPLES, **settings: object
) -> list:
    gate = Gate(compiler, load_suites([], compiler))
    optimizer = ModelOptimizer(compiler, model, gate, OptimizeSettings(**settings))  # type: ignore[arg-type]
    return list(optimizer.run([ProgramSource(str(folder / n), folder / n, "") for n in names]))


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_untrained_model_keeps_oz_everywhere_and_says_why(
    backend: str, untrained: Path, servers: dict[Path, str], one_compiler: Compiler
) -> None:
    with _load(backend, untrained, servers) as model:
        results = _optimize(one_compiler, model, ["crc32.c", "bitops.c"], max_tokens=48)
    for result in results:
        assert result.fallback in (Verdict.PARSE_ERROR, Verdict.UNKNOWN_PASS), result.fallback_detail
        assert result.binary_size == result.oz_size and result.chosen == "default<Oz>"
        assert result.fallback_detail and result.candidates[0].answer


@pytest.mark.slow
@pytest.mark.llamacpp
def test_a_finetuned_model_beats_oz_the_same_way_through_every_backend(
    trained: Path, servers: dict[Path, str], one_compiler: Compiler
) -> None:
    pytest.importorskip("llama_cpp")
    outcomes = {}
    for backend in ("hf", "gguf", "openai"):
        with _load(backend, trained, servers) as model:
            results = _optimize(one_compiler, model, list(TAUGHT), DATA)
        outcomes[backend] = [(r.unit, r.chosen, r.binary_size, r.fallback, r.prompt_tokens) for r in results]
        by_name = {Path(r.unit).name: r for r in results}
        for name, (pipeline, oz, size) in TAUGHT.items():
            result = by_name[name]
            assert result.oz_size == oz and result.binary_size == size, (backend, result)
            if pipeline is None:
                assert result.fallback is Verdict.ALREADY_OPTIMAL
            else:
                assert result.fallback is None and result.chosen == pipeline
                assert result.candidates[0].verdict is Verdict.VALIDATED
                assert result.candidates[0].predicted_after == size
    assert outcomes["hf"] == outcomes["gguf"] == outcomes["openai"], outcomes


@pytest.mark.parametrize("backend", BACKENDS)
def test_prompts_are_counted_by_the_models_tokenizer_and_never_truncated(
    backend: str, untrained: Path, servers: dict[Path, str], one_compiler: Compiler
) -> None:
    prompt = flag_tuning_prompt(one_compiler.load(EXAMPLES / "crc32.c").ir)
    tokenizer = tiny_models.tokenizer_dir()
    from transformers import AutoTokenizer

    expected = len(AutoTokenizer.from_pretrained(str(tokenizer))(prompt)["input_ids"])
    with _load(backend, untrained, servers) as model:
        assert model.count_tokens(prompt) == expected
        assert model.context_length == 16384
        [generation] = model.generate([GenerationRequest(prompt, max_tokens=4)])
        assert generation.completions[0].finish_reason == "length"
    if backend == "openai":
        return  # the context is the server's: it is started with 16,384 above
    with _load(backend, untrained, servers, context=1024) as short:
        assert short.context_length == 1024
        with pytest.raises(PromptTooLong, match=rf"The prompt is {expected} tokens .* context is 1024"):
            short.generate([GenerationRequest(prompt)])
        [result] = _optimize(one_compiler, short, ["crc32.c"])
    assert result.fallback is Verdict.OVER_BUDGET and f"{expected} tokens" in result.fallback_detail


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_three_commands_run_with_each_backend(
    backend: str, untrained: Path, servers: dict[Path, str], one_compiler: Compiler, tmp_path: Path
) -> None:
    spec = _spec(backend, untrained, servers)
    common = ("--model", spec, "--max-tokens", "24", "--jobs", "1")
    optimize = run_cli(
        "optimize", str(EXAMPLES / "crc32.c"), *common, "-o", str(tmp_path / "crc.o"), "--json"
    )
    assert optimize.returncode == 0, optimize.stderr
    record = json.loads(optimize.stdout)
    assert (
        record["fallback"] and record["binary_size"] == record["oz_size"] and (tmp_path / "crc.o").is_file()
    )
    assembly = tmp_path / "crc32.s"
    program = one_compiler.load(EXAMPLES / "crc32.c")
    assembly.write_text(one_compiler.assemble(program, one_compiler.passes("default<Oz>")))
    lifted = run_cli("disassemble", str(assembly), *common, "--json")
    assert lifted.returncode == 1, lifted.stderr  # nonsense lifts nothing, and says so
    assert json.loads(lifted.stdout)["error"].startswith("no answer held IR")
    emulated = run_cli(
        "emulate", str(EXAMPLES / "crc32.c"), "--passes", "module(default<Oz>)", *common, "--json"
    )
    assert emulated.returncode == 0, emulated.stderr
    result = json.loads(emulated.stdout)
    assert not result["compiles"] and result["error"] and result["real_binary_size"] == 527
