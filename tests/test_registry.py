"""Built-ins and plugins register the same way; a duplicate name stops start-up."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import httpx
import pytest

from rewardhub.errors import InvalidConfig, RegistryError, UnknownVerifier
from rewardhub.registry import Registry, load_plugin_file
from rewardhub.server import free_port

BUILTINS = {"exact", "choice", "format", "length"}

PLUGIN_SOURCE = textwrap.dedent(
    '''
    from rewardhub.types import Result, Sample
    from rewardhub.verifier import Verifier, VerifierConfig

    class Shout(Verifier):
        """Scores 1 when the response is all upper case."""
        name = "shout"

        def score(self, sample: Sample, config: VerifierConfig) -> Result:
            return Result.ok(float(sample.response.isupper()))
    '''
)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_builtins_come_from_entry_points():
    registry = Registry.load()
    assert BUILTINS <= set(registry.names())
    assert registry.origin("exact").startswith("entry point")


HEAVY = ("torch", "transformers", "vllm", "numpy", "scipy", "nltk")
"""What no verifier module may import at load time: each process that loads the registry (the
service, its fork servers, every Celery worker, the CLI) pays for it at start (text_similarity's
rouge-score and NLTK once cost 1.5 CPU-seconds each: scipy.stats), and model verifiers import
their backends when they first score."""


def test_loading_every_installed_verifier_imports_no_heavy_library():
    probe = (
        "import json, sys\nfrom rewardhub.registry import Registry\nregistry = Registry.load()\n"
        "for name in registry.names(): registry.verifier_class(name)\n"
        f"print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))"
    )
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120)
    assert json.loads(loaded.stdout) == []


def test_a_plugin_file_adds_its_verifiers(tmp_path):
    registry = Registry.load([write(tmp_path / "shout.py", PLUGIN_SOURCE)])
    assert "shout" in registry
    assert registry.origin("shout").startswith("plugin file")


def test_a_duplicate_name_is_an_error_not_an_override(tmp_path):
    clash = write(tmp_path / "clash.py", PLUGIN_SOURCE.replace('name = "shout"', 'name = "exact"'))
    with pytest.raises(RegistryError, match="duplicate verifier name 'exact'"):
        Registry.load([clash])


def test_a_plugin_file_without_verifiers_is_an_error(tmp_path):
    with pytest.raises(RegistryError, match="defines no Verifier"):
        load_plugin_file(write(tmp_path / "empty.py", "x = 1\n"))


def test_a_plugin_file_that_fails_to_import_is_an_error(tmp_path):
    with pytest.raises(RegistryError, match="failed to import"):
        load_plugin_file(write(tmp_path / "broken.py", "import no_such_module_here\n"))


def test_unknown_names_and_bad_configs_raise_specific_errors():
    registry = Registry.load()
    with pytest.raises(UnknownVerifier):
        registry.get("nope")
    with pytest.raises(InvalidConfig):
        registry.validate_config("exact", {"case_sensitive": [1]})


def test_rewardhub_verifiers_lists_what_is_installed(tmp_path):
    plugin = write(tmp_path / "shout.py", PLUGIN_SOURCE)
    out = subprocess.run(
        [sys.executable, "-m", "rewardhub.cli", "verifiers", "--json", "--plugin", str(plugin)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    names = {v["name"] for v in json.loads(out)}
    assert BUILTINS | {"shout"} <= names


def test_a_plugin_package_installed_by_entry_point_scores_over_http(tmp_path):
    """A throw-away distribution (module + dist-info with an entry point) on the path of a real server."""
    site = tmp_path / "site"
    write(site / "shout_plugin.py", PLUGIN_SOURCE)
    write(site / "shout_plugin-0.1.dist-info" / "METADATA", "Metadata-Version: 2.1\nName: shout-plugin\nVersion: 0.1\n")
    write(
        site / "shout_plugin-0.1.dist-info" / "entry_points.txt", "[rewardhub.verifiers]\nshout = shout_plugin:Shout\n"
    )
    port = free_port()
    env = {**os.environ, "PYTHONPATH": f"{site}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    server = subprocess.Popen(
        [sys.executable, "-m", "rewardhub.cli", "serve", "--port", str(port), "--workers", "1"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(url + "/readyz").status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.2)
        body = {"verifier": "shout", "samples": [{"response": "HELLO"}, {"response": "hello"}]}
        results = httpx.post(url + "/v1/score", json=body, timeout=30).json()["results"]
        assert [r["score"] for r in results] == [1.0, 0.0]
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_serve_refuses_to_start_with_a_duplicate_plugin(tmp_path):
    clash = write(tmp_path / "clash.py", PLUGIN_SOURCE.replace('name = "shout"', 'name = "exact"'))
    proc = subprocess.run(
        [sys.executable, "-m", "rewardhub.cli", "serve", "--port", str(free_port()), "--plugin", str(clash)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode != 0
    assert "duplicate verifier name 'exact'" in proc.stderr
