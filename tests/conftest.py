"""Accuracy tests run in float64; compiled functions are shared through module-level caches."""

from tests._xla_flags import add_to_environment

add_to_environment()  # before any test starts the XLA backend

import jax  # noqa: E402
import pytest  # noqa: E402

jax.config.update("jax_enable_x64", True)

# Modules whose compiled programs are large (unrolled per-member kernels, DAE/DDE loops) and
# not shared with other modules: their executables are dropped when the module ends, so a
# long-lived xdist worker does not carry them into the memory-hungry tests that follow.
_HEAVY_MODULES = ("test_simulate_ensemble", "test_ensemble_sde", "test_dae", "test_dde", "test_dde_stiff")


@pytest.fixture(autouse=True, scope="module")
def _drop_heavy_executables(request):
    yield
    if request.module.__name__.rsplit(".", 1)[-1] in _HEAVY_MODULES:
        jax.clear_caches()
