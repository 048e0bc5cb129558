"""Model backends on the CPU, side by side: tokens/s, units/s, and what stopping at <code> saves.

Run: ``.venv/bin/python bench/models/bench_models.py [--repeats 3] [--threads 2]``
(needs the [hf] and [llamacpp] extras and the test tools: ``bash scripts/setup.sh --dev``).

A tiny model of the released models' architecture and tokenizer (``tests/models/tiny_models.py``)
is fine-tuned on the three small programs of ``tests/models/data`` until it answers each
flag-tuning prompt with a whole released-format answer: the list, the sizes, and the
optimized IR after ``<code>``, as the released models write it. Its answers are the same
through every backend, so the backends do the same work:

* ``hf``: transformers on the CPU, float32;
* ``gguf``: llama.cpp through llama-cpp-python, the same weights as an f32 GGUF file;
* ``openai``: llama-cpp-python's OpenAI-compatible server on 127.0.0.1 serving that file.

Per backend, over ``--repeats`` rounds of the three prompts: generation of the whole
answer (tokens/s), generation stopped at the first ``<code>`` (what ``optimize`` does),
and ``optimize`` end to end (answers, measurement, validation; PassListEval's verdicts
warm, so the compile side is measuring and the target's own checks). Printed as
seconds, and as ratios to ``hf`` and of whole answers to stopped ones.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.models import tiny_models  # noqa: E402
from tests.models.programs import DATA, TAUGHT  # noqa: E402

from llm_compiler.core.compiler import Compiler  # noqa: E402
from llm_compiler.corpus.program_set import ProgramSource  # noqa: E402
from llm_compiler.models.base import GenerationRequest, Model  # noqa: E402
from llm_compiler.models.optimize import ModelOptimizer  # noqa: E402
from llm_compiler.models.registry import load_model  # noqa: E402
from llm_compiler.tasks.answers import AlreadyOptimalAnswer, PassListAnswer, build_flag_tuning_answer  # noqa: E402
from llm_compiler.tasks.prompts import flag_tuning_prompt  # noqa: E402
from llm_compiler.validation.gate import Gate, load_suites  # noqa: E402


def samples(compiler: Compiler) -> list[tuple[str, str]]:
    """The three programs' prompts and whole answers (the optimized IR included)."""
    pairs = []
    for name, (pipeline, before, after) in TAUGHT.items():
        program = compiler.load(DATA / name)
        if pipeline is None:
            answer = build_flag_tuning_answer(AlreadyOptimalAnswer(before))
        else:
            passes = compiler.passes(pipeline)
            answer = build_flag_tuning_answer(
                PassListAnswer(passes, before, after, compiler.optimize(program, passes))
            )
        pairs.append((flag_tuning_prompt(program.ir), answer))
    return pairs


def serve(gguf: Path, port: int) -> tuple[subprocess.Popen[bytes], str]:
    command = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(gguf),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        "16384",
        "--model_alias",
        "tiny",
    ]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    for _ in range(200):
        try:
            urllib.request.urlopen(f"{url}/v1/models", timeout=2).close()
            return process, url
        except OSError:
            time.sleep(0.3)
    process.kill()
    raise SystemExit(f"the server did not start: {command}")


def timed_generation(model: Model, prompts: list[str], stop: tuple[str, ...]) -> tuple[float, int]:
    """Seconds and completion tokens to answer every prompt, one request at a time."""
    start = time.perf_counter()
    tokens = 0
    for prompt in prompts:
        [generation] = model.generate([GenerationRequest(prompt, max_tokens=4096, stop=stop)])
        tokens += generation.completions[0].tokens or model.count_tokens(generation.texts[0]) - 1
    return time.perf_counter() - start, tokens


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(args.threads)
    with Compiler(engine="subprocess") as compiler:
        pairs = samples(compiler)
        model_dir = tiny_models.finetuned_model_dir(pairs, "bench-whole-answers")
        gguf = tiny_models.gguf_file(model_dir)
        server, url = serve(gguf, args.port)
        specs = {"hf": f"hf:{model_dir}", "gguf": f"gguf:{gguf}", "openai": f"openai:{url}#tiny"}
        options = {
            "hf": {"device": "cpu", "dtype": "float32"},
            "gguf": {"threads": args.threads},
            "openai": {},
        }
        prompts = [prompt for prompt, _ in pairs]
        gate = Gate(compiler, load_suites([], compiler))
        sources = [ProgramSource(str(DATA / n), DATA / n, "") for n in TAUGHT]
        warm = load_model(specs["hf"], **options["hf"])
        list(ModelOptimizer(compiler, warm, gate).run(sources))  # PassListEval's verdicts, once
        rows = {}
        try:
            for name, spec in specs.items():
                with load_model(spec, **options[name]) as model:
                    timed_generation(model, prompts[:1], ())  # load and warm up
                    whole, stopped, end_to_end, tokens = [], [], [], 0
                    for _ in range(args.repeats):
                        seconds, tokens = timed_generation(model, prompts, ())
                        whole.append(seconds)
                        stopped.append(timed_generation(model, prompts, ("<code>",))[0])
                        start = time.perf_counter()
                        results = list(ModelOptimizer(compiler, model, gate).run(sources))
                        end_to_end.append(time.perf_counter() - start)
                        assert [r.binary_size for r in results] == [t[2] for t in TAUGHT.values()], results
                    rows[name] = (
                        statistics.median(whole),
                        statistics.median(stopped),
                        statistics.median(end_to_end),
                        tokens,
                    )
        finally:
            server.terminate()
            server.wait(timeout=30)
    base = rows["hf"]
    print(
        f"tiny model: {model_dir.name}; {len(prompts)} prompts of "
        f"{', '.join(str(warm.count_tokens(p)) for p in prompts)} tokens; whole answers of {base[3]} tokens "
        f"in all; {args.threads} threads; median of {args.repeats}"
    )
    print(
        "| backend | whole answers: s | tokens/s | stopped at <code>: s | whole / stopped | "
        "optimize: units/s | units/s vs hf |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, (whole_s, stopped_s, e2e_s, tokens) in rows.items():
        print(
            f"| {name} | {whole_s:.2f} | {tokens / whole_s:.0f} | {stopped_s:.2f} | "
            f"{whole_s / stopped_s:.1f}x | {len(prompts) / e2e_s:.2f} | {base[2] / e2e_s:.2f}x |"
        )
    return 0


if __name__ == "__main__":
    with tempfile.TemporaryDirectory():
        sys.exit(main(sys.argv[1:]))
