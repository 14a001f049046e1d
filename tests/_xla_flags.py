"""XLA:CPU flags for the test processes: cheap code generation, the same IEEE arithmetic.

Two-thirds of the suite's time is XLA compiling programs that then run for milliseconds.
The tests ask for LLVM -O0 without its expensive passes (what `jax_disable_most_optimizations`
sets) and, on jaxlib 0.10, the pre-MLIR fusion emitters, which compile faster: 1,277 s
instead of 2,055 s for the whole suite on jaxlib 0.10.2 and 2 cores. Neither turns on
fast-math or reassociation. Set `SCIAX_TEST_XLA_OPTIMIZE=1` to test fully optimised code.
Importing this module must not import jax: the flags are read when the backend starts.
"""

import os
from importlib.metadata import version


def fast_compile_flags() -> list[str]:
    """The flags, or none when `SCIAX_TEST_XLA_OPTIMIZE=1`."""
    if os.environ.get("SCIAX_TEST_XLA_OPTIMIZE") == "1":
        return []
    flags = ["--xla_backend_optimization_level=0", "--xla_llvm_disable_expensive_passes=true"]
    if version("jaxlib").startswith("0.10."):  # later jaxlibs dropped the flag and reject unknown flags
        flags.append("--xla_cpu_use_fusion_emitters=false")
    return flags


def add_to_environment(*extra: str) -> None:
    """Appends the flags (and `extra`) to `XLA_FLAGS` of this process and its children."""
    os.environ["XLA_FLAGS"] = " ".join([os.environ.get("XLA_FLAGS", ""), *fast_compile_flags(), *extra]).strip()
