"""Accuracy tests run in float64; compiled functions are shared through module-level caches."""

import jax

jax.config.update("jax_enable_x64", True)
