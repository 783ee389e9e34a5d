"""One house: the distribution installs a single import package, ``rewardhub``.

The repository keeps its folders (``verifiers/``, ``rm_models/``, ``trainer_client/``) and
pyproject maps them into ``rewardhub``. These tests keep that mapping whole, and prove that the
built wheel lives beside the registry's own ``verifiers`` package (environments for LLM RL, whose
import name we used to take) and serves math and sandboxed code from site-packages.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
SETUPTOOLS = PYPROJECT["tool"]["setuptools"]
REGISTRY_VERIFIERS = "verifiers==0.4.0"  # the registry's package whose import name is `verifiers`


def _package_folders() -> dict[str, Path]:
    """Every import package the checkout holds, by its dotted name inside ``rewardhub``."""
    roots = {
        "rewardhub": ROOT / "rewardhub",
        **{name: ROOT / folder for name, folder in SETUPTOOLS["package-dir"].items()},
    }
    found = {}
    for name, root in roots.items():
        for init in root.rglob("__init__.py"):
            relative = init.parent.relative_to(root).parts
            found[".".join((name, *relative))] = init.parent
    return found


def test_every_package_folder_is_in_the_distribution():
    assert sorted(SETUPTOOLS["packages"]) == sorted(_package_folders())


def test_the_only_top_level_name_is_rewardhub():
    assert {name.split(".")[0] for name in SETUPTOOLS["packages"]} == {"rewardhub"}
    targets = [target.split(":")[0] for target in PYPROJECT["project"]["entry-points"]["rewardhub.verifiers"].values()]
    targets += [target.split(":")[0] for target in PYPROJECT["project"]["scripts"].values()]
    assert all(target.startswith("rewardhub.") for target in targets), targets


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(ROOT)],
        check=True,
        timeout=300,
    )
    [built] = out.glob("rewardhub-*.whl")
    return built


def test_the_wheel_holds_only_rewardhub(wheel: Path):
    with zipfile.ZipFile(wheel) as archive:
        tops = {name.split("/")[0] for name in archive.namelist() if not name.split("/")[0].endswith(".dist-info")}
        names = archive.namelist()
    assert tops == {"rewardhub"}
    assert "rewardhub/verifiers/math/verifier.py" in names
    assert "rewardhub/models/judge.py" in names
    assert "rewardhub/trainer/cli.py" in names
    assert "rewardhub/sandbox/inside/driver.py" in names


SERVE_MATH_AND_CODE = r"""
import json, sys
import verifiers  # the registry's package
import rewardhub
from rewardhub.registry import Registry
from rewardhub.types import Sample

registry = Registry.load()
math = registry.get("math")
good = math.score(Sample(id="a", response="so $\\boxed{\\frac{1}{2}}$", reference="0.5"), math.Config())
code = registry.get("code")
program = "```python\ndef add(a, b):\n    return a + b\n```"
tests = {"assert": ["assert add(1, 2) == 3", "assert add(2, 2) == 4"]}
ran = code.score(Sample(id="b", response=program, reference=tests), code.Config())
print(json.dumps({
    "rewardhub": rewardhub.__file__,
    "verifiers": verifiers.__file__,
    "math": [good.status, good.score],
    "code": [ran.status, ran.score, ran.error],
}))
"""


@pytest.mark.slow
def test_the_wheel_installs_beside_the_registry_verifiers_and_serves_math_and_code(wheel: Path, tmp_path: Path):
    """The wheel and the registry's ``verifiers`` install side by side into a fresh environment.

    Both go in without dependencies; the dependencies are this environment's, reached through a
    ``.pth`` line *after* the fresh site-packages (installing them again from the registry cost
    most of this test's 90 s and proved nothing of ours). So rewardhub and ``verifiers`` must come
    from the fresh environment, and the checkout is nowhere on the path.
    """
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    [fresh_site] = (venv / "lib").glob("python3*/site-packages")
    ours = [p for p in sys.path if p.endswith("site-packages") and Path(p).is_dir()]
    (fresh_site / "zz_dependencies.pth").write_text("\n".join(ours) + "\n")
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-deps", "--ignore-installed", REGISTRY_VERIFIERS, str(wheel)],
        check=True,
        timeout=600,
    )
    env = {key: value for key, value in os.environ.items() if key not in {"PYTHONPATH", "VIRTUAL_ENV"}}
    run = subprocess.run(
        [str(python), "-c", SERVE_MATH_AND_CODE],
        cwd=tmp_path,  # outside the checkout: nothing can come from it
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    seen = json.loads(run.stdout.strip().splitlines()[-1])
    site = str(venv)
    assert seen["rewardhub"].startswith(site) and seen["verifiers"].startswith(site), seen
    assert Path(seen["verifiers"]).parent.name == "verifiers"
    assert seen["math"] == ["ok", 1.0]
    assert seen["code"][:2] == ["ok", 1.0], seen["code"]
    shutil.rmtree(venv, ignore_errors=True)


def test_every_test_module_has_its_own_basename():
    """Tests mirror the import names in folders without ``__init__.py``: pytest imports each test file
    by its basename, so two ``test_x.py`` in two folders break collection of the whole suite."""
    names: dict[str, list[str]] = {}
    for path in (ROOT / "tests").rglob("*.py"):
        if path.name != "conftest.py":
            names.setdefault(path.name, []).append(str(path.relative_to(ROOT)))
    assert {name: paths for name, paths in names.items() if len(paths) > 1} == {}
