"""`sciax demo`: an ODE ensemble, a PDE run and a short Bayesian inference, each written to netCDF + PNG.

1. `ensemble.nc`, `ensemble.png`: a 10,000-member Lotka–Volterra ensemble (vmap over jitted chunks).
2. `pde.nc`, `pde.png`: Gray–Scott patterns, 2-D spectral model stepped by ETDRK4.
3. `posterior.nc`, `posterior.png`: NUTS on the lynx–hare data (an `arviz.InferenceData`).
"""

from __future__ import annotations

import time
from pathlib import Path

import jax

from ._ensemble import ensemble_part, plot_ensemble, run_ensemble
from ._inference import inference_part, run_inference
from ._pde import pde_part, run_gray_scott

__all__ = ["main", "run_ensemble", "plot_ensemble", "run_gray_scott", "run_inference"]


def main(out_dir: str | Path = "sciax-demo", n_members: int = 10_000, *, quick: bool = False) -> dict:
    """Run the three parts, print a summary with timings, return `{part: {dataset/result, paths, timings}}`.

    `quick=True` uses a 32^2 grid and 2 x (40 + 40) posterior draws (for tests; same files).
    """
    import matplotlib

    matplotlib.use("Agg")  # files only: never open a window
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    print(f"sciax demo — JAX {jax.__version__} on {jax.devices()[0].platform.upper()}")
    parts, wall = {}, {}
    for name, run in (
        ("ensemble", lambda: ensemble_part(out_dir, n_members)),
        ("pde", lambda: pde_part(out_dir, n=32 if quick else 64)),
        ("inference", lambda: inference_part(out_dir, *((40, 40) if quick else (150, 150)))),
    ):
        start = time.perf_counter()
        parts[name] = run()
        wall[name] = time.perf_counter() - start
    for name, part in parts.items():
        print()
        print("\n".join(part["lines"]))
        print(f"  wrote {' and '.join(str(p) for p in part['paths'])} ({wall[name]:.1f} s for this part)")
    print(
        f"\nTotal: {sum(wall.values()):.1f} s "
        f"(ensemble {wall['ensemble']:.1f} s, PDE {wall['pde']:.1f} s, inference {wall['inference']:.1f} s)"
    )
    for part, seconds in wall.items():
        parts[part]["timings"]["total_s"] = seconds
    return parts
