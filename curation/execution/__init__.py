"""Where work runs: the executor seam (this process, a local process pool, Ray), the one dispatch
that chooses between them (`dispatch`), the shard driver loop with its retries, its progress bar,
the CLI options that choose an executor, and work in a background thread (`background`). It imports
nothing of curation but `core.errors`."""
