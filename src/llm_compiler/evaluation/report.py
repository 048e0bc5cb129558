"""What a person reads of ``llm-compiler evaluate``: ``report.md``, ``report.html``, comparisons.

An evaluation run (:mod:`llm_compiler.evaluation.flag_tuning`) leaves two records:
``results.jsonl``, one row per unit and system, and ``report.json``, the summary of
those rows per system and per package. This module turns them into reports:

* :func:`write_markdown`: ``report.md``, the summary as tables: per system, per package,
  where the bytes are per group of sections (:func:`section_table`, when the rows
  recorded sections), and the paper's published figures in a table of their own;
* :func:`write_html`: ``report.html``, the same tables and three plots drawn from the
  rows (the spread of per-unit gains, predicted against measured sizes, gain against
  unit size). The page is one self-contained file: the plots are PNG images inlined as
  ``data:`` URIs and a Content-Security-Policy forbids loading anything else, so it can
  be mailed, archived or attached to an issue as it is;
* :func:`compare` and :func:`compare_html`: earlier runs side by side, one row per run
  and system, from their ``report.json`` (:func:`load_run`).

Every gain is a fraction of the -Oz size, positive when smaller than -Oz; the headline
figures are geometric means over units, as in the paper. *Zero-shot* applies each
system's first answer as it is, larger than -Oz or not; *with -Oz backup* keeps -Oz
wherever the answer is not a validated improvement. A search's best size found before
validation is shown apart, labelled "not validated", never as a headline. GCC's
systems (``gcc-os``, ``gcc-os-lto``) have nothing to validate: their figures are GCC's
size against clang's -Oz, negative where GCC's object is larger.

The paper's figures (Cummins et al., "Meta Large Language Model Compiler", 2024) were
measured with LLVM 17 on MiBench, another LLVM and another benchmark than a run here:
they are shown for orientation, not as a comparison.

The plots are drawn by :mod:`llm_compiler.evaluation.plots`; the cells' formats are
:mod:`llm_compiler.evaluation.cells`.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from llm_compiler.core.objective import DEFAULT_OBJECTIVE, Objective
from llm_compiler.errors import InvalidInput
from llm_compiler.evaluation.cells import DASH, Record, decimal, percent
from llm_compiler.evaluation.plots import plots
from llm_compiler.files import atomic_write_text
from llm_compiler.toolchain.elf import SECTION_GROUPS

if TYPE_CHECKING:
    pass

#: The file of a run's summary, and of its rows, in the run's ``--out`` folder.
REPORT_FILE = "report.json"
ROWS_FILE = "results.jsonl"

#: What stands for a missing figure.

PAPER_SOURCE = "paper: LLVM 17, MiBench"
PAPER_NOTE = (
    "The paper's published figures (Cummins et al., “Meta Large Language Model Compiler”, 2024), "
    "measured with LLVM 17 on MiBench: another LLVM and another benchmark than this run. "
    "They are here for orientation, not as a comparison."
)
EXPLANATION = (
    "Gains are fractions of the -Oz size, positive when smaller than -Oz; the headline figures "
    "are geometric means over units; total bytes is the reduction of the units' summed size "
    "with -Oz backup against their summed -Oz size (what a binary of all of them loses). "
    "Zero-shot applies each system's first answer as it is; "
    "with -Oz backup keeps -Oz wherever the answer is not a validated improvement. Improved and "
    "regressed are the shares of units whose zero-shot size is below or above -Oz; the failure "
    "columns are shares of units by outcome. MAPE compares a model's predicted sizes with the "
    "measured ones (before: the unoptimized unit; after: the list it proposed). The last column "
    "is the best size a search found before validation: not validated, never a headline."
)

#: Outcomes shown as columns of their own, and their headers.
FAILURES = {
    "parse-error": "parse error",
    "unknown-pass": "unknown pass",
    "compile-failure": "compile failure",
}
FAILURES |= {"validation-failure": "validation failure", "over-budget": "over budget"}
HEADLINE = ["units", "zero-shot", "with -Oz backup", "total bytes", "improved", "regressed"]
COSTS = ["compiles/unit", "s/unit", "MAPE before", "MAPE after", "gain, not validated"]
#: The columns of a system's figures, in the tables of one run.
METRIC_HEADERS = [*HEADLINE, *FAILURES.values(), *COSTS]
#: The columns of :func:`compare`.
COMPARE_HEADERS = ["run", "system", "LLVM", "programs", *HEADLINE, "compiles/unit", "s/unit", *COSTS[3:]]

#: The paper's published figures per system, in the schema of ``report.json``'s metrics.
PAPER_FIGURES: dict[str, dict[str, float]] = {
    "LLM Compiler FTD 7B": {"geomean_zero_shot": 0.0477, "geomean_backup": 0.0524}
    | {"mape_before": 0.083, "mape_after": 0.225},
    "LLM Compiler FTD 13B": {"geomean_zero_shot": 0.0488, "geomean_backup": 0.0526, "improved": 0.61}
    | {"regressed": 0.12, "mape_before": 0.082, "mape_after": 0.225},
    "autotuner": {"geomean_backup": 0.071, "compiles_per_unit": 4900},
}
#: The paper reports no total bytes.
PAPER_HEADERS = [h for h in HEADLINE[1:] if h != "total bytes"] + [
    "compiles/unit",
    "MAPE before",
    "MAPE after",
]


@dataclass
class Table:
    """Rows of text cells; the first ``text_columns`` columns are text, the others numbers."""

    headers: list[str]
    rows: list[list[str]]
    text_columns: int = 1
    row_class: str = ""


def _count(value: float | None) -> str:
    """Compiles per unit: whole numbers from 100 on, one decimal below."""
    return decimal(value, 0 if value is not None and value >= 100 else 1)


def metric_cells(metrics: Record) -> dict[str, str]:
    """A system's figures (``report.json``'s metrics) as text, by column header."""
    outcomes = metrics.get("outcomes") or {}
    cells = [str(metrics.get("units", DASH))]
    cells += [
        percent(metrics.get(key))
        for key in ("geomean_zero_shot", "geomean_backup", "total_backup", "improved", "regressed")
    ]
    cells += [percent(outcomes.get(outcome, 0.0)) for outcome in FAILURES]
    cells += [_count(metrics.get("compiles_per_unit")), decimal(metrics.get("seconds_per_unit"), 2)]
    cells += [decimal(metrics.get("mape_before")), decimal(metrics.get("mape_after"))]
    cells += [percent(metrics.get("geomean_unvalidated"))]
    return dict(zip(METRIC_HEADERS, cells, strict=True))


def system_table(summary: Record) -> Table:
    """The figures of each system of a run."""
    rows = [[name, *metric_cells(m).values()] for name, m in (summary.get("systems") or {}).items()]
    return Table(["system", *METRIC_HEADERS], rows)


def package_table(summary: Record) -> Table:
    """The figures of each system on each package, packages in name order."""
    rows = [
        [package, name, *metric_cells(metrics).values()]
        for package, systems in sorted((summary.get("packages") or {}).items())
        for name, metrics in systems.items()
    ]
    return Table(["package", "system", *METRIC_HEADERS], rows, text_columns=2)


def errors_table(summary: Record) -> Table:
    """The units a system could not be run on (``report.json``'s ``errors``), with the reason."""
    rows = [[str(e["unit"]), str(e["system"]), str(e["error"])] for e in summary.get("errors") or ()]
    return Table(["unit", "system", "why it gave no row"], rows, text_columns=3)


#: The heading of :func:`errors_table` in the reports.
ERRORS_HEADING = "Units that could not be evaluated"
#: The heading of :func:`section_table` in the reports, and what it shows.
SECTIONS_HEADING = "Bytes per section"
SECTIONS_NOTE = (
    "Each system's bytes summed over the units it gave a row for, by group of sections of the "
    "object (.eh_frame holds every unwind table); the groups add up to the total. For gcc-os and "
    "gcc-os-lto they are GCC's objects (gcc -Os, gcc -Os -flto), whose figures in the tables above "
    "are gcc -Os against clang -Oz, negative where GCC is larger; for the others, the object of "
    "each unit's chosen pipeline."
)
SECTION_COLUMNS = list(SECTION_GROUPS)


def section_table(summary: Record) -> Table | None:
    """Per system, its bytes per group of sections and their total (``report.json``'s
    ``sections``); None when no row recorded sections."""
    totals = summary.get("sections") or {}
    if not totals:
        return None
    rows = []
    for name, found in totals.items():
        cells = [f"{int(found.get(group, 0)):,}" for group in SECTION_COLUMNS]
        rows.append([name, str(found.get("units", DASH)), *cells, f"{int(found.get('total', 0)):,}"])
    return Table(["system", "units", *SECTION_COLUMNS, "total"], rows)


def paper_table() -> Table:
    """The paper's published figures, each row labelled with where they come from."""
    rows = []
    for name, figures in PAPER_FIGURES.items():
        cells = metric_cells(figures)
        rows.append([PAPER_SOURCE, name, *(cells[header] for header in PAPER_HEADERS)])
    return Table(["source", "system", *PAPER_HEADERS], rows, text_columns=2, row_class="paper")


def compare_table(summaries: Sequence[tuple[str, Record]]) -> Table:
    """One row per run and system: the headline figures of earlier runs side by side."""
    rows = []
    for run, summary in summaries:
        about = [str(summary.get("llvm_version", DASH)), str(summary.get("programs", DASH))]
        for name, metrics in (summary.get("systems") or {}).items():
            cells = metric_cells(metrics)
            rows.append([run, name, *about, *(cells[header] for header in COMPARE_HEADERS[4:])])
    return Table(COMPARE_HEADERS, rows, text_columns=4)


# Markdown


def _md_cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|") or " "


def table_markdown(table: Table) -> str:
    """A GitHub-flavoured Markdown table, numbers right-aligned."""
    align = ["---" if i < table.text_columns else "---:" for i in range(len(table.headers))]
    lines = [table.headers, align, *table.rows]
    return "\n".join("| " + " | ".join(_md_cell(cell) for cell in line) + " |" for line in lines)


def _heading(summary: Record) -> str:
    objective = Objective.parse((summary.get("settings") or {}).get("objective", DEFAULT_OBJECTIVE))
    measured = "" if objective is DEFAULT_OBJECTIVE else f"; sizes and totals in {objective.unit}"
    return (
        f"LLVM {summary.get('llvm_version', DASH)} · programs: {summary.get('programs', DASH)} · "
        f"units: {summary.get('units', DASH)} · objective: {objective.description}{measured}"
    )


def _settings(summary: Record) -> list[tuple[str, str]]:
    return [
        (str(key), value if isinstance(value, str) else json.dumps(value))
        for key, value in (summary.get("settings") or {}).items()
    ]


def markdown(summary: Record) -> str:
    """``report.md`` of a run's summary (``report.json``)."""
    parts = ["# Flag tuning: evaluation report", _heading(summary), EXPLANATION]
    parts += ["## Systems", table_markdown(system_table(summary))]
    if (sections := section_table(summary)) is not None:
        parts += [f"## {SECTIONS_HEADING}", SECTIONS_NOTE, table_markdown(sections)]
    if summary.get("packages"):
        parts += ["## Per package", table_markdown(package_table(summary))]
    if summary.get("errors"):
        parts += [f"## {ERRORS_HEADING}", table_markdown(errors_table(summary))]
    parts += [f"## The paper's figures ({PAPER_SOURCE})", PAPER_NOTE, table_markdown(paper_table())]
    if settings := _settings(summary):
        parts += ["## Settings", "\n".join(f"- {key}: `{value}`" for key, value in settings)]
    return "\n\n".join(parts) + "\n"


def compare(summaries: Sequence[tuple[str, Record]]) -> str:
    """Markdown: earlier runs side by side, ``summaries`` as (run name, ``report.json``) pairs."""
    parts = ["# Flag tuning: runs compared", EXPLANATION, table_markdown(compare_table(summaries))]
    return "\n\n".join(parts) + "\n"


def write_markdown(summary: Record, path: Path) -> Path:
    """Writes ``report.md`` (atomically); returns ``path``."""
    return atomic_write_text(path, markdown(summary))


# HTML

#: Nothing but inline styles, inline scripts and data: images may load.
CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'"
CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 90em; padding: 0 1em; color: #222; }
.wide { overflow-x: auto; } table { border-collapse: collapse; margin: 1em 0; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.5em; } th { background: #f0f0f0; }
td.number { text-align: right; font-variant-numeric: tabular-nums; }
tr.paper td { background: #fff8e1; font-style: italic; } .note { color: #555; } img { max-width: 100%; }
"""
#: Counts the images that loaded and decoded into ``<meta name="llm-compiler-images">``, for checks.
SCRIPT = """
window.addEventListener("load", function () {
  var ok = Array.prototype.filter.call(document.images, (image) => image.complete && image.naturalWidth > 0);
  document.querySelector('meta[name="llm-compiler-images"]').content = String(ok.length);
});
"""


def table_html(table: Table) -> str:
    """An HTML table, every cell escaped."""
    head = "".join(f"<th>{html.escape(header)}</th>" for header in table.headers)
    tr = f'<tr class="{table.row_class}">' if table.row_class else "<tr>"
    td = ["<td>"] * table.text_columns + ['<td class="number">'] * (len(table.headers) - table.text_columns)
    body = [
        tr + "".join(f"{td[i]}{html.escape(cell)}</td>" for i, cell in enumerate(row)) + "</tr>"
        for row in table.rows
    ]
    return "\n".join(
        [
            '<div class="wide"><table>',
            f"<thead><tr>{head}</tr></thead><tbody>",
            *body,
            "</tbody></table></div>",
        ]
    )


PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="llm-compiler-images" content="pending">
<title>{title}</title>
<style>{css}</style>
</head>
<body>
<h1>{title}</h1>
{body}
<script>{script}</script>
</body>
</html>
"""


def _page(title: str, body: list[str]) -> str:
    return PAGE.format(csp=CSP, title=html.escape(title), css=CSS, body="\n".join(body), script=SCRIPT)


def _p(text: str, css: str = "") -> str:
    return f'<p class="{css}">{html.escape(text)}</p>' if css else f"<p>{html.escape(text)}</p>"


def _rows(rows: Sequence[Any]) -> list[Record]:
    """Rows as mappings, whether read from ``results.jsonl`` or objects with ``to_json()``."""
    return [row if isinstance(row, Mapping) else row.to_json() for row in rows]


def page(summary: Record, rows: Sequence[Any]) -> str:
    """``report.html`` of a run: its summary's tables and plots of its rows, in one file."""
    body = [_p(_heading(summary)), _p(EXPLANATION, "note")]
    body += ["<h2>Systems</h2>", table_html(system_table(summary))]
    if (sections := section_table(summary)) is not None:
        body += [f"<h2>{SECTIONS_HEADING}</h2>", _p(SECTIONS_NOTE, "note"), table_html(sections)]
    body += ["<h2>Plots</h2>", *plots(_rows(rows))]
    if summary.get("packages"):
        body += ["<h2>Per package</h2>", table_html(package_table(summary))]
    if summary.get("errors"):
        body += [f"<h2>{ERRORS_HEADING}</h2>", table_html(errors_table(summary))]
    body += [f"<h2>The paper's figures ({html.escape(PAPER_SOURCE)})</h2>", _p(PAPER_NOTE, "note")]
    body += [table_html(paper_table())]
    if settings := _settings(summary):
        items = "".join(f"<li>{html.escape(k)}: <code>{html.escape(v)}</code></li>" for k, v in settings)
        body += ["<h2>Settings</h2>", f"<ul>{items}</ul>"]
    return _page("Flag tuning: evaluation report", body)


def compare_html(summaries: Sequence[tuple[str, Record]]) -> str:
    """A self-contained HTML page: earlier runs side by side (see :func:`compare`)."""
    return _page(
        "Flag tuning: runs compared", [_p(EXPLANATION, "note"), table_html(compare_table(summaries))]
    )


def write_html(summary: Record, rows: Sequence[Any], path: Path) -> Path:
    """Writes ``report.html`` (atomically); returns ``path``. ``rows`` as in ``results.jsonl``."""
    return atomic_write_text(path, page(summary, rows))


def write_reports(out: Path, summary: Record, rows: Sequence[Any]) -> list[Path]:
    """Writes ``report.md`` and ``report.html`` into a run's folder; returns their paths."""
    return [write_markdown(summary, out / "report.md"), write_html(summary, rows, out / "report.html")]


# Loading runs


def load_run(run: Path) -> dict[str, Any]:
    """The summary of a run: ``run/report.json`` (or ``run`` itself when it is the file).

    Raises:
        InvalidInput: The file is missing, not JSON, or not a flag-tuning summary; the
            message names the file and what to do.
    """
    path = run / REPORT_FILE if run.is_dir() else run
    fix = "give the --out folder of a finished `llm-compiler evaluate` run, or run the evaluation again"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InvalidInput(f"{path}: no such file; {fix} (it writes {REPORT_FILE}).") from None
    except (OSError, UnicodeDecodeError) as error:
        raise InvalidInput(f"{path}: cannot be read ({error}); {fix}.") from None
    try:
        summary = json.loads(text)
    except json.JSONDecodeError as error:
        raise InvalidInput(
            f"{path}: not valid JSON (line {error.lineno}, column {error.colno}: {error.msg}); the run may "
            f"have stopped while writing it: {fix}."
        ) from None
    problem = _summary_problem(summary)
    if problem:
        raise InvalidInput(f"{path}: not the summary of a flag-tuning evaluation ({problem}); {fix}.")
    return dict(summary)


def _summary_problem(summary: Any) -> str | None:
    if not isinstance(summary, dict):
        return f"a JSON {type(summary).__name__}, not an object"
    if summary.get("task", "flag-tuning") != "flag-tuning":
        return f"its task is {summary['task']!r}"
    systems = summary.get("systems")
    if not isinstance(systems, dict) or not all(isinstance(m, dict) for m in systems.values()):
        return 'no "systems" object of figures per system'
    if not isinstance(summary.get("packages", {}), dict):
        return '"packages" is not an object'
    return None


def load_rows(run: Path) -> list[dict[str, Any]]:
    """The rows of a run: ``run/results.jsonl``, one JSON object a line.

    Raises:
        InvalidInput: The file is missing or a line is not a JSON object.
    """
    path = run / ROWS_FILE
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise InvalidInput(
            f"{path}: cannot be read ({error.strerror}); give the --out folder of a run."
        ) from None
    rows = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            raise InvalidInput(f"{path}:{number}: not valid JSON ({error.msg}).") from None
        if not isinstance(row, dict):
            raise InvalidInput(f"{path}:{number}: not a JSON object.")
        rows.append(row)
    return rows
