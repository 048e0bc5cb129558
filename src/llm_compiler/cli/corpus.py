"""``llm-compiler corpus``: build a corpus of real programs and inspect it."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from llm_compiler.cli.options import frontend_options, make_compiler
from llm_compiler.corpus.builder import DEFAULT_TOKEN_LIMIT, AddReport, CorpusBuilder
from llm_compiler.corpus.sources import SUITES, add_compile_commands, add_csmith, add_debian, add_files
from llm_compiler.corpus.stats import corpus_stats
from llm_compiler.corpus.store import SPLITS, CorpusStore, default_corpus_dir
from llm_compiler.corpus.tokens import get_token_counter
from llm_compiler.files import have_pyarrow
from llm_compiler.tasks.prompts import flag_tuning_prompt

EXAMPLES = """examples:
  llm-compiler corpus build --package-set default
  llm-compiler corpus add debian zlib bzip2
  llm-compiler corpus add compile-commands ~/src/myproject/build/compile_commands.json --project myproject
  llm-compiler corpus add files src/ -I include --project mylib --split test
  llm-compiler corpus add csmith --count 200 --seed 1
  llm-compiler corpus stats --json

The corpus folder is --corpus DIR, else $LLM_COMPILER_CORPUS, else
$XDG_DATA_HOME/llm-compiler/corpus (~/.local/share/llm-compiler/corpus).
"""


def _corpus_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("corpus")
    group.add_argument(
        "--corpus", type=Path, metavar="DIR", help=f"corpus folder (default: {default_corpus_dir()})"
    )
    group.add_argument(
        "--tokenizer", metavar="PATH",
        help="Hugging Face tokenizer (folder or tokenizer.json) for token counts (default: the estimator)",
    )  # fmt: skip
    group.add_argument(
        "--token-limit", type=int, default=DEFAULT_TOKEN_LIMIT, metavar="N",
        help=f"prompts over N tokens are split per function (default: {DEFAULT_TOKEN_LIMIT})",
    )  # fmt: skip
    group.add_argument("--no-split", action="store_true", help="do not split units over the limit")
    group.add_argument(
        "--split", choices=SPLITS, help="put everything added in this split (default: by package)"
    )


def add_parser(subparsers: Any, common: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "corpus",
        help="build a corpus of real programs (Debian packages, your build, Csmith) and inspect it",
        description="Build and inspect a corpus of unoptimized IR with provenance and clean splits.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")

    build = actions.add_parser("build", parents=[common], help="build a named set of Debian packages")
    build.add_argument(
        "--package-set", choices=sorted(SUITES), default="default", help="the named set of packages to build"
    )
    build.add_argument("--only", nargs="+", metavar="PKG", help="only these packages of the set")
    _debian_options(build)
    _corpus_options(build)
    build.set_defaults(run=run_build)

    add = actions.add_parser("add", help="add programs to the corpus")
    kinds = add.add_subparsers(dest="kind", required=True, metavar="KIND")
    debian = kinds.add_parser("debian", parents=[common], help="Debian source packages, built")
    debian.add_argument("packages", nargs="+", metavar="PKG")
    _debian_options(debian)
    _corpus_options(debian)
    debian.set_defaults(run=run_add_debian)

    database = kinds.add_parser(
        "compile-commands", parents=[common], help="a project's compile_commands.json"
    )
    database.add_argument("path", type=Path, metavar="PATH")
    database.add_argument("--project", help="project name (default: the folder's name)")
    database.add_argument("--licence", default="unknown")
    _corpus_options(database)
    database.set_defaults(run=run_add_compile_commands)

    files = kinds.add_parser("files", parents=[common], help="C/C++/IR files or folders (use -I/-D)")
    files.add_argument("paths", nargs="+", type=Path, metavar="PATH")
    files.add_argument("--project", help="project name (default: the first file's folder)")
    files.add_argument("--licence", default="unknown")
    _corpus_options(files)
    files.set_defaults(run=run_add_files)

    csmith = kinds.add_parser("csmith", parents=[common], help="random programs from Csmith")
    csmith.add_argument("--count", type=int, required=True, metavar="N")
    csmith.add_argument("--seed", type=int, default=1, metavar="S")
    _corpus_options(csmith)
    csmith.set_defaults(run=run_add_csmith)

    stats = actions.add_parser("stats", parents=[common], help="counts, sizes, token lengths, splits")
    stats.add_argument("--json", action="store_true", help="print the statistics as JSON")
    _corpus_options(stats)
    stats.set_defaults(run=run_stats)


def _debian_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--install-build-deps", action="store_true",
        help="apt-get build-dep each package first (root), so more files build with their real flags",
    )  # fmt: skip
    parser.add_argument(
        "--work-dir", type=Path, metavar="DIR", help="unpack and build here (default: a temp dir)"
    )
    parser.add_argument("--force", action="store_true", help="rebuild packages the corpus already holds")


def _store(args: argparse.Namespace) -> CorpusStore:
    return CorpusStore(args.corpus or default_corpus_dir())


class _Session:
    """A compiler, a builder and a progress display for one command."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.store = _store(args)
        self.compiler = make_compiler(args)
        counter = get_token_counter(args.tokenizer)
        self.builder = CorpusBuilder(
            self.store,
            self.compiler,
            counter,
            prompt=flag_tuning_prompt,
            token_limit=args.token_limit,
            split_functions=not args.no_split,
            jobs=args.jobs,
        )
        self.console = Console(stderr=True)
        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=self.console,
            transient=True,
        )
        self._tasks: dict[str, Any] = {}

    def on_progress(self, name: str, done: int, total: int) -> None:
        if name not in self._tasks:
            self._tasks[name] = self.progress.add_task(name, total=total)
        self.progress.update(self._tasks[name], completed=done, total=total)

    def __enter__(self) -> _Session:
        self.console.print(
            f"corpus {self.store.root}; LLVM {self.compiler.llvm_version}, {self.compiler.engine_note}"
        )
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()
        self.compiler.close()
        self._write_parquet()

    def _write_parquet(self) -> None:
        if have_pyarrow() and self.store.manifest_path.is_file():
            self.store.write_parquet()

    def report(self, name: str, report: AddReport) -> None:
        self.console.print(
            f"{name}: {report.added} units added, {report.functions} function units, "
            f"{report.duplicates} duplicates, {report.failed} failed, "
            f"{report.over_limit} over the token limit"
        )


def _run_debian(args: argparse.Namespace, names: list[str]) -> int:
    with _Session(args) as session:
        results = add_debian(
            session.builder,
            names,
            work_dir=args.work_dir,
            split=args.split,
            install_build_deps=args.install_build_deps,
            force=args.force,
            jobs=args.jobs,
            progress=session.on_progress,
        )
        for name, result in results.items():
            if isinstance(result, AddReport):
                session.report(name, result)
            else:
                session.console.print(f"{name}: {result}")
    skipped = [
        name for name, result in results.items() if isinstance(result, str) and result.startswith("skipped")
    ]
    if skipped:
        Console(stderr=True).print(
            f"{len(skipped)} package(s) skipped: {', '.join(skipped)} (see failures.jsonl)"
        )
    return 0 if len(skipped) < len(results) else 1


def run_build(args: argparse.Namespace) -> int:
    names = [package.name for package in SUITES[args.package_set]]
    if args.only:
        names = [name for name in names if name in set(args.only)]
    return _run_debian(args, names)


def run_add_debian(args: argparse.Namespace) -> int:
    return _run_debian(args, list(args.packages))


def run_add_compile_commands(args: argparse.Namespace) -> int:
    with _Session(args) as session:
        report = add_compile_commands(
            session.builder,
            args.path,
            project=args.project,
            split=args.split,
            licence=args.licence,
            progress=session.on_progress,
        )
        session.report(args.project or str(args.path), report)
    return 0 if report.added or report.duplicates else 1


def run_add_files(args: argparse.Namespace) -> int:
    with _Session(args) as session:
        report = add_files(
            session.builder,
            args.paths,
            frontend_options(args),
            project=args.project,
            split=args.split,
            licence=args.licence,
            progress=session.on_progress,
        )
        session.report(args.project or "files", report)
    return 0 if report.added or report.duplicates else 1


def run_add_csmith(args: argparse.Namespace) -> int:
    with _Session(args) as session:
        cache = session.store.root / "cache"
        report = add_csmith(
            session.builder,
            args.count,
            args.seed,
            cache_dir=cache,
            split=args.split,
            progress=session.on_progress,
        )
        session.report("csmith", report)
    return 0


def run_stats(args: argparse.Namespace) -> int:
    store = _store(args)
    stats = corpus_stats(store, args.token_limit)
    if args.json:
        print(json.dumps(stats, indent=2))
        return 0
    console = Console()
    console.print(
        f"{stats['units']} translation units and {stats['function_units']} function units "
        f"from {stats['packages']} packages in {store.root}"
    )
    table = Table("package", "split", "units", "functions")
    for name, entry in stats["per_package"].items():
        table.add_row(name, entry["split"], str(entry["units"]), str(entry["functions"]))
    console.print(table)
    splits = ", ".join(
        f"{split} {entry['units']} ({entry['packages']} packages)"
        for split, entry in stats["per_split"].items()
    )
    console.print(f"splits: {splits}")
    for key in ("oz_size", "o0_size", "instructions", "tokens"):
        values = stats[key]
        if values["count"]:
            console.print(
                f"{key}: median {values['median']:,.0f}, p90 {values['p90']:,.0f}, "
                f"min {values['min']:,.0f}, max {values['max']:,.0f}"
            )
    console.print(
        f"prompts over {stats['token_limit']} tokens ({stats['token_counter']}): "
        f"{stats['over_limit_before_splitting']} units ({stats['over_limit_share']:.1%}) before splitting; "
        f"{stats['split_units']} split into {stats['function_units']} function prompts, "
        f"{stats['function_prompts_over_limit']} of which still do not fit; "
        f"{stats['prompts_fitting']} prompts fit in all"
    )
    if stats["failures"]:
        console.print("failures: " + ", ".join(f"{stage} {n}" for stage, n in stats["failures"].items()))
    if stats["leaks"]:
        console.print(f"[red]split leaks: {', '.join(stats['leaks'][:10])}[/]")
        return 1
    return 0
