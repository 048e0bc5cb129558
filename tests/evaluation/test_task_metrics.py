"""Disassembly, emulation and perplexity metrics against figures worked out by hand.

The answers are ours (the ``replay:`` backend): an exact lift, a lift with one
instruction changed and nonsense must give a round trip with an exact match, a valid
lift that does not round-trip (BLEU below 1) and a failure; emulation answers with
the right code, wrong sizes, no format and code that does not compile must give the
rates and errors computed here from the samples' own numbers. Perplexity of a tiny
untrained Llama is checked against log-softmax done here, token by token.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from llm_compiler.core.compiler import Compiler
from llm_compiler.core.program import OZ_PIPELINE
from llm_compiler.corpus.program_set import ProgramSet, ProgramSource, provenance_fields
from llm_compiler.corpus.tokens import get_token_counter
from llm_compiler.errors import InvalidInput
from llm_compiler.evaluation.disassembly import PAPER, evaluate_disassembly
from llm_compiler.evaluation.emulation import evaluate_emulation
from llm_compiler.evaluation.perplexity import dataset_texts, evaluate_perplexity, perplexity
from llm_compiler.models.disassemble import bleu, normalize_assembly
from llm_compiler.models.emulate import comparable
from llm_compiler.models.registry import load_model
from llm_compiler.tasks.answers import (
    DisassemblyAnswer,
    EmulationAnswer,
    build_disassembly_answer,
    build_emulation_answer,
    parse_emulation_answer,
)
from llm_compiler.tasks.dataset import DatasetWriter
from llm_compiler.tasks.disassembly import target_of
from llm_compiler.tasks.emulation import emulation_samples
from llm_compiler.tasks.prompts import disassembly_prompt
from llm_compiler.tasks.samples import DataSettings, SampleContext
from llm_compiler.toolchain.llvm import Toolchain

UNITS = {
    "add.c": "int add(int a, int b) { return a + b; }\n",
    "mix.c": "unsigned mix(unsigned a, unsigned b) { return (a ^ b) * 3u + (a >> 2); }\n",
    "neg.c": "int neg(int a) { return -a; }\n",
    "zbad.c": "int broken( { return }\n",
}
LOOP = "int sum(int *a, int n) { int s = 0; for (int i = 0; i < n; i++) s += a[i]; return s; }\n"


@pytest.fixture(scope="module")
def compiler(toolchain: Toolchain) -> Iterator[Compiler]:
    """One engine is enough here: the metrics are what is tested, not the engines."""
    with Compiler(toolchain, engine="subprocess") as compiler:
        yield compiler


def _replay(path: Path, answers: dict[str, str]) -> str:
    path.write_text("".join(json.dumps({"prompt": p, "completion": a}) + "\n" for p, a in answers.items()))
    return f"replay:{path}"


# ---------------------------------------------------------------------------------------
# Disassembly


def test_disassembly_round_trip_bleu_and_exact_match(compiler: Compiler, tmp_path: Path) -> None:
    folder = tmp_path / "units"
    folder.mkdir()
    for name, text in UNITS.items():
        (folder / name).write_text(text)
    reference = {}
    for name in ("add.c", "mix.c", "neg.c"):
        program = compiler.load(folder / name)
        compiled = compiler.compile(program, compiler.passes(OZ_PIPELINE), ("ir", "asm"))
        assert compiled.ir is not None and compiled.assembly is not None
        reference[name] = (compiled.ir, compiled.assembly)
    wrong = reference["mix.c"][0].replace(" xor ", " or ", 1)
    assert wrong != reference["mix.c"][0]
    model = load_model(
        _replay(
            tmp_path / "answers.jsonl",
            {
                disassembly_prompt(reference["add.c"][1]): build_disassembly_answer(
                    DisassemblyAnswer(reference["add.c"][0])
                ),
                disassembly_prompt(reference["mix.c"][1]): build_disassembly_answer(DisassemblyAnswer(wrong)),
                disassembly_prompt(reference["neg.c"][1]): "It adds two numbers, I think.",
            },
        )
    )
    rows, summary = evaluate_disassembly(compiler, model, ProgramSet([folder]))

    # By hand: the wrong lift's assembly, normalized, against the input's.
    wrong_assembly = compiler.lower(wrong, filetype="asm").decode()
    wrong_bleu = bleu(normalize_assembly(wrong_assembly), normalize_assembly(reference["mix.c"][1]))
    assert 0.0 < wrong_bleu < 1.0

    assert [Path(row["unit"]).name for row in rows] == list(UNITS)
    assert [row["outcome"] for row in rows] == ["round-trip", "lifted", "failure", "reference-error"]
    assert [row["exact_match"] for row in rows] == [True, False, False, False]
    assert [row["chosen"] for row in rows] == [0, 0, None, None]
    assert rows[0]["bleu"] == 1.0 and rows[1]["bleu"] == pytest.approx(wrong_bleu) and rows[2]["bleu"] == 0
    assert "no <code> block" in rows[2]["candidate_errors"][0] and rows[3]["error"]
    assert all(row["task"] == "disassembly" and row["system"] == model.spec for row in rows)
    json.dumps(rows)

    triple = target_of(reference["add.c"][0])
    figures = {
        "units": 4,
        "reference_errors": 1,
        "over_budget": 0,
        "prompts": 3,
        "round_trips": 1,
        "round_trip_rate": 1 / 3,
        "bleu": pytest.approx((1.0 + wrong_bleu + 0.0) / 3),
        "exact_matches": 1,
        "exact_match_rate": 1 / 3,
        "failures": 1,
        "failure_rate": 1 / 3,
    }
    metrics = summary["systems"][model.spec]
    assert {key: metrics[key] for key in figures} == figures
    by_target = metrics["by_target"]
    assert set(by_target) == {triple, "unknown"}
    assert {key: by_target[triple][key] for key in figures} == {
        **figures,
        "units": 3,
        "reference_errors": 0,
    }
    assert summary["task"] == "disassembly" and summary["units"] == 4 and summary["paper"] == PAPER
    assert PAPER["facebook/llm-compiler-13b-ftd"]["round_trips"] == 905
    json.dumps(summary)

    # Over the budget: nothing is sent, and no rate is made up.
    rows, summary = evaluate_disassembly(compiler, model, ProgramSet([folder]), budget=5)
    assert [row["outcome"] for row in rows] == ["over-budget"] * 3 + ["reference-error"]
    metrics = summary["systems"][model.spec]
    assert metrics["over_budget"] == 3 and metrics["prompts"] == 0 and metrics["round_trip_rate"] is None


# ---------------------------------------------------------------------------------------
# Emulation


@pytest.fixture(scope="module")
def emulation_dataset(compiler: Compiler, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Four samples of one program, as `llm-compiler data emulation` writes them."""
    root = tmp_path_factory.mktemp("emulation")
    source_path = root / "sum.c"
    source_path.write_text(LOOP)
    program = compiler.load(source_path)
    settings = DataSettings(
        task="emulation", samples_per_program=0, extra_lists=("function(sroa)", "function(sroa,instcombine)")
    )
    record = ProgramSource("sum.c", source_path, "test", provenance_fields(origin="files"))
    context = SampleContext(settings, record, program, get_token_counter(None), compiler.llvm_version)
    samples, dropped = emulation_samples(compiler, program, context)
    assert not dropped and [(s["index"], s["target"]) for s in samples] == [
        (0, "ir"),
        (0, "asm"),
        (1, "ir"),
        (1, "asm"),
    ]
    writer = DatasetWriter(root / "data", "emulation", settings.to_json())
    writer.write_program(record.key(), samples)
    return root / "data"


def _samples(dataset: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (dataset / "test" / "shard-00000.jsonl").read_text().splitlines()]


def test_emulation_compile_rate_exact_match_and_size_errors(
    compiler: Compiler, emulation_dataset: Path, tmp_path: Path
) -> None:
    samples = _samples(emulation_dataset)
    references = [parse_emulation_answer(sample["answer"]) for sample in samples]
    sizes = references[1]
    wrong_sizes = EmulationAnswer(sizes.code, sizes.ir_count + 3, sizes.bin_size * 3 // 2)
    not_code = EmulationAnswer("this is not code", references[3].ir_count, references[3].bin_size)
    answers = [
        samples[0]["answer"],  # the compiler's own answer
        build_emulation_answer(wrong_sizes),  # the right assembly, wrong sizes
        "I would need to run opt to know.",  # no format
        build_emulation_answer(not_code),  # the right sizes, code that does not assemble
    ]
    spec = _replay(
        tmp_path / "answers.jsonl", {s["prompt"]: a for s, a in zip(samples, answers, strict=True)}
    )
    model = load_model(spec)
    rows, summary = evaluate_emulation(compiler, model, emulation_dataset, split="test")

    assert [row["outcome"] for row in rows] == [
        "exact-match",
        "exact-match",
        "parse-failure",
        "compile-failure",
    ]
    assert [row["compiles"] for row in rows] == [True, True, False, False]
    assert rows[0]["ir_count_error"] == 0 and rows[0]["binary_size_error"] == 0 and rows[0]["bleu"] == 1.0
    ir_error = 3 / sizes.ir_count
    size_error = abs(sizes.bin_size * 3 // 2 - sizes.bin_size) / sizes.bin_size
    assert rows[1]["ir_count_error"] == pytest.approx(ir_error)
    assert rows[1]["binary_size_error"] == pytest.approx(size_error)
    assert rows[2]["predicted_ir_count"] is None and "no <code> block" in rows[2]["error"]
    not_code_bleu = bleu("this is not code", comparable(references[3].code))
    assert rows[3]["bleu"] == pytest.approx(not_code_bleu) and rows[3]["error"]
    assert rows[0]["measured_binary_size"] == samples[0]["output_binary_size"]
    assert len({row["sample"] for row in rows}) == 4
    json.dumps(rows)

    figures = summary["systems"][model.spec]
    assert {key: value for key, value in figures.items() if key != "by_target"} == {
        "samples": 4,
        "over_budget": 0,
        "prompts": 4,
        "parse_failures": 1,
        "parse_failure_rate": 0.25,
        "compiles": 2,
        "compile_rate": 0.5,
        "exact_matches": 2,
        "exact_match_rate": 0.5,
        "bleu": pytest.approx((1.0 + 1.0 + 0.0 + not_code_bleu) / 4),
        "ir_count_mape": pytest.approx((0 + ir_error + 0) / 3),
        "binary_size_mape": pytest.approx((0 + size_error + 0) / 3),
    }
    ir, asm = figures["by_target"]["ir"], figures["by_target"]["asm"]
    assert (ir["samples"], ir["compile_rate"], ir["exact_match_rate"], ir["parse_failure_rate"]) == (
        2,
        0.5,
        0.5,
        0.5,
    )
    assert ir["ir_count_mape"] == 0 and ir["binary_size_mape"] == 0
    assert (asm["compile_rate"], asm["exact_match_rate"], asm["parse_failures"]) == (0.5, 0.5, 0)
    assert asm["binary_size_mape"] == pytest.approx(size_error / 2)
    assert summary["task"] == "emulation" and summary["samples"] == 4
    json.dumps(summary)

    # Records work as well as a folder; limit and the budget are kept.
    rows, summary = evaluate_emulation(compiler, model, samples, limit=2, budget=5)
    assert [row["outcome"] for row in rows] == ["over-budget"] * 2
    assert summary["systems"][model.spec]["compile_rate"] is None
    with pytest.raises(InvalidInput, match="of task 'disassembly'"):
        evaluate_emulation(compiler, model, [{**samples[0], "task": "disassembly"}])


def test_dataset_texts_are_prompt_space_answer(emulation_dataset: Path) -> None:
    samples = _samples(emulation_dataset)
    assert dataset_texts(emulation_dataset, "test") == [f"{s['prompt']} {s['answer']}" for s in samples]
    assert dataset_texts(emulation_dataset / "test", "test", limit=1) == [
        f"{samples[0]['prompt']} {samples[0]['answer']}"
    ]
    with pytest.raises(InvalidInput, match="no sample of split 'train'"):
        dataset_texts(emulation_dataset, "train")


# ---------------------------------------------------------------------------------------
# Perplexity


@pytest.fixture(scope="module")
def tiny() -> Any:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    tiny_models = pytest.importorskip("tests.models.tiny_models")
    return load_model(f"hf:{tiny_models.hf_model_dir('untrained')}", device="cpu", dtype="float32")


def _nll_by_hand(model: Any, ids: list[int]) -> float:
    """The summed NLL of ids[1:] given the ones before, with log-softmax in float64."""
    import torch

    with torch.no_grad():
        logits = model.model(torch.tensor([ids])).logits[0].double()
    log_probs = torch.log_softmax(logits, dim=-1)
    return -sum(float(log_probs[i, ids[i + 1]]) for i in range(len(ids) - 1))


def test_perplexity_is_exp_of_the_mean_token_nll(tiny: Any, emulation_dataset: Path, tmp_path: Path) -> None:
    text = "define i32 @f(i32 %x) {\n  ret i32 %x\n}"
    ids = tiny.tokenizer(text)["input_ids"]
    assert ids[0] == tiny.tokenizer.bos_token_id and len(ids) > 8
    nll = _nll_by_hand(tiny, ids)
    report = perplexity(tiny, [text, ""])  # an empty text predicts nothing and changes nothing
    assert report["tokens"] == len(ids) - 1 and report["texts"] == 2 and report["cut_texts"] == 0
    assert report["perplexity"] == pytest.approx(math.exp(nll / (len(ids) - 1)), rel=1e-4)
    assert report["mean_nll"] == pytest.approx(nll / (len(ids) - 1), rel=1e-4)

    # Windows of 4 tokens overlapping by one: each token after BOS predicted once.
    windows = [ids[start : start + 4] for start in range(0, len(ids) - 1, 3)]
    cut = perplexity(tiny, [text], max_tokens=4)
    assert cut["tokens"] == len(ids) - 1 and cut["cut_texts"] == 1 and cut["window"] == 4
    assert cut["nll"] == pytest.approx(sum(_nll_by_hand(tiny, w) for w in windows), rel=1e-4)

    # A prompt and its answer joined by a space tokenize as the prompt, then the answer.
    sample = _samples(emulation_dataset)[0]
    joined = tiny.tokenizer(f"{sample['prompt']} {sample['answer']}")["input_ids"]
    apart = tiny.tokenizer(sample["prompt"])["input_ids"]
    assert joined == apart + tiny.tokenizer(sample["answer"], add_special_tokens=False)["input_ids"]
    rows, summary = evaluate_perplexity(tiny, emulation_dataset, "test", max_tokens=256, limit=2)
    assert len(rows) == 2 and summary["systems"][tiny.spec]["tokens"] == sum(r["tokens"] for r in rows)

    with pytest.raises(InvalidInput, match="only the hf: backend"):
        perplexity(load_model(_replay(tmp_path / "r.jsonl", {"p": "a"})), [text])
    with pytest.raises(InvalidInput, match="no token to predict"):
        perplexity(tiny, [""])


def test_the_evaluation_modules_load_no_model_library() -> None:
    code = (
        "import sys, llm_compiler.evaluation.disassembly, llm_compiler.evaluation.emulation, "
        "llm_compiler.evaluation.perplexity; "
        "heavy = {'torch', 'transformers', 'vllm', 'llama_cpp'} & set(sys.modules); assert not heavy, heavy"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
