"""Where tuning jobs run: this process, a local process pool, or a Dask cluster.

An executor runs jobs (a function and its arguments) and yields their results as
they complete. The local pool uses processes started fresh (``spawn``), one per core
by default; the Dask executor connects to a scheduler (``--dask-scheduler
tcp://host:8786``) or starts a ``LocalCluster`` of N single-threaded worker processes
(``--dask-local N``). Jobs are pure functions of their arguments, so every executor
gives the same results.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol

from llm_compiler.errors import LlmCompilerError

Job = tuple[Callable[..., Any], tuple[Any, ...]]


class Executor(Protocol):
    """Runs jobs and yields their results in completion order."""

    description: str

    def run(self, jobs: Sequence[Job]) -> Iterator[Any]: ...

    def close(self) -> None: ...


class InlineExecutor:
    """Runs jobs one after the other in this process (``--jobs 1``)."""

    description = "this process"

    def run(self, jobs: Sequence[Job]) -> Iterator[Any]:
        for function, arguments in jobs:
            yield function(*arguments)

    def close(self) -> None:
        pass


class LocalExecutor:
    """A pool of ``workers`` processes on this machine."""

    def __init__(self, workers: int) -> None:
        self.description = f"local pool of {workers} processes"
        self.pool = concurrent.futures.ProcessPoolExecutor(
            max_workers=workers, mp_context=multiprocessing.get_context("spawn")
        )

    def run(self, jobs: Sequence[Job]) -> Iterator[Any]:
        futures = [self.pool.submit(function, *arguments) for function, arguments in jobs]
        try:
            for future in concurrent.futures.as_completed(futures):
                yield future.result()
        finally:
            for future in futures:
                future.cancel()

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


class DaskExecutor:
    """Jobs on a Dask cluster: an existing scheduler, or a LocalCluster of N workers.

    Raises:
        LlmCompilerError: Dask is not installed (``pip install 'llm-compiler[dask]'``).
    """

    def __init__(self, scheduler: str | None = None, local_workers: int | None = None) -> None:
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError as error:
            raise LlmCompilerError(
                "The Dask backend needs dask.distributed: pip install 'llm-compiler[dask]'."
            ) from error
        self.cluster = None
        if scheduler:
            self.client = Client(scheduler)
            self.description = f"Dask scheduler {scheduler}"
        else:
            workers = local_workers or 1
            self.cluster = LocalCluster(
                n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
            )
            self.client = Client(self.cluster)
            self.description = f"Dask LocalCluster of {workers} workers"

    def run(self, jobs: Sequence[Job]) -> Iterator[Any]:
        from dask.distributed import as_completed

        futures = [self.client.submit(function, *arguments, pure=False) for function, arguments in jobs]
        try:
            for future in as_completed(futures):
                yield future.result()
        finally:
            self.client.cancel(futures)

    def close(self) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()
