"""``llm-compiler train``: fine-tune a model (or train a small one) on the task datasets, then evaluate it."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import Any

from rich.console import Console

from llm_compiler.errors import InvalidInput
from llm_compiler.files import atomic_write_text
from llm_compiler.training.data import DataSource
from llm_compiler.training.presets import LLAMA_SIZES, PRESETS

EXAMPLES = """examples:
  llm-compiler data flag-tuning 'corpus:CORPUS' --tuning runs/train --out data/flags
  llm-compiler data emulation 'corpus:CORPUS' --out data/emu
  # fine-tune a released model the paper's way (one GPU; accelerate launch for more, see configs/)
  llm-compiler train --data data/flags --data data/emu:0.2 --model facebook/llm-compiler-7b --out models/ftd
  # LoRA on one GPU, exported for llama.cpp too
  llm-compiler train --data data/flags --model facebook/llm-compiler-7b-ftd --lora --export-gguf f16 \
      --out models/lora
  # a small model from scratch on a laptop, for ten minutes
  llm-compiler train --data data/flags --data data/emu --init llama:mini --preset small --max-time 600 \
      --out models/mini
  llm-compiler train ... --out models/ftd --resume           # continue a killed run from its last checkpoint
"""


def add_parser(subparsers: Any, common: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "train",
        parents=[common],
        help="fine-tune a model, or train a small one, on the task datasets (extra [train])",
        description=(
            "Supervised fine-tuning with Hugging Face TRL on datasets written by `llm-compiler data`: the "
            "loss on the answers only, samples packed whole into the context, the paper's optimizer and "
            "schedule by default. Writes a model that hf:, vllm: (and with --export-gguf, gguf:) load, "
            "checkpoints, log.jsonl, TensorBoard logs and training.json, then evaluates the model on the "
            "test split of each task trained (--no-eval skips it)."
        ),
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    what = parser.add_argument_group("data and model")
    what.add_argument(
        "--data",
        action="append",
        required=True,
        metavar="DIR[:RATIO]",
        help="a dataset folder; RATIO takes that share of its samples (0.2: a fifth, 2: each twice)",
    )
    what.add_argument("--out", required=True, metavar="DIR", help="the output folder")
    start = what.add_mutually_exclusive_group(required=True)
    start.add_argument("--model", metavar="PATH_OR_ID", help="a saved model or a hub id to fine-tune")
    start.add_argument(
        "--init", metavar="llama:SIZE", help=f"a new, untrained Llama; SIZE: {', '.join(LLAMA_SIZES)}"
    )
    what.add_argument(
        "--tokenizer", metavar="DIR", help="the tokenizer (default: the model's; with --init, Code Llama's)"
    )
    recipe = parser.add_argument_group("recipe")
    recipe.add_argument(
        "--preset",
        choices=sorted(PRESETS),
        default="paper",
        help="paper: AdamW 0.9/0.95, cosine, 1,000 warm-up steps, final rate peak/30, peak 2e-5, "
        "RoPE 1e6, context 16,384, 4M-token batches; small: for models from scratch (default: paper)",
    )
    recipe.add_argument("--lr", type=float, metavar="RATE", help="the peak learning rate")
    recipe.add_argument("--warmup-steps", type=int, metavar="N")
    recipe.add_argument("--final-lr-ratio", type=float, metavar="R", help="the last rate over the peak")
    recipe.add_argument("--weight-decay", type=float, metavar="W")
    recipe.add_argument("--max-length", type=int, metavar="TOKENS", help="the context trained on")
    recipe.add_argument("--batch-tokens", type=int, metavar="N", help="tokens per optimizer step")
    recipe.add_argument("--rope-theta", type=float, metavar="BASE", help="the RoPE base")
    recipe.add_argument("--per-device-batch", type=int, metavar="N", help="sequences per forward (default 1)")
    recipe.add_argument("--epochs", type=float, default=1.0, metavar="N", help="passes over the data")
    recipe.add_argument("--max-steps", type=int, metavar="N", help="optimizer steps (overrides --epochs)")
    recipe.add_argument(
        "--max-time", type=float, metavar="SECONDS", help="stop and save after this much training"
    )
    recipe.add_argument("--lora", action="store_true", help="train a LoRA adapter (merged into the output)")
    recipe.add_argument("--lora-rank", type=int, default=16, metavar="R")
    recipe.add_argument("--lora-alpha", type=int, default=32, metavar="A")
    recipe.add_argument("--no-packing", action="store_true", help="one sample per sequence, padded")
    recipe.add_argument(
        "--drop-long", action="store_true", help="leave out samples longer than the context (else refuse)"
    )
    recipe.add_argument("--seed", type=int, default=0)
    recipe.add_argument(
        "--dtype",
        default="auto",
        help="weights: auto (float32; bfloat16 for a LoRA base on a GPU), float32, bfloat16",
    )
    recipe.add_argument("--device", default="auto", help="auto, cpu or cuda")
    recipe.add_argument("--gradient-checkpointing", action="store_true", help="less memory, more time")
    run = parser.add_argument_group("run")
    run.add_argument("--save-steps", type=int, default=500, metavar="N", help="steps between checkpoints")
    run.add_argument("--logging-steps", type=int, default=10, metavar="N", help="steps between log lines")
    run.add_argument("--resume", action="store_true", help="continue the run in --out from its checkpoint")
    run.add_argument("--export-gguf", choices=("f16", "f32"), help="also write model.gguf for llama.cpp")
    run.add_argument("--no-eval", action="store_true", help="skip the evaluation on the test splits")
    run.add_argument(
        "--eval-limit", type=int, default=50, metavar="N", help="test samples per task evaluated (default 50)"
    )
    parser.set_defaults(run=run_train)


def settings_from_args(args: argparse.Namespace) -> Any:
    """The :class:`~llm_compiler.training.trainer.TrainSettings` the arguments describe."""
    from llm_compiler.training.trainer import TrainSettings

    preset = PRESETS[args.preset].with_overrides(
        learning_rate=args.lr,
        warmup_steps=args.warmup_steps,
        final_lr_ratio=args.final_lr_ratio,
        weight_decay=args.weight_decay,
        max_length=args.max_length,
        batch_tokens=args.batch_tokens,
        rope_theta=args.rope_theta,
    )
    return TrainSettings(
        data=tuple(DataSource.parse(text) for text in args.data),
        out=Path(args.out).expanduser(),
        model=args.model,
        init=args.init,
        tokenizer=args.tokenizer,
        preset=preset,
        lora=args.lora,
        lora_rank=args.lora_rank,
        lora_alpha=args.lora_alpha,
        epochs=args.epochs,
        max_steps=args.max_steps,
        max_seconds=args.max_time,
        per_device_batch=args.per_device_batch,
        packing=not args.no_packing,
        drop_long=args.drop_long,
        seed=args.seed,
        save_steps=args.save_steps,
        logging_steps=args.logging_steps,
        dtype=args.dtype,
        device=args.device,
        gradient_checkpointing=args.gradient_checkpointing,
        export_gguf=args.export_gguf,
    )


def run_train(args: argparse.Namespace) -> int:
    from llm_compiler.cli.main import main
    from llm_compiler.training.after import evaluation_commands
    from llm_compiler.training.trainer import REPORT, train

    settings = settings_from_args(args)
    if not args.no_eval and args.eval_limit < 1:
        raise InvalidInput("--eval-limit must be at least 1.")
    console = Console(stderr=True)
    outcome = train(settings, resume=args.resume, console=console)
    report = outcome.report
    console.print(
        f"trained {report['steps']} steps, {report['tokens_seen']:,} tokens "
        f"in {report['train_seconds']:.0f} s "
        f"({report['tokens_per_second'] or 0:,.0f} tokens/s); loss {report['first_loss']} -> "
        f"{report['final_loss']}; model in {outcome.out}"
    )
    status = 0
    if not args.no_eval:
        tasks = list(report["data"]["per_task"])
        device = "cpu" if settings.device == "cpu" else "auto"
        evaluations = {}
        for command in evaluation_commands(settings.data, tasks, outcome.out, args.eval_limit, device):
            console.print(f"evaluating: llm-compiler {shlex.join(command.argv)}")
            code = main([*command.argv, "--json"])
            status = status or code
            evaluations[command.task] = {"command": ["llm-compiler", *command.argv], "out": str(command.out)}
        report["evaluations"] = evaluations
        atomic_write_text(outcome.out / REPORT, json.dumps(report, indent=2) + "\n")
    sys.stdout.write(json.dumps({key: report[key] for key in ("steps", "tokens_seen", "final_loss")}) + "\n")
    return status
