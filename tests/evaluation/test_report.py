"""The report files of ``llm-compiler evaluate``: Markdown tables, a self-contained HTML page, comparisons."""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from llm_compiler.errors import InvalidInput
from llm_compiler.evaluation import report

TUNE, MODEL = "tune:50", "hf:llm-compiler-ftd-7b"


def row(
    unit: str, package: str, system: str, oz: int, zero_shot: int, size: int, **extra: Any
) -> dict[str, Any]:
    """One line of ``results.jsonl``."""
    fields: dict[str, Any] = {
        "task": "flag-tuning", "unit": unit, "package": package, "system": system, "oz_size": oz,
        "unoptimized_size": 2 * oz, "zero_shot_size": zero_shot, "size": size, "validated": size < oz,
        "unvalidated_size": None, "outcome": "improved" if size < oz else "oz", "pipeline": "default<Oz>",
        "predicted_before": None, "predicted_after": None, "measured_after": None,
        "compiles": 1, "seconds": 0.5,
    }  # fmt: skip
    return fields | extra


ROWS = [
    row("a.c", "zlib", TUNE, 1000, 950, 950, unvalidated_size=940, compiles=50),
    row("b.c", "zlib", TUNE, 200, 200, 200, compiles=50),
    row("c.c", "bzip2", TUNE, 50_000, 48_000, 48_000, compiles=50),
    row("a.c", "zlib", MODEL, 1000, 1100, 1000, outcome="not-smaller-than-oz"),
    row("b.c", "zlib", MODEL, 200, 190, 190, predicted_before=400, predicted_after=185, measured_after=190),
    row("c.c", "bzip2", MODEL, 50_000, 50_000, 50_000, outcome="parse-error"),
]


def metrics(zero_shot: float, backup: float, **extra: Any) -> dict[str, Any]:
    """Figures of ``report.json``, made up where the test does not look."""
    figures: dict[str, Any] = {
        "units": 3, "geomean_zero_shot": zero_shot, "geomean_backup": backup, "improved": 2 / 3,
        "regressed": 0.0, "outcomes": {"improved": 2 / 3, "oz": 1 / 3}, "compiles_per_unit": 50.0,
        "seconds_per_unit": 0.5, "mape_before": None, "mape_after": None, "geomean_unvalidated": None,
    }  # fmt: skip
    return figures | extra


SYSTEMS = {
    TUNE: metrics(0.01234, 0.04567, geomean_unvalidated=0.0555, total_backup=1 - 49_150 / 51_200),
    MODEL: metrics(
        -0.0321, 0.0169, improved=1 / 3, regressed=1 / 3, compiles_per_unit=1.0,
        outcomes={"improved": 1 / 3, "not-smaller-than-oz": 1 / 3, "parse-error": 1 / 3},
        mape_before=0.0476, mape_after=0.0263, total_backup=1 - 51_190 / 51_200,
    ),
}  # fmt: skip
SUMMARY: dict[str, Any] = {
    "task": "flag-tuning",
    "llvm_version": "19.1.7",
    "programs": "examples/",
    "units": 3,
    "systems": SYSTEMS,
    "packages": {"zlib": {TUNE: metrics(0.03, 0.03, units=2)}, "bzip2": {MODEL: metrics(0.0, 0.0, units=1)}},
    "settings": {"budget": 50, "validate": True},
}


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """report.html of the run above, drawn once for the module."""
    pytest.importorskip("matplotlib")
    return report.write_html(SUMMARY, ROWS, tmp_path_factory.mktemp("run") / "report.html")


def images(html: str) -> list[bytes]:
    """The images of a page, decoded; each must be an inline PNG with alt text."""
    tags = re.findall(r"<img\b[^>]*>", html)
    decoded = []
    for tag in tags:
        match = re.search(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', tag)
        assert match, tag[:100]
        assert re.search(r'alt="[^"]{20,}"', tag), "an image without alt text"
        decoded.append(base64.b64decode(match.group(1), validate=True))
    return decoded


def assert_self_contained(html: str) -> None:
    assert not re.search(r"""(src|href|action)\s*=\s*["']?\s*(?!data:)[a-z]+:""", html, re.IGNORECASE)
    assert not re.search(r"\b(src|href)\s*=\s*[\"']?(https?:)?//", html, re.IGNORECASE)
    assert "<link" not in html and "url(" not in html and "@import" not in html
    assert 'http-equiv="Content-Security-Policy"' in html


def test_markdown_tables_carry_the_figures_formatted(tmp_path: Path) -> None:
    text = report.write_markdown(SUMMARY, tmp_path / "report.md").read_text()
    header = (
        "| system | units | zero-shot | with -Oz backup | total bytes | improved | regressed | parse error |"
    )
    assert header in text and "| gain, not validated |" in text
    # units, zero-shot, backup, total, improved, regressed, 5 failure shares, compiles, s, MAPEs,
    # not validated
    assert (
        f"| {TUNE} | 3 | 1.23% | 4.57% | 4.00% | 66.67% | 0.00% | 0.00% | 0.00% | 0.00% | 0.00% | 0.00% "
        in text
    )
    assert "| 50.0 | 0.50 | – | – | 5.55% |" in text
    assert f"| {MODEL} | 3 | -3.21% | 1.69% | 0.02% | 33.33% | 33.33% | 33.33% | 0.00% |" in text
    assert "| 1.0 | 0.50 | 0.048 | 0.026 | – |" in text
    assert (
        "| bzip2 | hf:llm-compiler-ftd-7b | 1 | 0.00% |" in text and "| zlib | tune:50 | 2 | 3.00% |" in text
    )
    assert text.index("| bzip2 |") < text.index("| zlib |")
    assert "LLVM 19.1.7" in text and "- budget: `50`" in text


def test_markdown_shows_the_papers_figures_apart_and_says_what_they_are() -> None:
    text = report.markdown(SUMMARY)
    paper = text[text.index("## The paper's figures (paper: LLVM 17, MiBench)") :]
    assert "another LLVM and another benchmark" in paper and "not as a comparison" in paper
    rows = [line for line in paper.splitlines() if line.startswith("| paper: LLVM 17, MiBench |")]
    assert rows == [
        "| paper: LLVM 17, MiBench | LLM Compiler FTD 7B | 4.77% | 5.24% | – | – | – | 0.083 | 0.225 |",
        "| paper: LLVM 17, MiBench | LLM Compiler FTD 13B | 4.88% | 5.26% | 61.00% | 12.00% | – | 0.082"
        " | 0.225 |",
        "| paper: LLVM 17, MiBench | autotuner | – | 7.10% | – | – | 4,900 | – | – |",
    ]
    assert "paper" not in text[: text.index("## The paper's figures")].lower()


def test_formatting() -> None:
    assert [report.percent(v) for v in (0.0477, -0.125, -1e-9, None, float("nan"))] == [
        "4.77%", "-12.50%", "0.00%", "–", "–",
    ]  # fmt: skip
    assert report.table_markdown(report.Table(["a|b", "n"], [["x|y", "1"]])) == (
        "| a\\|b | n |\n| --- | ---: |\n| x\\|y | 1 |"
    )


def test_the_page_is_self_contained_with_three_plots(page: Path) -> None:
    html = page.read_text()
    assert_self_contained(html)
    pngs = images(html)
    assert len(pngs) == 3 and all(png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 5000 for png in pngs)
    assert "<table>" in html and "4.57%" in html and "paper: LLVM 17, MiBench" in html
    assert html.count('<tr class="paper">') == 3
    # The plots' captions give each system's total bytes beside the per-unit spread.
    assert html.count(f"Total bytes vs -Oz: {TUNE} 4.00%, {MODEL} 0.02%.") == 2


def test_without_predictions_the_page_says_so_instead_of_plotting() -> None:
    pytest.importorskip("matplotlib")
    rows = [r | {"predicted_after": None, "measured_after": None} for r in ROWS]
    html = report.page(SUMMARY, rows)
    assert_self_contained(html)
    assert len(images(html)) == 2 and "No system predicted sizes in this run" in html


def test_without_matplotlib_the_page_has_its_tables_and_a_note(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)

    class Row:  # like the harness's rows: not a mapping, but has to_json()
        def __init__(self, fields: dict[str, Any]) -> None:
            self.fields = fields

        def to_json(self) -> dict[str, Any]:
            return self.fields

    assert report.page(SUMMARY, [Row(r) for r in ROWS]) == report.page(SUMMARY, ROWS)
    html = report.page(SUMMARY, ROWS)
    assert images(html) == [] and "pip install &#x27;llm-compiler[eval]&#x27;" in html and "4.57%" in html


def test_text_is_escaped() -> None:
    pytest.importorskip("matplotlib")
    name = "<script>alert(1)</script>$x$"
    summary = SUMMARY | {"systems": {name: SYSTEMS[TUNE]}, "programs": "<b>", "packages": {}}
    html = report.page(summary, [r | {"system": name} for r in ROWS])
    assert "<script>alert" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;$x$" in html
    assert "<b>" not in html and len(images(html)) == 3


def test_importing_the_package_does_not_import_matplotlib() -> None:
    code = "import sys, llm_compiler, llm_compiler.evaluation.report; print('matplotlib' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


def test_runs_compared_side_by_side(tmp_path: Path) -> None:
    older = SUMMARY | {"llvm_version": "18.1.8", "systems": {TUNE: metrics(0.02, 0.03)}}
    text = report.compare([("old", older), ("new", SUMMARY)])
    lines = [line for line in text.splitlines() if line.startswith("| old |") or line.startswith("| new |")]
    assert lines == [
        # An earlier run's report.json has no total bytes: a dash.
        "| old | tune:50 | 18.1.8 | examples/ | 3 | 2.00% | 3.00% | – | 66.67% | 0.00% | 50.0 | 0.50 | –"
        " | – |",
        "| new | tune:50 | 19.1.7 | examples/ | 3 | 1.23% | 4.57% | 4.00% | 66.67% | 0.00% | 50.0 | 0.50 | –"
        " | 5.55% |",
        "| new | hf:llm-compiler-ftd-7b | 19.1.7 | examples/ | 3 | -3.21% | 1.69% | 0.02% | 33.33% | 33.33%"
        " | 1.0 | 0.50 | 0.026 | – |",
    ]
    html = report.compare_html([("old", older), ("new", SUMMARY)])
    assert_self_contained(html)
    assert html.count("<tr><td>") == 3 and "18.1.8" in html


def test_a_run_is_loaded_from_its_folder(tmp_path: Path) -> None:
    (tmp_path / "report.json").write_text(json.dumps(SUMMARY))
    (tmp_path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    assert report.load_run(tmp_path) == SUMMARY == report.load_run(tmp_path / "report.json")
    assert report.load_rows(tmp_path) == ROWS


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "report.json: no such file; give the --out folder of a finished `llm-compiler evaluate` run"),
        ('{"systems": {', "report.json: not valid JSON (line 1, column 14"),
        ("[1]", "not the summary of a flag-tuning evaluation (a JSON list, not an object)"),
        ('{"task": "emulation", "systems": {}}', "(its task is 'emulation')"),
        ('{"systems": {"oz": 1}}', 'no "systems" object of figures per system'),
    ],
    ids=["missing", "not-json", "not-an-object", "another-task", "no-systems"],
)
def test_a_bad_run_folder_is_named_with_the_fix(tmp_path: Path, content: str | None, message: str) -> None:
    if content is not None:
        (tmp_path / "report.json").write_text(content)
    with pytest.raises(InvalidInput) as caught:
        report.load_run(tmp_path)
    assert str(tmp_path / "report.json") in str(caught.value) and message in str(caught.value)
    assert "run the evaluation again" in str(caught.value)


def test_a_bad_rows_file_is_named(tmp_path: Path) -> None:
    (tmp_path / "results.jsonl").write_text('{"unit": "a"}\n\n[2]\n')
    with pytest.raises(InvalidInput, match=r"results\.jsonl:3: not a JSON object"):
        report.load_rows(tmp_path)


@pytest.mark.skipif(
    shutil.which("chromium") is None, reason="needs Debian's chromium (apt-get install chromium)"
)
def test_a_browser_shows_every_plot(page: Path, tmp_path: Path) -> None:
    """Headless Chromium loads the page; its own script counts the images that decoded."""
    command = [
        "chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-dev-shm-usage", f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=5000",
        "--dump-dom", page.as_uri(),
    ]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    match = re.search(r'<meta name="llm-compiler-images" content="([^"]*)">', result.stdout)
    assert match, result.stdout[:500]
    assert match.group(1) == "3"
