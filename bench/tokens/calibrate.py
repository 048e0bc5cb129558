"""Fit the token estimator's constants to a real tokenizer, and measure its error.

Run: ``.venv/bin/python bench/tokens/calibrate.py --tokenizer PATH FILE_OR_DIR...``
(needs the ``tokenizers`` package; PATH is a ``tokenizer.json`` or a model directory).

Example, on IR and assembly of the bundled programs::

    mkdir -p /tmp/tok/ir /tmp/tok/asm
    for f in examples/*.c; do n=$(basename "$f" .c)
        clang -Oz -Xclang -disable-llvm-passes -emit-llvm -S "$f" -o /tmp/tok/ir/$n.ll
        clang -S -Oz -x ir /tmp/tok/ir/$n.ll -o /tmp/tok/asm/$n.s; done
    .venv/bin/python bench/tokens/calibrate.py --tokenizer tokenizer.json /tmp/tok/ir /tmp/tok/asm

What it does, with the pieces and features of ``llm_compiler.corpus.tokens``:

1. splits the files into training and held-out sets by program (the file name without
   its suffix, hashed), so that the IR and the assembly of one program fall together;
2. counts every file with the tokenizer (special tokens left out);
3. lexicon: the ``--words`` most frequent words and ``--punct`` most frequent
   punctuation runs of the training files, each priced exactly by the tokenizer
   (tokens of newline + piece, less tokens of the newline);
4. word and punctuation models: least squares, weighted by frequency, of the exact
   price of every other training word (punctuation run) on its features;
5. scale: total tokens over total estimate on the training files;
6. margin: the ``--quantile`` quantile of the under-count of function-sized pieces of
   the training files (a file is cut before each ``define`` and each ``.type
   NAME,@function``);
7. prints the error on the held-out files and their functions, with and without the
   margin, per folder, and the constants as Python source for ``tokens.py``.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import statistics
import sys
import textwrap
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from llm_compiler.corpus.tokens import (
    Calibration,
    EstimatedTokenCounter,
    HFTokenCounter,
    TokenizerError,
    lexicon_to_text,
    punct_features,
    split_pieces,
    word_features,
)

SUFFIXES = (".ll", ".s", ".S", ".asm")
FUNCTION_START = re.compile(r"^(?=define |\t\.type\t.*,@function)", re.M)
WORD = re.compile(r" ?[A-Za-z]+")
PUNCT = re.compile(r" ?[^\sA-Za-z0-9]+")
MIN_CHUNK_TOKENS = 50
MAX_FITTED_PIECES = 20_000


@dataclass(frozen=True)
class Sample:
    path: Path
    group: str
    text: str
    tokens: int
    held_out: bool
    parts: tuple[tuple[str, int], ...]  # function-sized pieces of at least MIN_CHUNK_TOKENS, counted


def input_files(paths: Iterable[Path]) -> list[Path]:
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files.extend(sorted(p for p in path.rglob("*") if p.suffix in SUFFIXES and p.is_file()))
        else:
            files.append(path)
    return files


def is_held_out(path: Path, fraction: float) -> bool:
    digest = hashlib.sha256(path.stem.encode()).digest()
    return int.from_bytes(digest[:8], "big") % 10_000 < fraction * 10_000


def chunks(text: str) -> list[str]:
    """The function-sized pieces of an IR or assembly file (the file when it has no functions)."""
    return [part for part in FUNCTION_START.split(text) if part.strip()]


def solve_weighted_least_squares(
    rows: Sequence[Sequence[float]], targets: Sequence[float], weights: Sequence[float]
) -> list[float]:
    """argmin_x sum_i w_i (row_i . x - y_i)^2, by the normal equations (a few columns only)."""
    n = len(rows[0])
    matrix = [[0.0] * (n + 1) for _ in range(n)]
    for row, target, weight in zip(rows, targets, weights, strict=True):
        for i in range(n):
            for j in range(n):
                matrix[i][j] += weight * row[i] * row[j]
            matrix[i][n] += weight * row[i] * target
    for i in range(n):  # a little ridge keeps unused columns at zero instead of singular
        matrix[i][i] += 1e-9
    for col in range(n):  # Gauss-Jordan with partial pivoting
        pivot = max(range(col, n), key=lambda r: abs(matrix[r][col]))
        matrix[col], matrix[pivot] = matrix[pivot], matrix[col]
        for r in range(n):
            if r != col and matrix[col][col]:
                factor = matrix[r][col] / matrix[col][col]
                matrix[r] = [a - factor * b for a, b in zip(matrix[r], matrix[col], strict=True)]
    return [matrix[i][n] / matrix[i][i] for i in range(n)]


def quantile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def fit(
    train: Sequence[Sample], tokenizer: HFTokenCounter, words: int, punct: int, quantile_q: float
) -> Calibration:
    newline = tokenizer.count("\n")

    def exact(piece: str) -> int:
        return tokenizer.count("\n" + piece) - newline

    pieces: Counter[str] = Counter()
    for sample in train:
        pieces.update(split_pieces(sample.text))
    by_frequency = [piece for piece, _ in pieces.most_common()]
    word_pieces = [p for p in by_frequency if WORD.fullmatch(p)]
    punct_pieces = [p for p in by_frequency if PUNCT.fullmatch(p) and p.isascii()]
    lexicon = {p: exact(p) for p in word_pieces[:words] + punct_pieces[:punct]}

    def model(tail: list[str]) -> list[float]:
        tail = tail[:MAX_FITTED_PIECES]
        feature = word_features if tail and WORD.fullmatch(tail[0]) else punct_features
        rows = [feature(p) for p in tail]
        return solve_weighted_least_squares(rows, [exact(p) for p in tail], [pieces[p] for p in tail])

    word_tail, punct_tail = word_pieces[words:], punct_pieces[punct:]
    w = model(word_tail) if word_tail else [0.0, 0.0, 0.0, 0.0]
    p = model(punct_tail) if punct_tail else [0.0, 1.0, 0.0]
    draft = Calibration(
        name="fitted",
        lexicon=lexicon,
        word_weights=(w[0], w[1], w[2], w[3]),
        punct_weights=(p[0], p[1], p[2]),
        scale=1.0,
        margin=0.0,
    )
    raw = EstimatedTokenCounter(draft, margin=0.0)
    scale = sum(s.tokens for s in train) / sum(raw.raw_count(s.text) for s in train)
    scaled = Calibration(draft.name, lexicon, draft.word_weights, draft.punct_weights, scale, 0.0)
    unbiased = EstimatedTokenCounter(scaled, margin=0.0)
    under = [tokens / unbiased.raw_count(part) - 1.0 for s in train for part, tokens in s.parts]
    margin = max(0.0, quantile(under, quantile_q)) if under else 0.0
    margin = round(-(-margin // 0.005) * 0.005, 3)  # up to a multiple of 0.5%
    return Calibration(draft.name, lexicon, draft.word_weights, draft.punct_weights, scale, margin)


def error_line(label: str, pairs: Sequence[tuple[float, int]]) -> str:
    """MAPE, bias, worst under- and over-count and share under-counted of (estimate, truth) pairs."""
    errors = [(estimate - truth) / truth for estimate, truth in pairs]
    under = 100 * sum(e < 0 for e in errors) / len(errors)
    return (
        f"{label:<36} n={len(errors):<5} MAPE {100 * statistics.fmean(abs(e) for e in errors):5.2f}%  "
        f"bias {100 * statistics.fmean(errors):+5.2f}%  worst under {100 * min(errors):+6.2f}%  "
        f"worst over {100 * max(errors):+6.2f}%  under-counted {under:5.1f}%"
    )


def report(label: str, samples: Sequence[Sample], calibration: Calibration) -> None:
    print(f"\n{label}")
    for margin_label, counter in (
        ("no margin", EstimatedTokenCounter(calibration, margin=0.0)),
        (f"margin {calibration.margin:.3f}", EstimatedTokenCounter(calibration)),
    ):
        groups = sorted({s.group for s in samples})
        for group in [*groups, None] if len(groups) > 1 else [None]:
            chosen = [s for s in samples if group is None or s.group == group]
            name = group or "all"
            files = [(float(counter.count(s.text)), s.tokens) for s in chosen]
            parts = [(float(counter.count(part)), tokens) for s in chosen for part, tokens in s.parts]
            print(error_line(f"{margin_label} {name} files", files))
            print(error_line(f"{margin_label} {name} functions", parts))


def python_source(calibration: Calibration) -> str:
    """The calibration as the ``LLAMA2_IR_CALIBRATION`` assignment of ``tokens.py`` (run ruff format)."""
    groups = []
    for cost, text in lexicon_to_text(calibration.lexicon).items():
        lines = textwrap.wrap(text, 90, break_on_hyphens=False, break_long_words=False)
        pieces = [line + " " for line in lines[:-1]] + lines[-1:]
        wrapped = "\n".join(f"                {piece!r}" for piece in pieces)
        groups.append(f"            {cost}: (\n{wrapped}\n            ),")
    lexicon = "\n".join(groups)
    return (
        "LLAMA2_IR_CALIBRATION: Final = Calibration(\n"
        '    name="llama2-ir",\n'
        f"    lexicon=lexicon_from_text(\n        {{\n{lexicon}\n        }}\n    ),\n"
        f"    word_weights={tuple(round(w, 4) for w in calibration.word_weights)},\n"
        f"    punct_weights={tuple(round(w, 4) for w in calibration.punct_weights)},\n"
        f"    scale={calibration.scale:.4f},\n"
        f"    margin={calibration.margin},\n"
        ")"
    )


def load(files: Iterable[Path], tokenizer: HFTokenCounter, held_out_fraction: float) -> list[Sample]:
    samples = []
    for path in files:
        text = path.read_text(errors="replace")
        counted = ((part, tokenizer.count(part)) for part in chunks(text))
        parts = tuple((part, tokens) for part, tokens in counted if tokens >= MIN_CHUNK_TOKENS)
        held_out = is_held_out(path, held_out_fraction)
        samples.append(Sample(path, path.parent.name, text, tokenizer.count(text), held_out, parts))
    return samples


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tokenizer", required=True, help="tokenizer.json or a model directory")
    parser.add_argument("paths", nargs="+", type=Path, help="IR/assembly files, or folders of them")
    parser.add_argument("--held-out", type=float, default=0.3, help="fraction of programs held out")
    parser.add_argument("--words", type=int, default=200, help="lexicon size for words")
    parser.add_argument("--punct", type=int, default=60, help="lexicon size for punctuation runs")
    parser.add_argument("--quantile", type=float, default=0.95, help="share of functions not under-counted")
    parser.add_argument(
        "--evaluate",
        nargs="+",
        type=Path,
        default=[],
        metavar="PATH",
        help="more files or folders to measure the error on, never fitted on (held-out programs only)",
    )
    args = parser.parse_args(argv)

    try:
        tokenizer = HFTokenCounter(args.tokenizer)
    except TokenizerError as error:
        parser.error(str(error))
    files = input_files(args.paths)
    if not files:
        parser.error("no IR or assembly files found")
    samples = load(files, tokenizer, args.held_out)
    extra = [s for s in load(input_files(args.evaluate), tokenizer, args.held_out) if s.held_out]
    train = [s for s in samples if not s.held_out]
    held = [s for s in samples if s.held_out]
    print(f"tokenizer {tokenizer.path}; {len(samples)} files, {sum(s.tokens for s in samples)} tokens")
    programs = len({s.path.stem for s in train})
    print(f"training on {len(train)} files ({programs} programs), holding out {len(held)}")
    calibration = fit(train, tokenizer, args.words, args.punct, args.quantile)
    print(
        f"\nscale {calibration.scale:.4f}, margin {calibration.margin}, word weights "
        f"{[round(w, 4) for w in calibration.word_weights]}, punctuation weights "
        f"{[round(w, 4) for w in calibration.punct_weights]}, lexicon {len(calibration.lexicon)} pieces"
    )
    report("training files", train, calibration)
    if held:
        report("held-out files", held, calibration)
    if extra:
        report("more held-out files, never fitted on (--evaluate)", extra, calibration)
    biggest = max(samples, key=lambda s: len(s.text)).text
    counter = EstimatedTokenCounter(calibration)
    start = time.perf_counter()
    counter.count(biggest)
    print(f"\nspeed: {len(biggest) / (time.perf_counter() - start) / 1e6:.1f} MB/s (largest file, cold)")
    print("\n# constants for src/llm_compiler/corpus/tokens.py\n" + python_source(calibration))
    return 0


if __name__ == "__main__":
    sys.exit(main())
