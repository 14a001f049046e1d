"""Input/output: labelled results on disk, long runs streamed in chunks, checkpoints, run configs.

- `save(dataset_or_solution, path)`: one-shot write to netCDF (`.nc`) or zarr (`.zarr`).
- `run(model, y0, ts, params, *, method, output, chunk, checkpoint, ...)`: simulate in
  chunks, append each to a zarr store, checkpoint atomically, resume after a crash with
  bitwise-identical output. Returns a `RunSummary`; a failed chunk raises `RunFailed`.
- `read_checkpoint` / `write_checkpoint` / `Checkpoint`: the checksummed checkpoint
  format; a bad one raises `CheckpointError`.
- `load_config(path)` / `run_config(config)`: the declarative TOML runs behind
  `sciax run CONFIG.toml`; a bad config raises `ConfigError` naming the key.

See docs/io.md for the config reference.
"""

from ._checkpoint import Checkpoint, CheckpointError, read_checkpoint, write_checkpoint
from ._config import RunConfig, load_config, parse_config, run_config
from ._run import run
from ._save import save
from ._schema import ConfigError
from ._summary import RunFailed, RunSummary

__all__ = [
    "save",
    "run",
    "RunSummary",
    "RunFailed",
    "Checkpoint",
    "CheckpointError",
    "read_checkpoint",
    "write_checkpoint",
    "load_config",
    "parse_config",
    "run_config",
    "RunConfig",
    "ConfigError",
]
