"""Run configs: a TOML file that declares a catalogue model, its grid, params, initial state,
method, output times and output store — read, validated and run by `sciax run CONFIG.toml`.

Only data is read (Python's `tomllib`); names select entries of fixed registries
(`_registry.MODELS`, `_registry.METHODS`, `_initial.GENERATORS`). See docs/io.md
for the reference and an example.
"""

from __future__ import annotations

import dataclasses
import math
import os
import tomllib
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .._method import AbstractMethod
from .._model import AbstractModel
from ..pde import Grid
from ._initial import initial_state
from ._registry import METHODS, MODELS, ODE, ModelSpec, methods_for
from ._run import run
from ._schema import ConfigError, Table, unknown_key_error
from ._summary import RunSummary

SECTIONS = ("model", "grid", "params", "initial", "method", "time", "output")
_DTYPES = ("float32", "float64")


@dataclasses.dataclass(frozen=True)
class RunConfig:
    """A validated run config: everything `sciax.io.run` needs, built from catalogue names.

    `y0` is float64 NumPy (cast to `dtype` when run); `ts` the output times;
    `options` the method options (`rtol`, `atol`, `dt0`, `max_steps`); paths are
    resolved against the config file's folder.
    """

    source: str
    model_name: str
    dtype: str
    model: AbstractModel
    params: dict[str, float] | None
    y0: np.ndarray
    ts: np.ndarray
    method: AbstractMethod
    options: dict[str, Any]
    output: Path
    chunk: int
    checkpoint: bool | Path
    netcdf: Path | None


def load_config(path: str | os.PathLike) -> RunConfig:
    """Read and validate the TOML run config at `path`; `ConfigError` names any bad key."""
    path = Path(path)
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except FileNotFoundError:
        raise ConfigError(f"config file {str(path)!r} does not exist") from None
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"{path}: not valid TOML: {err}") from None
    return parse_config(data, source=str(path), base=path.parent)


def parse_config(data: dict[str, Any], *, source: str = "<config>", base: str | os.PathLike = ".") -> RunConfig:
    """Validate a config already parsed into a dict (as `tomllib` gives it); relative paths join `base`."""
    for key in data:
        if key not in SECTIONS:
            raise unknown_key_error(source, key, SECTIONS, what="section")
    for key in ("model", "initial", "method", "time", "output"):
        if key not in data:
            raise ConfigError(f"{source}: missing section [{key}]")

    def at(section: str) -> str:
        return f"{source} [{section}]"

    model_table = Table(data["model"], at("model"), ("name", "dtype"))
    name = model_table.string("name", choices=tuple(MODELS))
    dtype = model_table.string("dtype", "float32", choices=_DTYPES)
    spec = MODELS[name]
    grid = _grid(data.get("grid"), at("grid"), spec, name)
    model = spec.build() if spec.kind == ODE else _build_on_grid(spec, grid, name, at("grid"))
    params = _params(data.get("params"), at("params"), spec, name)
    y0 = initial_state(data["initial"], source, spec, grid)
    method, options, dt = _method(data["method"], at("method"), spec, name)
    ts = _times(data["time"], at("time"), dt, at("method"))
    out = Table(data["output"], at("output"), ("path", "chunk", "checkpoint", "netcdf"))
    base = Path(base)
    output = base / _path(out, "path", ".zarr")
    chunk = out.integer("chunk", 100, minimum=1)
    checkpoint = out.data.get("checkpoint", True)
    if isinstance(checkpoint, str):
        checkpoint = base / checkpoint
    elif not isinstance(checkpoint, bool):
        raise ConfigError(f"{at('output')} checkpoint: expected true, false or a path string, got {checkpoint!r:.80}")
    netcdf = None if "netcdf" not in out.data else base / _path(out, "netcdf", ".nc")
    return RunConfig(source=source, model_name=name, dtype=dtype, model=model, params=params, y0=y0, ts=ts,
                     method=method, options=options, output=output, chunk=chunk, checkpoint=checkpoint, netcdf=netcdf)


def run_config(config: RunConfig | str | os.PathLike, *, overwrite: bool = False, progress: bool = True) -> RunSummary:
    """Run a config (a `RunConfig` or the path of a TOML file) with `sciax.io.run`; see there for resuming.

    A `dtype = "float64"` config needs `jax_enable_x64` on (the `sciax run` command turns it on).
    """
    if not isinstance(config, RunConfig):
        config = load_config(config)
    if config.dtype == "float64" and not jax.config.jax_enable_x64:
        raise ConfigError(
            f"{config.source} [model] dtype: 'float64' needs jax_enable_x64; call "
            "jax.config.update('jax_enable_x64', True) before running (the `sciax run` command does this)"
        )
    y0 = jnp.asarray(config.y0, dtype=config.dtype)
    return run(config.model, y0, config.ts, config.params, method=config.method, output=config.output,
               chunk=config.chunk, checkpoint=config.checkpoint, overwrite=overwrite, netcdf=config.netcdf,
               progress=progress, description=config.model_name, **config.options,
               attrs={"model": config.model_name, "method": type(config.method).__name__, "config": config.source})


def _grid(data: Any, where: str, spec: ModelSpec, name: str) -> Grid | None:
    if spec.kind == ODE:
        if data is not None:
            raise ConfigError(f"{where}: {name!r} is an ODE model and takes no grid; remove this section")
        return None
    if data is None:
        raise ConfigError(f"{where}: missing section; {name!r} is a PDE and needs shape and lengths")
    t = Table(data, where, ("shape", "lengths", "origin"))
    shape = t.numbers("shape", integer=True, scalar_ok=True)
    if len(shape) not in spec.ndims or not all(n >= 2 for n in shape):
        dims = " or ".join(map(str, spec.ndims))
        raise ConfigError(f"{where} shape: {name!r} needs {dims} dimension(s), each of >= 2 points; got {shape!r}")
    lengths = t.numbers("lengths", positive=True, scalar_ok=True)
    if len(lengths) not in (1, len(shape)):
        raise ConfigError(f"{where} lengths: expected one number or {len(shape)} (one per axis of shape), got {lengths!r}")
    origin = t.numbers("origin", None, length=len(shape), scalar_ok=False)
    return Grid(tuple(shape), tuple(lengths), origin)


def _build_on_grid(spec: ModelSpec, grid: Grid, name: str, where: str) -> AbstractModel:
    try:
        return spec.build(grid)
    except (ValueError, TypeError) as err:
        raise ConfigError(f"{where}: this grid does not suit {name!r}: {err}") from None


def _params(data: Any, where: str, spec: ModelSpec, name: str) -> dict[str, float] | None:
    allowed = spec.params + tuple(k for k, _ in spec.optional)
    if data is None:
        if spec.params:
            raise ConfigError(f"{where}: missing section; {name!r} needs params {', '.join(spec.params)}")
        data = {}
    t = Table(data, where, allowed)
    values = {key: t.number(key) for key in spec.params}
    values.update({key: t.number(key, default) for key, default in spec.optional})
    return values or None


def _method(data: Any, where: str, spec: ModelSpec, model_name: str) -> tuple[AbstractMethod, dict, float | None]:
    choices = methods_for(spec.kind)
    name = Table(data, where, None).string("name", choices=choices)  # the name decides the other keys
    method_spec = METHODS[name]
    if method_spec.step == "dt":
        t = Table(data, where, ("name", "dt"))
        dt = t.number("dt", positive=True)
        if method_spec.dt_option:
            return method_spec.build(), {"dt0": dt}, dt
        return method_spec.build(dt=dt), {}, dt
    t = Table(data, where, ("name", "rtol", "atol", "dt0", "max_steps"))
    options = {key: t.number(key, positive=True) for key in ("rtol", "atol", "dt0") if key in t.data}
    if "max_steps" in t.data:
        options["max_steps"] = t.integer("max_steps", minimum=1)
    return method_spec.build(), options, None


def _times(data: Any, where: str, dt: float | None, method_where: str) -> np.ndarray:
    t = Table(data, where, ("start", "end", "save_every"))
    start = t.number("start", 0.0)
    end = t.number("end")
    if not end > start:
        raise ConfigError(f"{where} end: expected a number > start ({start:g}), got {end!r}")
    every = t.number("save_every", positive=True)
    n = _whole((end - start) / every)
    if n is None:
        raise ConfigError(f"{where} save_every: expected a value dividing end - start = {end - start:g} "
                          f"into a whole number of intervals, got {every:g} ({(end - start) / every:g} intervals)")
    if dt is not None and _whole(every / dt) is None:
        raise ConfigError(f"{method_where} dt: the method takes fixed steps, so dt must divide [time] save_every "
                          f"= {every:g} into a whole number of steps; got dt = {dt:g} ({every / dt:g} steps)")
    return start + every * np.arange(n + 1)


def _whole(x: float) -> int | None:
    n = round(x)
    return n if n >= 1 and math.isclose(x, n, rel_tol=1e-9, abs_tol=1e-9) else None


def _path(t: Table, key: str, suffix: str) -> str:
    value = t.string(key)
    if not value.endswith(suffix):
        raise ConfigError(f"{t.where} {key}: expected a path ending in {suffix}, got {value!r}")
    return value
