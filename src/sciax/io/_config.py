"""Run configs: a TOML file that declares a catalogue model, its grid, params, initial state,
method, output times and output store — read, validated and run by `sciax run CONFIG.toml`.

Only data is read (Python's `tomllib`); names select entries of fixed registries
(`_registry.MODELS`, `_registry.METHODS`, `_registry.BOUNDARIES`, `_initial.GENERATORS`). See docs/io.md
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
from ._registry import BOUNDARIES, FD, METHODS, MODELS, ODE, ModelSpec, methods_for
from ._run import run
from ._schema import ConfigError, Table, unknown_key_error
from ._summary import RunSummary

SECTIONS = ("model", "grid", "params", "initial", "method", "time", "output")
_DTYPES = ("float32", "float64")


@dataclasses.dataclass(frozen=True)
class RunConfig:
    """A validated run config: everything `sciax.io.run` needs, built from catalogue names.

    `y0` is float64 NumPy, a dict of such arrays for multi-field FD models (cast to
    `dtype` when run); `ts` the output times;
    `options` the method options (`rtol`, `atol`, `dt0`, `max_steps`); paths are
    resolved against the config file's folder.
    """

    source: str
    model_name: str
    dtype: str
    model: AbstractModel
    params: dict[str, Any] | None
    y0: np.ndarray | dict[str, np.ndarray]
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

    # The name decides which other [model] keys are allowed, so it is read first.
    name = Table(data["model"], at("model"), None).string("name", choices=tuple(MODELS))
    spec = MODELS[name]
    model_table = Table(data["model"], at("model"), ("name", "dtype", *(key for key, _ in spec.options)))
    dtype = model_table.string("dtype", "float32", choices=_DTYPES)
    options = _model_options(model_table, spec)
    grid, bc = _grid(data.get("grid"), at("grid"), spec, name)
    model = spec.build() if spec.kind == ODE else _build_on_grid(spec, grid, bc, options, name, at("grid"))
    params = _params(data.get("params"), at("params"), spec, name, grid)
    y0 = initial_state(data["initial"], source, spec, grid)
    method, options, dt = _method(data["method"], at("method"), spec, name)
    ts = _times(data["time"], at("time"), dt, at("method"))
    if dt is not None and spec.kind == FD:
        _check_stable(method, model, params, dt, at("method"), at("params"))
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
    return RunConfig(
        source=source,
        model_name=name,
        dtype=dtype,
        model=model,
        params=params,
        y0=y0,
        ts=ts,
        method=method,
        options=options,
        output=output,
        chunk=chunk,
        checkpoint=checkpoint,
        netcdf=netcdf,
    )


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
    y0 = jax.tree_util.tree_map(lambda a: jnp.asarray(a, dtype=config.dtype), config.y0)
    return run(
        config.model,
        y0,
        config.ts,
        config.params,
        method=config.method,
        output=config.output,
        chunk=config.chunk,
        checkpoint=config.checkpoint,
        overwrite=overwrite,
        netcdf=config.netcdf,
        progress=progress,
        description=config.model_name,
        **config.options,
        attrs={"model": config.model_name, "method": type(config.method).__name__, "config": config.source},
    )


def _model_options(t: Table, spec: ModelSpec) -> dict[str, Any]:
    """The extra `[model]` keys of `spec` (e.g. FD stencil `order`, advection `scheme`), defaults filled in."""
    out = {}
    for key, allowed in spec.options:
        if isinstance(allowed[0], str):
            out[key] = t.string(key, allowed[0], choices=allowed)
        else:
            value = t.integer(key, allowed[0])
            if value not in allowed:
                raise ConfigError(f"{t.where} {key}: expected one of {', '.join(map(str, allowed))}, got {value!r}")
            out[key] = value
    return out


def _grid(data: Any, where: str, spec: ModelSpec, name: str) -> tuple[Grid | None, Any]:
    """The grid and, for FD models, the boundary conditions."""
    if spec.kind == ODE:
        if data is not None:
            raise ConfigError(f"{where}: {name!r} is an ODE model and takes no grid; remove this section")
        return None, None
    if data is None:
        raise ConfigError(f"{where}: missing section; {name!r} is a PDE and needs shape and lengths")
    fd_keys = ("bc", "bc_value", "points")  # walls, and where the points sit between them
    if spec.kind != FD and isinstance(data, dict) and any(key in data for key in fd_keys):
        key = next(key for key in fd_keys if key in data)
        raise ConfigError(
            f"{where}: unknown key {key!r}; {name!r} is a spectral model, periodic on every axis "
            "(boundary conditions and points are for the fd_* models); allowed: lengths, origin, shape"
        )
    t = Table(data, where, ("shape", "lengths", "origin", *(fd_keys if spec.kind == FD else ())))
    shape = t.numbers("shape", integer=True, scalar_ok=True)
    if len(shape) not in spec.ndims or not all(n >= 2 for n in shape):
        dims = " or ".join(map(str, spec.ndims))
        raise ConfigError(f"{where} shape: {name!r} needs {dims} dimension(s), each of >= 2 points; got {shape!r}")
    lengths = t.numbers("lengths", positive=True, scalar_ok=True)
    if len(lengths) not in (1, len(shape)):
        raise ConfigError(
            f"{where} lengths: expected one number or {len(shape)} (one per axis of shape), got {lengths!r}"
        )
    origin = t.numbers("origin", None, length=len(shape), scalar_ok=True)
    points = t.string("points", "start", choices=("start", "centre")) if spec.kind == FD else "start"
    grid = Grid(tuple(shape), tuple(lengths), origin, points=points)
    return grid, (_boundaries(t, grid) if spec.kind == FD else None)


def _boundaries(t: Table, grid: Grid) -> tuple:
    """`bc = "neumann"` (every axis) or one name per axis; `bc_value` the Dirichlet value / Neumann flux."""
    names = t.data.get("bc")
    expected = f"one of {', '.join(map(repr, BOUNDARIES))}, or an array of {grid.ndim} of them (one per axis)"
    if names is None:
        raise ConfigError(f"{t.where}: missing key 'bc'; finite-difference models need boundary conditions: {expected}")
    items = [names] if isinstance(names, str) else names
    if not isinstance(items, list) or len(items) not in (1, grid.ndim) or not all(isinstance(b, str) for b in items):
        raise ConfigError(f"{t.where} bc: expected {expected}, got {names!r:.80}")
    for b in items:
        if b not in BOUNDARIES:
            raise unknown_key_error(f"{t.where} bc", b, BOUNDARIES, what="value")
    value = t.number("bc_value", 0.0)
    if value != 0.0 and all(b == "periodic" for b in items):
        raise ConfigError(f"{t.where} bc_value: periodic boundaries take no value; remove bc_value")

    def make(b: str):
        return BOUNDARIES[b]() if b == "periodic" else BOUNDARIES[b](value)

    return tuple(make(b) for b in items * (grid.ndim if len(items) == 1 else 1))


def _build_on_grid(spec: ModelSpec, grid: Grid, bc, options: dict, name: str, where: str) -> AbstractModel:
    try:
        return spec.build(grid) if spec.kind != FD else spec.build(grid, bc=bc, **options)
    except (ValueError, TypeError) as err:
        raise ConfigError(f"{where}: this grid does not suit {name!r}: {err}") from None


def _params(data: Any, where: str, spec: ModelSpec, name: str, grid: Grid | None) -> dict[str, Any] | None:
    allowed = spec.params + spec.vectors + tuple(k for k, _ in spec.optional)
    if data is None:
        if spec.params or spec.vectors:
            raise ConfigError(
                f"{where}: missing section; {name!r} needs params {', '.join(spec.params + spec.vectors)}"
            )
        data = {}
    t = Table(data, where, allowed)
    values: dict[str, Any] = {key: t.number(key, positive=key in spec.positive) for key in spec.params}
    # A vector param has one component per grid axis (e.g. a velocity).
    values.update({key: tuple(t.numbers(key, length=grid.ndim)) for key in spec.vectors})
    values.update({key: t.number(key, default) for key, default in spec.optional})
    return values or None


def _method(data: Any, where: str, spec: ModelSpec, model_name: str) -> tuple[AbstractMethod, dict, float | None]:
    choices = methods_for(spec.kind)
    name = Table(data, where, None).string("name", choices=choices)  # the name decides the other keys
    method_spec = METHODS[spec.kind][name]
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


def _check_stable(method: AbstractMethod, model: AbstractModel, params, dt: float, where: str, params_where: str):
    """A fixed step beyond the method's stability (CFL) limit is a config error, found before anything runs."""
    stable_dt = getattr(method, "stable_dt", None)
    if stable_dt is None:
        return
    try:
        limit = stable_dt(model, params)
    except (ValueError, TypeError) as err:
        raise ConfigError(f"{params_where}: {err}") from None
    if limit is not None and dt > float(limit):
        raise ConfigError(
            f"{where} dt: {type(method).__name__} is unstable for this model, grid and params above "
            f"dt = {float(limit):.6g} (CFL condition); got dt = {dt:g}. Use a smaller dt, or an "
            "implicit method (CrankNicolson, BackwardEuler) or an adaptive one (Kvaerno5)"
        )


def _times(data: Any, where: str, dt: float | None, method_where: str) -> np.ndarray:
    t = Table(data, where, ("start", "end", "save_every"))
    start = t.number("start", 0.0)
    end = t.number("end")
    if not end > start:
        raise ConfigError(f"{where} end: expected a number > start ({start:g}), got {end!r}")
    every = t.number("save_every", positive=True)
    n = _whole((end - start) / every)
    if n is None:
        raise ConfigError(
            f"{where} save_every: expected a value dividing end - start = {end - start:g} "
            f"into a whole number of intervals, got {every:g} ({(end - start) / every:g} intervals)"
        )
    if dt is not None and _whole(every / dt) is None:
        raise ConfigError(
            f"{method_where} dt: the method takes fixed steps, so dt must divide [time] save_every "
            f"= {every:g} into a whole number of steps; got dt = {dt:g} ({every / dt:g} steps)"
        )
    return start + every * np.arange(n + 1)


def _whole(x: float) -> int | None:
    n = round(x)
    return n if n >= 1 and math.isclose(x, n, rel_tol=1e-9, abs_tol=1e-9) else None


def _path(t: Table, key: str, suffix: str) -> str:
    value = t.string(key)
    if not value.endswith(suffix):
        raise ConfigError(f"{t.where} {key}: expected a path ending in {suffix}, got {value!r}")
    return value
