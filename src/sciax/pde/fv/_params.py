"""`require_params`: the check of a finite-volume model's parameter dict."""

from __future__ import annotations

import jax.numpy as jnp


def require_params(name: str, params, keys: tuple[str, ...], example: str) -> None:
    """`TypeError` unless `params` is a dict holding every key in `keys`, each a scalar."""
    if not isinstance(params, dict) or any(k not in params for k in keys):
        raise TypeError(f"{name}: params must be a dict with keys {keys}, e.g. {example}, got {params!r}")
    for k in keys:
        if jnp.ndim(params[k]) != 0:
            raise ValueError(f"{name}: params[{k!r}] must be a scalar, got shape {jnp.shape(params[k])}")
