"""``llm-compiler train``: supervised fine-tuning on the task datasets with Hugging Face TRL.

One run: read the ``--data`` datasets' training samples, mixed by ratio
(:mod:`~llm_compiler.training.data`), tokenized as the models meet them, loss on the
answers only; load ``--model`` (a saved model or a hub id) or build an untrained Llama
(``--init llama:SIZE``, Code Llama's tokenizer); train with TRL's ``SFTTrainer`` under a
:class:`~llm_compiler.training.presets.Preset` (the paper's by default), full
fine-tuning or LoRA (peft), packing whole samples into context-long rows (best-fit
decreasing, never cutting a sample); save a model any ``hf:``/vLLM loader takes.

The output folder::

    OUT/config.json, model.safetensors, tokenizer.json ...   the trained model (LoRA merged)
    OUT/adapter/                     the LoRA adapter alone (with --lora)
    OUT/model.gguf                   with --export-gguf, for llama.cpp (gguf: backend)
    OUT/checkpoints/checkpoint-N/    what --resume continues from (every save_steps)
    OUT/log.jsonl                    step, loss, learning rate, tokens, tokens/s, as it goes
    OUT/tensorboard/                 the same for TensorBoard
    OUT/settings.json                what a resumed run must match
    OUT/training.json                the report: settings, data, steps, tokens/s, loss curve, versions

A run is deterministic for a seed: the same data order, initial weights and dropout; a
resumed run restores the optimizer, the schedule, the RNG states and the data position
from its checkpoint, so it continues the same loss curve.
"""

from __future__ import annotations

import json
import os
import re
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console

from llm_compiler.errors import InvalidInput, TrainingError
from llm_compiler.files import atomic_write_text
from llm_compiler.training.callbacks import make_callbacks, read_log, truncate_log
from llm_compiler.training.data import DataSource, TokenizedData, read_mixture, tokenize
from llm_compiler.training.presets import PRESETS, LlamaSize, Preset, batch_layout, parse_init
from llm_compiler.training.tokenizer import BOS_ID, EOS_ID, code_llama_tokenizer

CHECKPOINTS, LOG, SETTINGS, REPORT = "checkpoints", "log.jsonl", "settings.json", "training.json"


@dataclass(frozen=True)
class TrainSettings:
    """Everything a training run depends on.

    Attributes:
        data: The datasets and their ratios.
        out: The output folder.
        model: A saved model folder or a hub id to fine-tune (or None with ``init``).
        init: ``llama:SIZE``: an untrained model of that size instead of ``model``.
        tokenizer: A folder holding the tokenizer; default: the model's, or Code Llama's with ``init``.
        preset: Optimizer, schedule, context and batch.
        lora: Train a LoRA adapter (then merged) instead of every weight.
        lora_rank: The adapter's rank.
        lora_alpha: The adapter's scaling numerator.
        epochs: Passes over the data (when ``max_steps`` is not given).
        max_steps: Optimizer steps; overrides ``epochs``.
        max_seconds: Stop (and save) after this much training time.
        per_device_batch: Sequences per device and forward pass (default 1).
        packing: Pack whole samples into context-long rows.
        drop_long: Drop samples longer than the context instead of refusing them.
        seed: Seeds the data order, the initial weights and dropout.
        save_steps: Steps between checkpoints.
        logging_steps: Steps between log records.
        dtype: The weights' dtype: ``auto`` (float32; bfloat16 for a LoRA base on a GPU that has it),
            ``float32`` or ``bfloat16``. A GPU with bfloat16 computes in it either way.
        device: ``auto`` (a GPU when there is one), ``cpu`` or ``cuda``.
        gradient_checkpointing: Recompute activations in the backward pass (less memory).
        export_gguf: Also write ``model.gguf`` (``f16`` or ``f32``), or None.
    """

    data: tuple[DataSource, ...]
    out: Path
    model: str | None = None
    init: str | None = None
    tokenizer: str | None = None
    preset: Preset = field(default_factory=lambda: PRESETS["paper"])
    lora: bool = False
    lora_rank: int = 16
    lora_alpha: int = 32
    epochs: float = 1.0
    max_steps: int | None = None
    max_seconds: float | None = None
    per_device_batch: int | None = None
    packing: bool = True
    drop_long: bool = False
    seed: int = 0
    save_steps: int = 500
    logging_steps: int = 10
    dtype: str = "auto"
    device: str = "auto"
    gradient_checkpointing: bool = False
    export_gguf: str | None = None

    def __post_init__(self) -> None:
        if (self.model is None) == (self.init is None):
            raise InvalidInput("give either --model (a model to fine-tune) or --init llama:SIZE (a new one).")
        if not self.data:
            raise InvalidInput("give at least one --data DIR (a folder written by `llm-compiler data`).")
        if self.init is not None:
            parse_init(self.init)
        if self.dtype not in ("auto", "float32", "bfloat16", "float16"):
            raise InvalidInput(f"--dtype takes auto, float32, bfloat16 or float16, not {self.dtype!r}.")
        if self.export_gguf not in (None, "f16", "f32"):
            raise InvalidInput(f"--export-gguf takes f16 or f32, not {self.export_gguf!r}.")

    def identity(self) -> dict[str, Any]:
        """What a resumed run must share with the run it continues (not the time limit)."""
        return {
            "data": [[str(source.path), source.ratio] for source in self.data],
            "model": self.model,
            "init": self.init,
            "tokenizer": self.tokenizer,
            "preset": self.preset.to_json(),
            "lora": [self.lora, self.lora_rank, self.lora_alpha] if self.lora else False,
            "epochs": self.epochs,
            "max_steps": self.max_steps,
            "per_device_batch": self.per_device_batch,
            "packing": self.packing,
            "drop_long": self.drop_long,
            "seed": self.seed,
            "dtype": self.dtype,
        }


@dataclass(frozen=True)
class TrainOutcome:
    """What a finished run reports (also written as ``training.json``).

    Attributes:
        out: The model folder.
        report: The report's contents.
    """

    out: Path
    report: dict[str, Any]


def latest_checkpoint(out: Path) -> Path | None:
    """The checkpoint with the highest step under ``out/checkpoints``, if any."""
    found = [
        (int(match.group(1)), path)
        for path in (out / CHECKPOINTS).glob("checkpoint-*")
        if path.is_dir() and (match := re.fullmatch(r"checkpoint-(\d+)", path.name))
    ]
    return max(found)[1] if found else None


def _prepare_out(settings: TrainSettings, resume: bool) -> Path | None:
    """Checks the output folder; returns the checkpoint to resume from, if any."""
    out = settings.out
    stored = out / SETTINGS
    identity = settings.identity()
    if stored.is_file():
        earlier = json.loads(stored.read_text(encoding="utf-8"))
        if not resume:
            raise InvalidInput(
                f"{out} holds a training run: add --resume to continue it, or give another --out."
            )
        if earlier != identity:
            raise InvalidInput(
                f"{out} was trained with other settings; --resume needs the same ones. "
                f"Earlier: {json.dumps(earlier, sort_keys=True)}; "
                f"now: {json.dumps(identity, sort_keys=True)}."
            )
        checkpoint = latest_checkpoint(out)
        truncate_log(out / LOG, int(checkpoint.name.split("-")[1]) if checkpoint else 0)
        return checkpoint
    if resume:
        raise InvalidInput(f"--resume continues a run in --out, and {out} holds none.")
    out.mkdir(parents=True, exist_ok=True)
    return None


def load_tokenizer(settings: TrainSettings) -> Any:
    """The tokenizer: ``--tokenizer``, else the model's, else (with ``--init``) Code Llama's.

    Raises:
        TrainingError: None can be loaded; the message says what to give.
    """
    import transformers

    where = settings.tokenizer or settings.model or str(code_llama_tokenizer())
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(where)
    except (OSError, ValueError, TypeError) as error:
        raise TrainingError(
            f"no tokenizer could be loaded from {where!r} ({error}). Give --tokenizer DIR, a folder holding "
            f"tokenizer.json (a released LLM Compiler or Code Llama model's), or leave it out with --init to "
            f"build Code Llama's."
        ) from error
    if tokenizer.bos_token_id is None or tokenizer.eos_token_id is None:
        raise TrainingError(f"the tokenizer of {where!r} has no BOS or EOS token; give a Llama tokenizer.")
    tokenizer.model_max_length = 1 << 30  # lengths are checked by tokenize(), with the counts
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.unk_token or tokenizer.eos_token
    return tokenizer


def _torch_dtype(settings: TrainSettings, on_gpu: bool) -> Any:
    """The weights' dtype: float32 masters for full fine-tuning (the paper's 2e-5 steps are below
    bfloat16's resolution for most weights), bfloat16 for a frozen LoRA base on a GPU that has it.
    The forward and backward run in bfloat16 on such a GPU either way (mixed precision)."""
    import torch

    if settings.dtype == "auto":
        return (
            torch.bfloat16 if on_gpu and settings.lora and torch.cuda.is_bf16_supported() else torch.float32
        )
    return getattr(torch, settings.dtype)


def _set_rope_theta(config: Any, theta: float) -> None:
    """Sets the RoPE base in transformers 5's ``rope_parameters`` and 4's ``rope_theta``."""
    parameters = getattr(config, "rope_parameters", None)
    if isinstance(parameters, dict):
        config.rope_parameters = {**parameters, "rope_theta": theta}
    config.rope_theta = theta


def build_model(settings: TrainSettings, tokenizer: Any, dtype: Any) -> Any:
    """The model to train: ``--model`` loaded, or an untrained Llama of ``--init``'s size.

    Raises:
        TrainingError: The model cannot be loaded, or its context is shorter than the preset's.
    """
    import torch
    import transformers

    preset = settings.preset
    if settings.init is not None:
        size: LlamaSize = parse_init(settings.init)
        config = transformers.LlamaConfig(
            vocab_size=len(tokenizer),
            hidden_size=size.hidden_size,
            intermediate_size=size.intermediate_size,
            num_hidden_layers=size.num_layers,
            num_attention_heads=size.num_heads,
            num_key_value_heads=size.num_heads,
            max_position_embeddings=preset.max_length,
            rms_norm_eps=1e-5,
            bos_token_id=tokenizer.bos_token_id,
            eos_token_id=tokenizer.eos_token_id,
            tie_word_embeddings=False,
        )
        _set_rope_theta(config, preset.rope_theta)
        torch.manual_seed(settings.seed)
        return transformers.LlamaForCausalLM(config).to(dtype)
    assert settings.model is not None
    try:
        config = transformers.AutoConfig.from_pretrained(settings.model)
        _set_rope_theta(config, preset.rope_theta)
        model = transformers.AutoModelForCausalLM.from_pretrained(settings.model, config=config, dtype=dtype)
    except (OSError, ValueError) as error:
        raise TrainingError(f"transformers cannot load the model {settings.model!r}: {error}") from error
    context = int(getattr(model.config, "max_position_embeddings", 0) or 0)
    if context and context < preset.max_length:
        raise TrainingError(
            f"{settings.model} has a context of {context:,} tokens, shorter than the {preset.max_length:,} "
            f"trained on; lower --max-length to at most {context:,}."
        )
    return model


def _devices(on_gpu: bool) -> int:
    """Data-parallel replicas: accelerate's processes, else the GPUs one process drives (1 on the CPU)."""
    import torch

    world = os.environ.get("WORLD_SIZE")
    if world:
        return max(1, int(world))
    return max(1, torch.cuda.device_count()) if on_gpu else 1


def _is_out_of_memory(error: BaseException) -> bool:
    import torch

    if isinstance(error, torch.cuda.OutOfMemoryError):
        return True
    text = str(error)
    return isinstance(error, RuntimeError | MemoryError) and (
        "out of memory" in text.lower() or "DefaultCPUAllocator: can't allocate" in text or not text
    )


def train(
    settings: TrainSettings,
    *,
    resume: bool = False,
    console: Console | None = None,
    callbacks: Sequence[Any] = (),
) -> TrainOutcome:
    """Runs (or resumes) one training run; see the module docstring.

    Args:
        settings: The run.
        resume: Continue the run in ``settings.out`` from its latest checkpoint.
        console: Where progress is drawn (None: no progress bar).
        callbacks: More ``transformers.TrainerCallback`` objects.

    Raises:
        InvalidInput: Bad settings, or ``out`` does not match ``resume``.
        TrainingError: No tokenizer, data the context cannot hold, out of memory.
    """
    try:
        import datasets
        import torch
        import transformers
        from trl import SFTConfig, SFTTrainer
    except ImportError as error:
        raise TrainingError(
            f"training needs the [train] extra ({error}): pip install 'llm-compiler[train]'"
        ) from error

    started = time.monotonic()
    checkpoint = _prepare_out(settings, resume)
    preset = settings.preset
    on_gpu = settings.device != "cpu" and torch.cuda.is_available()
    if settings.device.startswith("cuda") and not on_gpu:
        raise TrainingError("--device cuda was asked for, and torch sees no GPU; use --device cpu.")
    tokenizer = load_tokenizer(settings)
    samples = read_mixture(settings.data, "train", settings.seed)
    data: TokenizedData = tokenize(samples, tokenizer, preset.max_length, drop_long=settings.drop_long)
    dtype = _torch_dtype(settings, on_gpu)
    transformers.utils.logging.disable_progress_bar()
    datasets.disable_progress_bars()
    model = build_model(settings, tokenizer, dtype)

    devices = _devices(on_gpu)
    per_device, accumulation = batch_layout(
        preset.batch_tokens, preset.max_length, devices, settings.per_device_batch
    )
    tensorboard = settings.out / "tensorboard"
    os.environ["TENSORBOARD_LOGGING_DIR"] = str(tensorboard)
    report_to = ["tensorboard"] if _have_tensorboard() else []
    config = SFTConfig(
        output_dir=str(settings.out / CHECKPOINTS),
        per_device_train_batch_size=per_device,
        gradient_accumulation_steps=accumulation,
        learning_rate=preset.learning_rate,
        adam_beta1=preset.beta1,
        adam_beta2=preset.beta2,
        weight_decay=preset.weight_decay,
        max_grad_norm=preset.max_grad_norm,
        lr_scheduler_type="cosine_with_min_lr",
        lr_scheduler_kwargs={"min_lr_rate": preset.final_lr_ratio},
        warmup_steps=preset.warmup_steps,
        num_train_epochs=settings.epochs,
        max_steps=settings.max_steps if settings.max_steps is not None else -1,
        logging_steps=settings.logging_steps,
        save_steps=settings.save_steps,
        save_total_limit=2,
        seed=settings.seed,
        data_seed=settings.seed,
        report_to=report_to,
        max_length=preset.max_length,
        packing=settings.packing,
        packing_strategy="bfd",
        completion_only_loss=True,
        shuffle_dataset=True,
        bf16=on_gpu and torch.cuda.is_bf16_supported(),
        use_cpu=not on_gpu,
        include_num_input_tokens_seen="non_padding",
        disable_tqdm=True,
        dataloader_num_workers=0,
        **_checkpointing(SFTConfig, settings.gradient_checkpointing),
    )
    peft_config = None
    if settings.lora:
        from peft import LoraConfig

        peft_config = LoraConfig(
            r=settings.lora_rank,
            lora_alpha=settings.lora_alpha,
            lora_dropout=0.0,
            target_modules="all-linear",
            task_type="CAUSAL_LM",
        )
    dataset = datasets.Dataset.from_dict(
        {"input_ids": data.input_ids, "completion_mask": data.completion_mask}
    )
    own = make_callbacks(settings.out / LOG, console, settings.max_seconds)
    with warnings.catch_warnings():
        # peft (0.21) reads transformers 5's deprecated ``is_gradient_checkpointing``: theirs to rename.
        warnings.filterwarnings(
            "ignore", message="`is_gradient_checkpointing` is deprecated", category=FutureWarning
        )
        trainer = SFTTrainer(
            model=model,
            args=config,
            train_dataset=dataset,
            processing_class=tokenizer,
            peft_config=peft_config,
            callbacks=[*own, *callbacks],
        )
    # Recorded once the run can start, so that a run refused for its data or model leaves
    # nothing that would hold back the corrected command.
    atomic_write_text(
        settings.out / SETTINGS, json.dumps(settings.identity(), indent=2, sort_keys=True) + "\n"
    )
    trainer.remove_callback(transformers.PrinterCallback)  # the progress bar and log.jsonl say it
    try:
        result = trainer.train(resume_from_checkpoint=str(checkpoint) if checkpoint else None)
    except (RuntimeError, MemoryError) as error:
        if not _is_out_of_memory(error):
            raise
        raise TrainingError(
            f"out of memory at step {trainer.state.global_step} with {per_device} sequence(s) of up to "
            f"{preset.max_length:,} tokens per device: lower --per-device-batch or --max-length, add "
            f"--gradient-checkpointing or --lora, or spread the model with a DeepSpeed ZeRO or FSDP "
            f"configuration (configs/accelerate/). --resume continues from the last checkpoint "
            f"({latest_checkpoint(settings.out) or 'none yet'})."
        ) from error
    final = _save_final(settings, trainer, tokenizer)
    seconds = time.monotonic() - started
    report = _report(settings, data, trainer, result, devices, per_device, accumulation, seconds, final)
    if settings.export_gguf:
        from llm_compiler.training.gguf_export import write_gguf

        write_gguf(settings.out, settings.out / "model.gguf", settings.export_gguf)
        report["gguf"] = str(settings.out / "model.gguf")
    atomic_write_text(settings.out / REPORT, json.dumps(report, indent=2) + "\n")
    return TrainOutcome(settings.out, report)


def _checkpointing(config_class: Any, enabled: bool) -> dict[str, bool]:
    """Activation checkpointing, on or off, named as the installed transformers names it.

    TRL turns it on unless told otherwise; it costs a third more compute, so it is off
    unless asked for (``--gradient-checkpointing``). transformers 5 calls it
    ``activation_checkpointing``, 4 ``gradient_checkpointing``.
    """
    fields = getattr(config_class, "__dataclass_fields__", {})
    return {
        "activation_checkpointing"
        if "activation_checkpointing" in fields
        else "gradient_checkpointing": enabled
    }


def _have_tensorboard() -> bool:
    try:
        import tensorboard  # noqa: F401
    except ImportError:
        return False
    return True


def _save_final(settings: TrainSettings, trainer: Any, tokenizer: Any) -> dict[str, Any]:
    """Saves the trained model (LoRA merged) and tokenizer into ``out``; returns what was saved."""
    from transformers import GenerationConfig

    model = trainer.model
    saved: dict[str, Any] = {}
    if settings.lora:
        model.save_pretrained(str(settings.out / "adapter"))
        model = model.merge_and_unload()
        saved["adapter"] = str(settings.out / "adapter")
    model.generation_config = GenerationConfig(
        bos_token_id=tokenizer.bos_token_id or BOS_ID,
        eos_token_id=tokenizer.eos_token_id or EOS_ID,
        pad_token_id=tokenizer.pad_token_id,
        do_sample=False,
    )
    model.save_pretrained(str(settings.out))
    tokenizer.save_pretrained(str(settings.out))
    # transformers 5 writes RoPE's base only under "rope_parameters"; transformers 4 and the
    # released models' config.json read it from "rope_theta".
    config_path = settings.out / "config.json"
    config = json.loads(config_path.read_text(encoding="utf-8"))
    config.setdefault(
        "rope_theta", (config.get("rope_parameters") or {}).get("rope_theta", settings.preset.rope_theta)
    )
    atomic_write_text(config_path, json.dumps(config, indent=2) + "\n")
    saved["parameters"] = int(sum(parameter.numel() for parameter in model.parameters()))
    return saved


def _report(
    settings: TrainSettings,
    data: TokenizedData,
    trainer: Any,
    result: Any,
    devices: int,
    per_device: int,
    accumulation: int,
    seconds: float,
    saved: dict[str, Any],
) -> dict[str, Any]:
    import torch
    import transformers
    import trl

    try:
        import peft

        peft_version = peft.__version__
    except ImportError:
        peft_version = None

    log = read_log(settings.out / LOG)
    losses = [record for record in log if "loss" in record]
    train_seconds = float(result.metrics.get("train_runtime", 0.0))
    tokens = int(trainer.state.num_input_tokens_seen or 0)
    return {
        "settings": settings.identity(),
        "max_seconds": settings.max_seconds,
        "data": data.to_json(),
        "devices": devices,
        "per_device_batch": per_device,
        "gradient_accumulation": accumulation,
        "steps": trainer.state.global_step,
        "max_steps": trainer.state.max_steps,
        "stopped_early": trainer.state.global_step < trainer.state.max_steps,
        "tokens_seen": tokens,
        "train_seconds": round(train_seconds, 2),
        "seconds": round(seconds, 2),
        "first_loss": losses[0]["loss"] if losses else None,
        "final_loss": losses[-1]["loss"] if losses else None,
        "loss_curve": [[record["step"], record["loss"]] for record in losses],
        "tokens_per_second": (losses[-1].get("tokens_per_second") if losses else None),
        "model": saved,
        "versions": {
            "torch": torch.__version__,
            "transformers": transformers.__version__,
            "trl": trl.__version__,
            "peft": peft_version,
        },
    }
