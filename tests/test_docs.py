"""The documentation site: `mkdocs build --strict` passes, the API reference renders the
public names, every page is in the nav, and the code on the tutorial pages runs."""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

# Pages whose ```python blocks are executed, in order, in one namespace (float64).
EXECUTED_PAGES = ["getting-started.md", "guides/custom-equation.md", "guides/custom-solver.md"]

# API page -> the module whose public names (`__all__`) it must render.
API_PAGES = {
    "api/grid.md": "sciax.grid",
    "api/ode.md": "sciax.ode",
    "api/pde.md": "sciax.pde",
    "api/pde-spectral.md": "sciax.pde.spectral",
    "api/pde-fd.md": "sciax.pde.fd",
    "api/pde-fv.md": "sciax.pde.fv",
    "api/pde-waves.md": "sciax.pde.waves",
    "api/pde-seismic.md": "sciax.pde.seismic",
    "api/pde-learned.md": "sciax.pde.learned",
    "api/linalg.md": "sciax.linalg",
    "api/prob.md": "sciax.prob",
    "api/parallel.md": "sciax.parallel",
    "api/io.md": "sciax.io",
}
if (ROOT / "src" / "sciax" / "plot" / "__init__.py").exists():
    API_PAGES["api/plot.md"] = "sciax.plot"

# Re-exports of other libraries: documented in prose (docs/ode.md), not by mkdocstrings,
# which documents sciax's own source only.
EXTERNAL = {"sciax.ode": {"RecursiveCheckpointAdjoint", "BacksolveAdjoint", "ForwardMode"}}


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["NO_MKDOCS_2_WARNING"] = "1"  # material's banner about its successor, not a build problem
    env["MPLBACKEND"] = "Agg"
    return env


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, f"mkdocs build --strict failed:\n{proc.stdout}\n{proc.stderr}"
    return out


def _html(site: Path, page: str) -> str:
    return (site / page.removesuffix(".md") / "index.html").read_text(encoding="utf-8")


def _nav_pages(nav) -> list[str]:
    pages = []
    for item in nav:
        value = next(iter(item.values())) if isinstance(item, dict) else item
        if isinstance(value, list):
            pages += _nav_pages(value)
        elif isinstance(value, str) and not re.match(r"https?://", value):
            pages.append(value)
    return pages


def test_strict_build_renders_the_core_api(site):
    html = _html(site, "api/core.md")
    for name in ("sciax.simulate", "sciax.Solution", "sciax.AbstractModel", "sciax.AbstractMethod"):
        assert f'id="{name}"' in html, f"{name} is missing from the API reference"
    assert "to_xarray" in html and "simulate" in html


@pytest.mark.parametrize("page", sorted(API_PAGES))
def test_api_page_renders_every_public_name(site, page):
    module_name = API_PAGES[page]
    module = importlib.import_module(module_name)
    html = _html(site, page)
    skip = EXTERNAL.get(module_name, set())
    missing = [
        name
        for name in module.__all__
        if name not in skip
        and not isinstance(getattr(module, name), type(module))  # submodules have their own page
        and f'id="{module_name}.{name}"' not in html
    ]
    assert not missing, f"{page}: public names of {module_name} not rendered: {missing}"


def test_every_page_is_in_the_nav():
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    in_nav = set(_nav_pages(config["nav"]))
    on_disk = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    assert not (on_disk - in_nav), f"pages not in the nav of mkdocs.yml: {sorted(on_disk - in_nav)}"
    assert not (in_nav - on_disk), f"nav entries without a page: {sorted(in_nav - on_disk)}"
    assert set(EXECUTED_PAGES) <= in_nav


_RUNNER = textwrap.dedent(
    """
    import re, sys
    path = sys.argv[1]
    text = open(path, encoding="utf-8").read()
    blocks = re.findall(r"^```python\\n(.*?)^```", text, flags=re.S | re.M)
    assert blocks, f"no python blocks in {path}"
    namespace = {"__name__": "__docs__"}
    for i, block in enumerate(blocks):
        exec(compile(block, f"{path} [python block {i + 1}]", "exec"), namespace)
    print(f"ran {len(blocks)} blocks")
    """
)


@pytest.mark.parametrize("page", EXECUTED_PAGES)
def test_page_code_runs(page, tmp_path):
    """Every ```python block of the page, in order, in a fresh process (float64, files in tmp)."""
    env = _env()
    env["JAX_ENABLE_X64"] = "1"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"), env.get("PYTHONPATH")]))
    proc = subprocess.run(
        [sys.executable, "-c", _RUNNER, str(DOCS / page)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, f"code on {page} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}"
    assert "ran " in proc.stdout
