"""The `sciax` command: `sciax demo` and `sciax run CONFIG.toml`."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="sciax", description="sciax: a JAX SDK for scientific computing")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser(
        "demo",
        help="an ODE ensemble, a PDE run and a short inference, written as netCDF + PNG",
        description="Three short runs, each written to netCDF and a PNG figure in --out: a 10,000-member "
        "Lotka–Volterra ensemble (ensemble.*), Gray–Scott patterns on a 2-D spectral grid (pde.*) and NUTS "
        "on the lynx–hare data (posterior.*). Under two minutes on two CPU cores.",
    )
    demo.add_argument("--out", default="sciax-demo", help="output folder (default: sciax-demo)")
    demo.add_argument("--members", type=int, default=10_000, help="ensemble size (default: 10000)")
    demo.add_argument("--quick", action="store_true", help="smaller grid and fewer posterior draws (a smoke test)")
    run = sub.add_parser(
        "run",
        help="run a catalogue model from a TOML config, streamed to zarr with checkpoints",
        description="Run a catalogue model declared in a TOML config (see docs/io.md). The output is "
        "appended to a zarr store chunk by chunk and checkpointed; run the same command again after "
        "an interruption to resume from the last checkpoint.",
    )
    run.add_argument("config", help="path of the TOML config")
    run.add_argument("--overwrite", action="store_true", help="delete existing output and checkpoint, start afresh")
    run.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    if args.command == "demo":
        if args.members < 1:
            parser.error(f"--members must be >= 1, got {args.members}")
        from ._demo import main as demo_main

        demo_main(args.out, n_members=args.members, quick=args.quick)
        return 0
    return _run(args.config, overwrite=args.overwrite, progress=not args.no_progress)


def _run(config_path: str, *, overwrite: bool, progress: bool) -> int:
    """`sciax run`: validate, run, print a summary; errors as one line on stderr, exit code 1 or 2."""
    import jax

    from . import io

    try:
        config = io.load_config(config_path)
    except io.ConfigError as err:
        print(f"sciax run: invalid config: {err}", file=sys.stderr)
        return 2
    except OSError as err:  # e.g. the config path is a folder or unreadable
        print(f"sciax run: cannot read config {config_path!r}: {err.strerror or err}", file=sys.stderr)
        return 2
    if config.dtype == "float64":
        jax.config.update("jax_enable_x64", True)
    print(
        f"sciax run {config_path}: {config.model_name} with {type(config.method).__name__}, "
        f"{len(config.ts)} output times on [{config.ts[0]:g}, {config.ts[-1]:g}], {config.dtype}"
    )
    try:
        summary = io.run_config(config, overwrite=overwrite, progress=progress)
    except (io.ConfigError, io.CheckpointError, io.RunFailed, OSError) as err:
        # OSError: an output path that cannot be written (refused before the run) or a failed write;
        # the message names the path, so a traceback would add nothing for the user.
        print(f"sciax run: {err}", file=sys.stderr)
        return 1
    print(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
