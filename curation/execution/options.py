"""The CLI options that choose an executor, shared by `benchsmith run` and `benchsmith extract`."""

from __future__ import annotations

from typing import Annotated

import typer

ExecutorOption = Annotated[str, typer.Option("--executor", help="local: this machine (a process pool sized to the "
                                             "cores; in-process for a single model or PDF) | ray: a Ray cluster "
                                             "(pip install 'benchsmith[ray]')")]
RayAddressOption = Annotated[str | None, typer.Option("--ray-address", help="auto (default: RAY_ADDRESS or the cluster "
                                                      "started on this machine), HOST:PORT or ray://HOST:PORT",
                                                      show_default=False)]
WorkersOption = Annotated[int | None, typer.Option("--workers", min=1, help="local processes (default: the cores)",
                                                   show_default=False)]
MaxAttemptsOption = Annotated[int, typer.Option("--max-attempts", min=1, help="tries per shard before it is "
                                                "reported as failed")]
