"""The `sciax` command."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="sciax", description="sciax: a JAX SDK for scientific computing")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="run a 10,000-member Lotka–Volterra ensemble and write netCDF + PNG")
    demo.add_argument("--out", default="sciax-demo", help="output folder (default: sciax-demo)")
    demo.add_argument("--members", type=int, default=10_000, help="ensemble size (default: 10000)")
    args = parser.parse_args(argv)
    if args.command == "demo":
        if args.members < 1:
            parser.error(f"--members must be >= 1, got {args.members}")
        from ._demo import main as demo_main

        demo_main(args.out, n_members=args.members)
    return 0


if __name__ == "__main__":
    sys.exit(main())
