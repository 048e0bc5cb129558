"""Task datasets end to end: the real CLI, LLVM, opt/llc replays, resume, and `datasets`."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from llm_compiler.core.compiler import Compiler
from llm_compiler.passes.pipeline import parse_pipeline
from llm_compiler.tasks.answers import (
    AlreadyOptimalAnswer,
    parse_disassembly_answer,
    parse_emulation_answer,
    parse_flag_tuning_answer,
)
from llm_compiler.tasks.dataset import DatasetWriter, read_samples
from llm_compiler.tasks.prompts import (
    EmulationTarget,
    parse_disassembly_prompt,
    parse_emulation_prompt,
    parse_flag_tuning_prompt,
)
from llm_compiler.toolchain.llvm import Toolchain
from llm_compiler.toolchain.runner import run_command
from tests.conftest import EXAMPLES, run_cli

DATA = Path(__file__).parent / "data"
PROGRAMS = [str(EXAMPLES / "crc32.c"), str(DATA / "binary_search.c")]


def generate(task: str, out: Path, *args: str) -> dict[str, Any]:
    result = run_cli("data", task, "--programs", *PROGRAMS, "--out", str(out), *args)
    assert result.returncode == 0, result.stderr
    return json.loads((out / "report.json").read_text())


@pytest.fixture(scope="module")
def emulation(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("emulation")
    generate(
        "emulation", out, "--samples-per-program", "3", "--seed", "1",
        "--allow-pass", "trigger-crash-module", "--passes", "module(trigger-crash-module)",
    )  # fmt: skip
    return out


def opt(toolchain: Toolchain, pipeline: str, ir: str) -> str:
    command = [toolchain.tool("opt"), f"-passes={pipeline}", "-S", "-o", "-", "-"]
    return run_command(command, timeout=120, input=ir.encode()).stdout_text


def llc(toolchain: Toolchain, ir: str) -> str:
    return run_command([toolchain.tool("llc"), "-o", "-", "-"], timeout=120, input=ir.encode()).stdout_text


def test_emulation_report_counts_samples_and_dropped_lists(emulation: Path) -> None:
    report = json.loads((emulation / "report.json").read_text())
    assert report["programs"] == 2 and report["programs_failed"] == 0
    samples = read_samples(emulation)
    # 3 random lists + the crashing --passes list, x 2 outputs, per program. A dropped list
    # loses both outputs; a sample over the 16k-token context (a list that
    # unrolls can make the answer too long) is dropped on its own.
    dropped = report["dropped"]
    assert dropped["compiler crash or error"] >= 2
    lists_dropped = dropped["compiler crash or error"] + dropped.get("timeout", 0)
    expected = 2 * (3 + 1) * 2 - 2 * lists_dropped - dropped.get("over the token limit", 0)
    assert len(samples) == report["samples_total"] == expected > 0
    assert all("trigger-crash-module" not in sample["pipeline"] for sample in samples)
    assert {sample["target"] for sample in samples} == {"ir", "asm"}
    assert (emulation / samples[0]["split"] / "shard-00000.parquet").is_file()


def test_emulation_samples_replay_byte_for_byte(emulation: Path, toolchain: Toolchain) -> None:
    """opt (and llc) on a stored prompt reproduce the stored answer and its sizes."""
    with Compiler(toolchain, engine="subprocess") as compiler:
        for sample in read_samples(emulation):
            prompt = parse_emulation_prompt(sample["prompt"])
            answer = parse_emulation_answer(sample["answer"])
            assert prompt.passes == parse_pipeline(sample["pipeline"])
            optimized = opt(toolchain, sample["pipeline"], prompt.ir)
            if prompt.target is EmulationTarget.IR:
                assert answer.code == optimized
            else:
                assert answer.code == llc(toolchain, optimized)
            program = compiler.load_ir(prompt.ir)
            measured = compiler.measure(program, compiler.passes(sample["pipeline"]))
            assert (answer.bin_size, answer.ir_count) == (measured.binary_size, measured.ir_instructions)
            source = compiler.measure(program)
            assert (prompt.bin_size, prompt.ir_count) == (source.binary_size, source.ir_instructions)


def test_datasets_load_with_clean_splits(emulation: Path) -> None:
    datasets = pytest.importorskip("datasets")
    os.environ["HF_DATASETS_OFFLINE"] = "1"
    files = {split.name: str(split / "*.jsonl") for split in emulation.iterdir() if split.is_dir()}
    loaded = datasets.load_dataset("json", data_files=files, cache_dir=str(emulation.parent / "hf-cache"))
    programs = {split: set(loaded[split]["program"]) for split in loaded}
    for split, ids in programs.items():
        for other, other_ids in programs.items():
            if other != split:
                assert not ids & other_ids
    assert sum(len(loaded[split]) for split in loaded) == len(read_samples(emulation))


def test_disassembly_round_trips_and_aarch64_is_opt_in(tmp_path: Path, toolchain: Toolchain) -> None:
    x86 = generate("disassembly", tmp_path / "x86")
    arm = generate("disassembly", tmp_path / "arm", "--target", "aarch64-linux-gnu")
    for out, triple in ((tmp_path / "x86", "x86_64"), (tmp_path / "arm", "aarch64")):
        samples = read_samples(out)
        assert len(samples) == 2
        for sample in samples:
            ir = parse_disassembly_answer(sample["answer"]).ir
            assert sample["target"].startswith(triple)
            assert llc(toolchain, ir) == parse_disassembly_prompt(sample["prompt"]).asm
    assert x86["samples_total"] == arm["samples_total"] == 2


def test_flag_tuning_uses_the_validated_best_lists(tmp_path: Path, toolchain: Toolchain) -> None:
    run = tmp_path / "run"
    tuned = run_cli("tune", *PROGRAMS, "--budget", "20", "--seed", "1", "--out", str(run))
    assert tuned.returncode == 0, tuned.stderr
    summary = {
        entry["program_id"]: entry for entry in json.loads((run / "summary.json").read_text())["programs"]
    }
    report = generate("flag-tuning", tmp_path / "flags", "--tuning", str(run))
    samples = read_samples(tmp_path / "flags")
    assert len(samples) == report["samples_total"] == 2
    for sample in samples:
        parse_flag_tuning_prompt(sample["prompt"])
        answer = parse_flag_tuning_answer(sample["answer"])
        entry = summary[sample["program"]]
        assert sample["pipeline"] == entry["best_pipeline"]
        assert sample["output_binary_size"] == entry["best_size"]
        if not isinstance(answer, AlreadyOptimalAnswer):
            assert answer.size_after == entry["best_size"]
            assert answer.code == opt(
                toolchain, entry["best_pipeline"], parse_flag_tuning_prompt(sample["prompt"]).ir
            )
    missing = run_cli("data", "flag-tuning", "--programs", *PROGRAMS, "--out", str(tmp_path / "x"))
    assert missing.returncode == 2 and "--tuning" in missing.stderr


def test_an_interrupted_dataset_resumes_without_duplicates(tmp_path: Path) -> None:
    out = tmp_path / "dis"
    first = run_cli("data", "disassembly", "--programs", PROGRAMS[0], "--out", str(out))
    assert first.returncode == 0, first.stderr
    # A run killed while writing the next program: a sample on disk, the program not done.
    shard = out / read_samples(out)[0]["split"] / "shard-00000.jsonl"
    with shard.open("a") as stream:
        stream.write(json.dumps({"program_key": "unfinished", "split": "train"}) + "\n" + '{"torn')
    again = run_cli("data", "disassembly", "--programs", PROGRAMS[0], "--out", str(out))
    assert again.returncode == 2 and "--resume" in again.stderr
    resumed = run_cli("data", "disassembly", "--programs", *PROGRAMS, "--out", str(out), "--resume")
    assert resumed.returncode == 0, resumed.stderr
    samples = read_samples(out)
    assert sorted(sample["program_name"] for sample in samples) == sorted(PROGRAMS)
    other = run_cli(
        "data", "disassembly", "--programs", *PROGRAMS, "--out", str(out), "--resume", "--seed", "9"
    )
    assert other.returncode == 2 and "other settings" in other.stderr


def test_writer_rotates_shards(tmp_path: Path) -> None:
    writer = DatasetWriter(tmp_path, "emulation", {}, shard_size=2)
    for number in range(5):
        writer.write_program(f"p{number}", [{"split": "train", "n": number}])
    assert sorted(path.name for path in (tmp_path / "train").iterdir()) == [
        "shard-00000.jsonl", "shard-00001.jsonl", "shard-00002.jsonl",
    ]  # fmt: skip
    assert [sample["n"] for sample in read_samples(tmp_path)] == [0, 1, 2, 3, 4]


def test_show_prints_a_sample(emulation: Path) -> None:
    shard = next(emulation.glob("*/shard-00000.jsonl"))
    shown = run_cli("data", "show", str(shard), "--index", "1")
    assert shown.returncode == 0, shown.stderr
    assert "[INST] Give the" in shown.stdout and "binary size" in shown.stdout
    bad = run_cli("data", "show", str(shard), "--index", "999")
    assert bad.returncode == 2 and "samples" in bad.stderr


def test_a_corpus_feeds_datasets_with_its_splits_and_provenance(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    for project, split, program in (("crc", "train", PROGRAMS[0]), ("search", "test", PROGRAMS[1])):
        added = run_cli(
            "corpus", "add", "files", program, "--project", project, "--split", split, "--corpus", str(corpus)
        )
        assert added.returncode == 0, added.stderr
    out = tmp_path / "dis"
    made = run_cli("data", "disassembly", f"corpus:{corpus}?split=test", "--out", str(out))
    assert made.returncode == 0, made.stderr
    samples = read_samples(out)
    assert [(sample["split"], sample["provenance"]["package"]) for sample in samples] == [("test", "search")]
    assert samples[0]["provenance"]["origin"] == "files"
    manifest = run_cli(
        "data", "disassembly", "--programs", str(corpus / "manifest.jsonl"), "--out", str(tmp_path / "m"),
        "--limit", "1",
    )  # fmt: skip
    assert manifest.returncode == 0, manifest.stderr
    assert len(read_samples(tmp_path / "m")) == 1
    bad = run_cli(
        "data", "disassembly", "--programs", str(corpus), "--out", str(tmp_path / "x"), "--limit", "0"
    )
    assert bad.returncode == 2 and "--limit" in bad.stderr


def test_a_corpus_tuned_through_its_ir_files_labels_flag_tuning(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    added = run_cli("corpus", "add", "files", PROGRAMS[0], "--project", "crc", "--corpus", str(corpus))
    assert added.returncode == 0, added.stderr
    # `tune` reads the unit's .ll file through opt (which names its path in the ModuleID
    # line and prints its own comments); `data` reads the manifest. Both must reach the
    # same program. Clang's text is not always what LLVM prints back (use-list order
    # shows in `; preds` comments); a comment LLVM does not print stands in for that.
    (stored,) = (corpus / "ir").glob("*/*.ll")
    first, rest = stored.read_text().split("\n", 1)
    stored.write_text(f"{first}\n; not printed by LLVM\n{rest}")
    run = tmp_path / "run"
    tuned = run_cli("tune", str(corpus / "ir"), "--budget", "5", "--seed", "1", "--out", str(run))
    assert tuned.returncode == 0, tuned.stderr
    unit_id = json.loads((corpus / "manifest.jsonl").read_text().splitlines()[0])["id"]
    out = tmp_path / "flags"
    made = run_cli("data", "flag-tuning", "--programs", str(corpus), "--out", str(out), "--tuning", str(run))
    assert made.returncode == 0, made.stderr
    assert [sample["program_key"] for sample in read_samples(out)] == [unit_id]


def test_pool_and_dask_write_the_same_files_as_one_process(tmp_path: Path) -> None:
    def made(*executor: str) -> dict[str, bytes]:
        out = tmp_path / "-".join(executor)
        generate("emulation", out, "--samples-per-program", "1", "--seed", "3", *executor)
        return {str(shard.relative_to(out)): shard.read_bytes() for shard in sorted(out.glob("*/*.jsonl"))}

    inline = made("--jobs", "1")
    assert inline and all(inline.values())
    # Byte for byte: samples are written in the programs' order, whatever order jobs end in.
    assert made("--jobs", "2") == inline
    pytest.importorskip("dask.distributed")
    assert made("--dask-local", "2") == inline
