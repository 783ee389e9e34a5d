"""The Docker images the ``docker`` tests run on, built where those tests run.

``scripts/build_sandbox_image.sh`` tags each image by a hash of its inputs (the suite, the tier,
the package list, its recipe), so a machine that has built one re-tags it in seconds. ``.ci/run``
starts both builds early, in the background, while pip installs; a test that needs an image runs
the same script, which waits for a build in progress (a lock per tag) and builds what is missing.
So ``pytest -m "not docker"`` never builds an image, and a developer running one docker test gets
its image without a separate step. A failed build is a skip that says why, as a missing engine is.
"""

from __future__ import annotations

import os
import subprocess
from functools import cache
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "build_sandbox_image.sh"
BUILD_TIMEOUT_S = 1800
"""A first build fetches every package of the list (debootstrap); about 2 minutes on 2 idle cores."""


@cache
def image_missing(image: str, *build_args: str) -> str | None:
    """Why ``image`` cannot be used here, or None: present already, or built now by the script
    with ``build_args`` (``--tier full``, ``--base``). Each (image, arguments) is tried once per
    process."""
    if _present(image):
        return None
    if not image.endswith(":latest") or not image.startswith(("rewardhub-sandbox-runtime", "rewardhub-debian-base")):
        return f"no image {image} (it is not one scripts/build_sandbox_image.sh builds)"
    try:
        built = subprocess.run(
            ["sh", str(SCRIPT), *build_args], capture_output=True, text=True, timeout=BUILD_TIMEOUT_S
        )
    except subprocess.TimeoutExpired:
        return f"building {image} took over {BUILD_TIMEOUT_S} s (scripts/build_sandbox_image.sh {' '.join(build_args)})"
    if built.returncode != 0 or not _present(image):
        tail = (built.stderr or built.stdout)[-500:]
        return f"could not build {image} (scripts/build_sandbox_image.sh {' '.join(build_args)}): {tail}"
    return None


def runtime_tier() -> str:
    """The sandbox runtime's tier: what .ci/run builds (``REWARDHUB_CI_IMAGE_TIER``), full by default."""
    return os.environ.get("REWARDHUB_CI_IMAGE_TIER", "full")


def _present(image: str) -> bool:
    inspected = subprocess.run(["docker", "image", "inspect", image], capture_output=True, timeout=60)
    return inspected.returncode == 0
