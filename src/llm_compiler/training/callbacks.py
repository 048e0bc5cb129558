"""What a training run shows and writes as it goes: progress, a JSONL log, a time limit.

* :class:`ProgressCallback` draws a rich progress bar with the loss, the learning rate
  and tokens per second (tokens counted by the trainer, padding excluded).
* :class:`JsonlLog` appends every logged step to ``log.jsonl`` in the output folder
  (step, loss, learning rate, tokens seen, seconds, tokens/s) and flushes it, so a killed
  run keeps its curve; a resumed run first drops the lines past its checkpoint.
* :class:`TimeLimit` stops training (and saves) after a wall-clock budget, for runs of
  a fixed time.

They are ``transformers.TrainerCallback`` subclasses, made by functions here so that
importing this module does not import transformers.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn


def read_log(path: Path) -> list[dict[str, Any]]:
    """The records of a ``log.jsonl``; a last line torn by a kill is dropped."""
    records = []
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                break
    return records


def truncate_log(path: Path, last_step: int) -> None:
    """Keeps the records of steps up to ``last_step`` (what a resumed run continues from)."""
    kept = [record for record in read_log(path) if int(record.get("step", 0)) <= last_step]
    path.write_text("".join(json.dumps(record) + "\n" for record in kept), encoding="utf-8")


def make_callbacks(log_path: Path, console: Console | None, max_seconds: float | None) -> list[Any]:
    """The callbacks of a run: the JSONL log, progress when ``console`` is given, the time limit."""
    from transformers import TrainerCallback

    class JsonlLog(TrainerCallback):  # type: ignore[misc]
        """Appends each logged step to ``log.jsonl`` (module docstring)."""

        def __init__(self) -> None:
            self.started = time.monotonic()
            self.tokens_at_start = 0

        def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            self.started = time.monotonic()
            self.tokens_at_start = int(state.num_input_tokens_seen or 0)

        def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, **kwargs: Any) -> None:
            if not state.is_world_process_zero or not logs:
                return
            seconds = time.monotonic() - self.started
            tokens = int(state.num_input_tokens_seen or 0)
            record = {
                "step": state.global_step,
                **{key: value for key, value in logs.items() if isinstance(value, int | float)},
                "tokens": tokens,
                "seconds": round(seconds, 3),
                "tokens_per_second": round((tokens - self.tokens_at_start) / seconds, 1) if seconds else None,
            }
            with log_path.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(record) + "\n")

    class ProgressCallback(TrainerCallback):  # type: ignore[misc]
        """A rich bar: steps, loss, learning rate, tokens/s (module docstring)."""

        def __init__(self, console: Console) -> None:
            self.progress = Progress(
                TextColumn("training"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[about]}"),
                TimeElapsedColumn(),
                console=console,
                transient=False,
            )
            self.task: Any = None
            self.started = time.monotonic()
            self.tokens_at_start = 0

        def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if not state.is_world_process_zero:
                return
            self.started = time.monotonic()
            self.tokens_at_start = int(state.num_input_tokens_seen or 0)
            self.progress.start()
            self.task = self.progress.add_task(
                "train", total=state.max_steps, completed=state.global_step, about="starting"
            )

        def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, **kwargs: Any) -> None:
            if self.task is None or not logs or "loss" not in logs:
                return
            seconds = max(time.monotonic() - self.started, 1e-9)
            rate = (int(state.num_input_tokens_seen or 0) - self.tokens_at_start) / seconds
            about = f"loss {logs['loss']:.4f}  lr {logs.get('learning_rate', 0):.2e}  {rate:,.0f} tokens/s"
            self.progress.update(self.task, completed=state.global_step, about=about)

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if self.task is not None:
                self.progress.update(self.task, completed=state.global_step)

        def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if self.task is not None:
                self.progress.stop()

    class TimeLimit(TrainerCallback):  # type: ignore[misc]
        """Stops and saves once ``seconds`` of training have passed (module docstring)."""

        def __init__(self, seconds: float) -> None:
            self.seconds = seconds
            self.started = time.monotonic()
            self.hit = False

        def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            self.started = time.monotonic()

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if time.monotonic() - self.started >= self.seconds:
                self.hit = True
                control.should_training_stop = True
                control.should_save = True
                control.should_log = True

    callbacks: list[Any] = [JsonlLog()]
    if console is not None:
        callbacks.append(ProgressCallback(console))
    if max_seconds is not None:
        callbacks.append(TimeLimit(max_seconds))
    return callbacks
