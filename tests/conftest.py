"""Accuracy tests run in float64; compiled functions are shared through module-level caches."""

from tests._xla_flags import add_to_environment

add_to_environment()  # before any test starts the XLA backend

import pathlib  # noqa: E402

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


# The longest test files (seconds in a leg-1 run on a 2-core session machine, 2026-11-27) go first:
# xdist hands out whole files (`--dist loadfile --no-loadscope-reorder`, see the Makefile), so a long
# file handed out last would keep one core busy while the other idles at the end of the run.
_LONGEST_FIRST = (
    "parallel/test_parallel.py",  # 94 s: the 8-device and 2-process subprocesses
    "notebooks/test_dae_and_delay_equations_notebook.py",  # 80 s
    "ode/test_bdf.py",  # 73 s
    "ode/test_dae.py",  # 72 s
    "prob/test_lotka_volterra.py",  # 54 s
    "ode/test_dde.py",  # 47 s
    "ode/test_simulate_ensemble.py",  # 43 s
    "ode/test_dde_stiff.py",  # 41 s
    "ode/test_rosenbrock.py",  # 40 s
    "prob/test_notebooks.py",  # 37 s
    "test_docs.py",  # 34 s
    "prob/test_svi.py",  # 32 s
)


def pytest_collection_modifyitems(config, items):
    tests = pathlib.Path(__file__).parent
    missing = [name for name in _LONGEST_FIRST if not (tests / name).is_file()]
    assert not missing, f"tests/conftest.py: _LONGEST_FIRST names files that do not exist: {missing}"
    rank = {name: i for i, name in enumerate(_LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0].removeprefix("tests/"), len(rank)))
