"""The compiler driver with the real clang, opt and tune: objects that link, run and stay small."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from llm_compiler.core.compiler import Compiler
from llm_compiler.core.program import OZ_PIPELINE, Program
from llm_compiler.driver.cc import Driver
from llm_compiler.driver.choose import Choice, FirstOf, OzOnly, TunedResults
from llm_compiler.driver.records import write_object
from llm_compiler.errors import InvalidInput
from llm_compiler.toolchain.elf import berkeley_size
from llm_compiler.toolchain.llvm import Toolchain
from tests.conftest import EXAMPLES, run_cli

HELLO = """\
#include <stdio.h>
static int square(int x) { return x * x; }
int main(void) {
    int total = 0;
    for (int i = 1; i <= 10; i++) total += square(i);
    printf("sum of squares: %d\\n", total);
    return 0;
}
"""

LIBRARY = """\
int counter;
static const char *names[] = {"zero", "one", "two"};
const char *name(int i) { return names[i % 3]; }
int *counter_address(void) { return &counter; }
int bump(void) { return ++counter; }
"""


def cc(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return run_cli("cc", *args, cwd=cwd, env=env)


def log_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def size_of(path: Path) -> int:
    return berkeley_size(path.read_bytes()).binary_size


def relocations(toolchain: Toolchain, path: Path) -> set[str]:
    result = subprocess.run(
        [toolchain.tool("llvm-readelf"), "-r", path], capture_output=True, text=True, check=True, timeout=60
    )
    return {word for word in result.stdout.split() if word.startswith("R_X86_64_")}


def test_a_compiled_unit_links_and_runs(tmp_path: Path) -> None:
    (tmp_path / "hello.c").write_text(HELLO)
    log = tmp_path / "cc.jsonl"
    compiled = cc("--log", str(log), "-O2", "-Wall", "-c", "hello.c", "-o", "hello.o", cwd=tmp_path)
    assert compiled.returncode == 0, compiled.stderr
    assert compiled.stdout == "" and compiled.stderr == ""
    linked = cc("hello.o", "-o", "hello", cwd=tmp_path)
    assert linked.returncode == 0, linked.stderr
    ran = subprocess.run([tmp_path / "hello"], capture_output=True, text=True, check=True, timeout=30)
    assert ran.stdout == "sum of squares: 385\n"
    [line] = log_lines(log)
    assert line["source"] == "hello.c" and line["output"] == "hello.o" and line["cwd"] == str(tmp_path)
    assert line["origin"] == "oz" and line["pipeline"] == OZ_PIPELINE and line["kept"] == "oz"
    assert line["size"] == line["oz_size"] == size_of(tmp_path / "hello.o")
    assert len(line["program_id"]) == 16 and line["seconds"] > 0


def test_a_failing_compile_shows_clangs_error_and_status(tmp_path: Path, toolchain: Toolchain) -> None:
    (tmp_path / "bad.c").write_text("int main(void) {\n    return 0 +;\n}\n")
    log = tmp_path / "cc.jsonl"
    result = cc("--log", str(log), "-O2", "-c", "bad.c", "-o", "bad.o", cwd=tmp_path)
    clang = toolchain.tool("clang")
    direct = subprocess.run([clang, "-c", "bad.c"], cwd=tmp_path, capture_output=True, timeout=60)
    assert direct.returncode != 0
    assert result.returncode == direct.returncode
    assert "bad.c:2:" in result.stderr and "error: expected expression" in result.stderr
    assert result.stderr.count("error: expected expression") == 1
    assert not (tmp_path / "bad.o").exists()
    [line] = log_lines(log)
    assert line["kept"] == "clang" and "front end failed" in line["reason"] and line["size"] is None


def test_warnings_are_shown_once(tmp_path: Path) -> None:
    (tmp_path / "warn.c").write_text("int f(int x) { int unused; return x; }\n")
    result = cc("-Wall", "-c", "warn.c", cwd=tmp_path)
    assert result.returncode == 0
    assert result.stderr.count("unused variable 'unused'") == 1
    assert (tmp_path / "warn.o").is_file()


def test_md_writes_the_dependency_file_naming_the_real_object(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "config.h").write_text("#define ANSWER 42\n")
    (tmp_path / "src" / "x.c").write_text('#include "config.h"\nint answer(void) { return ANSWER; }\n')
    (tmp_path / "obj").mkdir()
    result = cc("-O2", "-MD", "-c", "src/x.c", "-o", "obj/x.o", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "obj" / "x.o").is_file()
    rule = (tmp_path / "obj" / "x.d").read_text()
    assert rule.startswith("obj/x.o: src/x.c")
    assert "src/config.h" in rule
    # CMake's form: an explicit target and file are kept as the build gave them.
    (tmp_path / "CMakeFiles" / "x.dir").mkdir(parents=True)
    target = "CMakeFiles/x.dir/x.c.o"
    result = cc("-MD", "-MT", target, "-MF", "x.c.o.d", "-o", target, "-c", "src/x.c", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "x.c.o.d").read_text().startswith("CMakeFiles/x.dir/x.c.o: src/x.c")


def test_fpic_objects_link_into_a_shared_library(tmp_path: Path, toolchain: Toolchain) -> None:
    (tmp_path / "lib.c").write_text(LIBRARY)
    assert cc("-O2", "-fPIC", "-c", "lib.c", "-o", "pic.o", cwd=tmp_path).returncode == 0
    assert cc("-O2", "-fno-pic", "-c", "lib.c", "-o", "static.o", cwd=tmp_path).returncode == 0
    # The code-generation flags reach the lowering: absolute relocations only without PIC.
    assert not relocations(toolchain, tmp_path / "pic.o") & {"R_X86_64_32", "R_X86_64_32S"}
    assert relocations(toolchain, tmp_path / "static.o") & {"R_X86_64_32", "R_X86_64_32S"}
    shared = cc("-shared", "pic.o", "-o", "libdemo.so", cwd=tmp_path)
    assert shared.returncode == 0, shared.stderr
    assert (tmp_path / "libdemo.so").is_file()
    assert cc("-shared", "static.o", "-o", "libbad.so", cwd=tmp_path).returncode != 0


def test_oz_mode_never_goes_beyond_oz(tmp_path: Path) -> None:
    (tmp_path / "hello.c").write_text(HELLO)
    log = tmp_path / "cc.jsonl"
    result = cc("--oz", "-c", "hello.c", cwd=tmp_path, env={"LLM_COMPILER_CC_LOG": str(log)})
    assert result.returncode == 0, result.stderr
    [line] = log_lines(log)
    assert line["origin"] == "oz" and line["reason"].startswith("--oz") and line["kept"] == "oz"


@pytest.mark.slow
def test_tuned_results_are_used_and_never_larger_than_oz(tmp_path: Path, toolchain: Toolchain) -> None:
    shutil.copy(EXAMPLES / "qsort_ints.c", tmp_path)
    ir_dir, tuned, log = tmp_path / "ir", tmp_path / "tuned", tmp_path / "cc.jsonl"
    first = cc(
        "--predictor",
        "none",
        "--save-ir",
        str(ir_dir),
        "--log",
        str(log),
        "-O2",
        "-c",
        "qsort_ints.c",
        cwd=tmp_path,
    )
    assert first.returncode == 0, first.stderr
    [saved] = list(ir_dir.glob("*.ll"))
    program_id = log_lines(log)[0]["program_id"]
    assert saved.name == f"qsort_ints-{program_id}.ll"
    line = log_lines(log)[0]
    assert size_of(tmp_path / "qsort_ints.o") == line["size"] == min(line["oz_size"], line["clang_oz_size"])
    tune = run_cli("tune", str(ir_dir), "--budget", "20", "--out", str(tuned), "--jobs", "2", cwd=tmp_path)
    assert tune.returncode == 0, tune.stderr
    [best] = log_lines(tuned / "best.jsonl")
    assert best["program_id"] == program_id and best["best_size"] < best["oz_size"]

    log.unlink()
    env = {"LLM_COMPILER_RESULTS": str(tuned), "LLM_COMPILER_CC_LOG": str(log)}
    second = cc("-O2", "-c", "qsort_ints.c", cwd=tmp_path, env=env)
    assert second.returncode == 0, second.stderr
    [line] = log_lines(log)
    assert line["program_id"] == program_id
    assert line["origin"] == "tuned" and line["pipeline"] == best["best_pipeline"]
    assert (
        line["size"]
        == min(line["oz_size"], line["clang_oz_size"], line["chosen_size"])
        == size_of(tmp_path / "qsort_ints.o")
    )
    assert line["kept"] == "chosen" and line["size"] < line["oz_size"]
    rebuilt = cc("-O2", "-c", "qsort_ints.c", cwd=tmp_path, env=env)  # a second line, same object
    assert rebuilt.returncode == 0 and len(log_lines(log)) == 2
    summary = cc("--summary", str(log), cwd=tmp_path)
    assert summary.returncode == 0, summary.stderr
    assert summary.stdout.startswith(f"1 objects in {log} (kept: 1 chosen); 1 measured against -Oz")
    assert f"total bytes: {line['size']:,} vs {line['oz_size']:,} at -Oz" in summary.stdout
    linked = cc("qsort_ints.o", "-o", "qsort_ints", cwd=tmp_path)
    assert linked.returncode == 0, linked.stderr
    ran = subprocess.run([tmp_path / "qsort_ints"], capture_output=True, text=True, timeout=60)
    clang = toolchain.tool("clang")
    subprocess.run([clang, "-Oz", "qsort_ints.c", "-o", "reference"], cwd=tmp_path, check=True, timeout=120)
    reference = subprocess.run([tmp_path / "reference"], capture_output=True, text=True, timeout=60)
    assert ran.stdout and (ran.returncode, ran.stdout) == (reference.returncode, reference.stdout)


def test_a_builds_summary_counts_the_last_line_per_object_and_names_bad_logs(tmp_path: Path) -> None:
    log = tmp_path / "cc.jsonl"
    lines = [
        {
            "cwd": "/b",
            "output": "a.o",
            "oz_size": 1000,
            "clang_oz_size": 990,
            "size": 990,
            "kept": "clang-oz",
        },
        {"cwd": "/b", "output": "a.o", "oz_size": 1000, "clang_oz_size": 990, "size": 900, "kept": "chosen"},
        {"cwd": "/b", "output": "b.o", "oz_size": 100, "clang_oz_size": 100, "size": 50, "kept": "chosen"},
        {"cwd": "/b", "output": "c.o", "size": 70, "kept": "clang"},
    ]
    log.write_text("".join(json.dumps(line) + "\n" for line in lines) + '{"cwd": "/b", "outp')
    summary = cc("--summary", str(log), cwd=tmp_path)
    assert summary.returncode == 0, summary.stderr
    assert "3 objects" in summary.stdout and "(kept: 2 chosen, 1 clang); 2 measured" in summary.stdout
    # geomean of 0.9 and 0.5; totals 950 of 1,100 against -Oz and of 1,090 against clang -Oz
    assert "vs -Oz: 32.92%; total bytes: 950 vs 1,100 at -Oz (13.64% smaller)" in summary.stdout
    assert "against clang -Oz (2 objects): total bytes 950 vs 1,090 (12.84% smaller)" in summary.stdout
    missing = cc("--summary", str(tmp_path / "none.jsonl"), cwd=tmp_path)
    assert missing.returncode == 2 and "cannot read the driver's log" in missing.stderr
    (tmp_path / "empty.jsonl").write_text("")
    empty = cc("--summary", str(tmp_path / "empty.jsonl"), cwd=tmp_path)
    assert empty.returncode == 2 and "no compile recorded" in empty.stderr


def test_the_launcher_form_drops_the_real_compiler_and_takes_its_language(tmp_path: Path) -> None:
    (tmp_path / "greet.cpp").write_text(
        "#include <iostream>\n#include <string>\n"
        'int main() { std::string s = "hi"; std::cout << s + "!\\n"; }\n'
    )
    compiled = cc("/usr/bin/c++", "-O2", "-o", "greet.cpp.o", "-c", "greet.cpp", cwd=tmp_path)
    assert compiled.returncode == 0, compiled.stderr
    linked = cc("/usr/bin/c++", "greet.cpp.o", "-o", "greet", cwd=tmp_path)  # clang++ links libstdc++
    assert linked.returncode == 0, linked.stderr
    ran = subprocess.run([tmp_path / "greet"], capture_output=True, text=True, check=True, timeout=30)
    assert ran.stdout == "hi!\n"


def test_other_commands_run_as_clang(tmp_path: Path) -> None:
    version = cc("--version", cwd=tmp_path)
    assert version.returncode == 0 and "clang version" in version.stdout
    preprocessed = subprocess.run(
        [sys.executable, "-m", "llm_compiler", "cc", "-E", "-P", "-x", "c", "-"],
        input="#define TWICE(x) ((x) * 2)\nint y = TWICE(21);\n",
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
        check=False,
    )
    assert preprocessed.returncode == 0, preprocessed.stderr
    assert "int y = ((21) * 2);" in preprocessed.stdout
    missing = cc("-c", "nowhere.c", cwd=tmp_path)
    assert missing.returncode != 0 and "nowhere.c" in missing.stderr


def test_configuration_probes_compile_as_clang_oz(tmp_path: Path, toolchain: Toolchain) -> None:
    probes = tmp_path / "CMakeFiles" / "CMakeScratch" / "TryCompile-abc"
    probes.mkdir(parents=True)
    log = tmp_path / "cc.jsonl"
    for folder, name in ((tmp_path, "conftest.c"), (probes, "src.c")):
        (folder / name).write_text(HELLO)
        result = cc("--log", str(log), "-O2", "-c", name, "-o", "probe.o", cwd=folder)
        assert result.returncode == 0, result.stderr
        subprocess.run(
            [toolchain.tool("clang"), "-O2", "-c", name, "-o", "clang.o", "-Oz"], cwd=folder, check=True
        )
        assert (folder / "probe.o").read_bytes() == (folder / "clang.o").read_bytes()
    reasons = [line["reason"] for line in log_lines(log)]
    assert len(reasons) == 2 and all(
        "thrown away" in reason and "left to clang" in reason for reason in reasons
    )
    (tmp_path / "conf.c").write_text(HELLO)  # not a probe: chosen for as any unit
    assert cc("--log", str(log), "-c", "conf.c", cwd=tmp_path).returncode == 0
    assert log_lines(log)[-1]["source"] == "conf.c" and log_lines(log)[-1]["kept"]


def test_help_and_bad_results(tmp_path: Path) -> None:
    usage = cc("--help", cwd=tmp_path)
    assert usage.returncode == 0
    assert "--results DIR" in usage.stdout and "LLM_COMPILER_SAVE_IR" in usage.stdout
    bad = cc("--results", str(tmp_path / "none"), "-c", "x.c", cwd=tmp_path)
    assert bad.returncode == 2 and "best.jsonl" in bad.stderr
    missing_value = cc("--log", cwd=tmp_path)
    assert missing_value.returncode == 2 and "--log needs a value" in missing_value.stderr
    no_jobs = cc("--jobs", "0", "-c", "x.c", cwd=tmp_path)
    assert no_jobs.returncode == 2 and "--jobs takes a number" in no_jobs.stderr


def test_log_lines_stay_whole_under_parallel_builds(tmp_path: Path) -> None:
    log = tmp_path / "cc.jsonl"
    for index in range(4):
        (tmp_path / f"u{index}.c").write_text(f"int f{index}(int x) {{ return x * {index + 2}; }}\n")
    command = [sys.executable, "-m", "llm_compiler", "cc", "--log", str(log), "-c"]
    processes = [subprocess.Popen([*command, f"u{index}.c"], cwd=tmp_path) for index in range(4)]
    assert [process.wait(timeout=300) for process in processes] == [0, 0, 0, 0]
    assert sorted(line["source"] for line in log_lines(log)) == ["u0.c", "u1.c", "u2.c", "u3.c"]


# The library, in process --------------------------------------------------------


class Failing:
    def choose(self, program: Program) -> Choice:
        raise RuntimeError("the chooser broke")


class Bogus:
    def choose(self, program: Program) -> Choice:
        return Choice("no-such-pass", "predicted", "a made-up list")


def driver(chooser: Any, log: Path, toolchain: Toolchain) -> tuple[Driver, io.BytesIO]:
    stderr = io.BytesIO()
    return Driver("c", chooser, log=log, toolchain=toolchain, stdout=io.BytesIO(), stderr=stderr), stderr


def test_a_failing_chooser_falls_back_to_clang_oz(
    tmp_path: Path, toolchain: Toolchain, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "hello.c").write_text(HELLO)
    log = tmp_path / "cc.jsonl"
    run, stderr = driver(FirstOf(Failing()), log, toolchain)
    assert run.run(["-O2", "-c", "hello.c"]) == 0
    assert stderr.getvalue() == b""
    [line] = log_lines(log)
    assert line["kept"] == "clang" and line["reason"] == "the chooser broke"
    assert line["size"] == size_of(tmp_path / "hello.o") > 0


def test_a_list_that_fails_keeps_oz(
    tmp_path: Path, toolchain: Toolchain, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "hello.c").write_text(HELLO)
    log = tmp_path / "cc.jsonl"
    with Compiler(toolchain, engine="subprocess") as compiler:  # shared with choosers, kept open
        run = Driver("c", FirstOf(Bogus(), OzOnly()), log=log, compiler=compiler, stderr=io.BytesIO())
        assert run.run(["-c", "hello.c"]) == 0
    [line] = log_lines(log)
    assert line["origin"] == "predicted" and line["kept"] == "oz"
    assert line["reason"].startswith("the chosen list failed, -Oz kept") and "no-such-pass" in line["reason"]
    assert line["size"] == line["oz_size"] == size_of(tmp_path / "hello.o")


def test_choosers(tmp_path: Path) -> None:
    program = Program(name="p", ir="define i32 @f() {\n  ret i32 0\n}\n")
    other = Program(name="q", ir="")
    (tmp_path / "best.jsonl").write_text(
        json.dumps(
            {
                "program_id": program.id,
                "status": "ok",
                "best_pipeline": "function(sroa)",
                "validated": True,
                "verdict": "validated",
                "objective": "binary-size",
            }
        )
        + "\n"
        + json.dumps({"program_id": other.id, "status": "failed", "best_pipeline": OZ_PIPELINE})
        + "\n"
    )
    tuned = TunedResults(tmp_path)
    choice = tuned.choose(program)
    assert choice is not None and (choice.pipeline, choice.origin) == ("function(sroa)", "tuned")
    assert tuned.choose(other) is None
    assert FirstOf(tuned).choose(other).origin == "oz"
    assert FirstOf(tuned, OzOnly()).choose(program).origin == "tuned"
    with pytest.raises(InvalidInput, match=r"best\.jsonl"):
        TunedResults(tmp_path / "missing")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "best.jsonl").write_text("{not json\n")
    with pytest.raises(InvalidInput, match="not a JSON line"):
        TunedResults(tmp_path / "bad")


def test_write_object_writes_a_fifo_in_place(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    write_object(fifo, b"object bytes")
    reader.join(timeout=30)
    assert received == [b"object bytes"]
    assert not fifo.is_file() and fifo.exists()
    with pytest.raises(FileNotFoundError):  # as clang: the build makes its folders
        write_object(tmp_path / "deep" / "x.o", b"x")
    write_object(tmp_path / "x.o", b"x")
    assert (tmp_path / "x.o").read_bytes() == b"x"


def test_an_output_folder_that_does_not_exist_fails_as_with_clang(tmp_path: Path) -> None:
    (tmp_path / "hello.c").write_text(HELLO)
    result = cc("-c", "hello.c", "-o", "missing/hello.o", cwd=tmp_path)
    assert result.returncode == 1 and "missing/hello.o" in result.stderr
    assert not (tmp_path / "missing").exists()


def test_the_predictor_is_the_default_and_its_object_is_never_larger(tmp_path: Path) -> None:
    shutil.copy(EXAMPLES / "qsort_ints.c", tmp_path)
    log = tmp_path / "cc.jsonl"
    result = cc("--log", str(log), "-O2", "-c", "qsort_ints.c", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    [line] = log_lines(log)
    # qsort_ints.c gains on a list the default predictor measures: the predictor is used.
    assert line["origin"] == "predicted" and line["kept"] == "chosen" and "builtin" in line["reason"]
    assert line["size"] == size_of(tmp_path / "qsort_ints.o")
    assert line["size"] < min(line["oz_size"], line["clang_oz_size"])
    bad = cc("--predictor", "builtin:k=0", "-c", "qsort_ints.c", cwd=tmp_path)
    assert bad.returncode == 2 and "k must be" in bad.stderr


def test_a_unit_built_with_and_without_fpic_is_chosen_for_once_in_either_order(tmp_path: Path) -> None:
    # qsort_ints.c gains on one of the predictor's first four lists.
    shutil.copy(EXAMPLES / "qsort_ints.c", tmp_path / "unit.c")
    common = ("--predictor", "builtin:k=4", "-O2", "-c", "unit.c")
    objects: dict[str, dict[str, bytes]] = {}
    reasons: dict[str, dict[str, str]] = {}
    for order in (("static", "pic"), ("pic", "static")):
        name = "-".join(order)
        cache, log = tmp_path / f"cache-{name}", tmp_path / f"{name}.jsonl"
        for kind in order:
            flags = ("-fPIC",) if kind == "pic" else ()
            done = cc(
                "--cache",
                str(cache),
                "--log",
                str(log),
                *common,
                *flags,
                "-o",
                f"{name}-{kind}.o",
                cwd=tmp_path,
            )
            assert done.returncode == 0, done.stderr
        lines = {kind: line for kind, line in zip(order, log_lines(log), strict=True)}
        objects[name] = {kind: (tmp_path / f"{name}-{kind}.o").read_bytes() for kind in order}
        reasons[name] = {kind: line["reason"] for kind, line in lines.items()}
        assert all(line["size"] <= min(line["oz_size"], line["clang_oz_size"]) for line in lines.values())
        assert lines["pic"]["kept"] == lines["static"]["kept"] == "chosen"
        assert lines["pic"]["pipeline"] == lines["static"]["pipeline"]
    # Whichever came first, one selection (the static unit's reason is the same either
    # way), the same objects, and the -fPIC unit's list was measured and validated for it.
    assert objects["static-pic"] == objects["pic-static"]
    assert reasons["static-pic"] == reasons["pic-static"]
    assert re.fullmatch(
        r"builtin:k=4: \d+ bytes vs -Oz \d+ \(llc, binary-size\), validated", reasons["static-pic"]["static"]
    )
    assert reasons["static-pic"]["pic"].startswith(
        "builtin:k=4: the list chosen for the unit without -fPIC: "
    )
    assert reasons["static-pic"]["pic"].endswith(", validated")
