"""A real ``rewardhub serve`` leaves nothing on the host: not after a clean stop, and after a kill -9
of its whole process tree nothing but its run folder, which the next start removes.

The service runs with ``TMPDIR`` set to a folder of the test's own, so everything it writes there
is its own (other tests write in /tmp at the same time). What it writes elsewhere, in /tmp or
/dev/shm under a fixed name, is caught by listing the files its processes hold open or mapped
while they serve, and checking that none of them is left.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from serve_support import needs_bubblewrap

from rewardhub.run_folder import PREFIX
from rewardhub.server import free_port

pytestmark = pytest.mark.integration

HOST_FOLDERS = ("/tmp/", "/dev/shm/")
INSTALLED = (Path(sys.prefix), Path(sys.base_prefix), Path(__file__).resolve().parents[1])
"""The interpreter, its packages and the checkout, which a clone in /tmp puts there: not the service's."""


def inline_sql(n: int) -> dict:
    """A sample on a database of its own: 2,000 rows of about 100 bytes, distinct per ``n``."""
    rows = [[i, f"db{n}-row{i}-" + "x" * 80, i * 0.25] for i in range(2000)]
    return {
        "response": "```sql\nSELECT count(*), max(price) FROM item WHERE name LIKE 'db%'\n```",
        "reference": {
            "schema": "CREATE TABLE item (id INTEGER PRIMARY KEY, name TEXT, price REAL);",
            "rows": {"item": rows},
            "gold_sql": "SELECT count(*), max(price) FROM item",
        },
    }


CODE = {"response": "```python\nprint(int(input()) * 2)\n```", "reference": {"inputs": ["2\n"], "outputs": ["4\n"]}}


@contextmanager
def service(tmpdir: Path, log: Path, *args: str) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """``rewardhub serve`` in a process group of its own with ``TMPDIR=tmpdir``, until ready."""
    port = free_port()
    env = {**os.environ, "TMPDIR": str(tmpdir), "REWARDHUB_LOG_LEVEL": "warning", "REWARDHUB_CODE_WORKERS": "1"}
    command = [sys.executable, "-m", "rewardhub.cli", "serve", "--port", str(port), "--workers", "1", *args]
    with log.open("ab") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            assert process.poll() is None and time.monotonic() < deadline, log.read_text()[-3000:]
            try:
                if httpx.get(f"{url}/readyz", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        yield process, url
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def score_every_kind(url: str) -> None:
    with httpx.Client(base_url=url, timeout=120) as client:
        for verifier, samples in [
            ("sql", [inline_sql(n) for n in range(5)]),
            ("code", [CODE]),
            ("math", [{"response": "so $\\boxed{4}$", "reference": "4"}]),
            ("exact", [{"response": "a", "reference": "a"}]),
        ]:
            answer = client.post("/v1/score", json={"verifier": verifier, "samples": samples})
            assert answer.status_code == 200, answer.text
            assert [r["score"] for r in answer.json()["results"]] == [1.0] * len(samples), answer.text


def held_host_files(root: int, *given: Path) -> set[str]:
    """Files under /tmp and /dev/shm, outside the folders ``given`` to the service (its TMPDIR,
    its log's), that the process tree under ``root`` holds open or mapped (in this mount
    namespace: a sandbox's /tmp is its own tmpfs)."""
    ours = os.readlink("/proc/self/ns/mnt")
    held: set[str] = set()
    for pid in tree(root):
        try:
            if os.readlink(f"/proc/{pid}/ns/mnt") != ours:
                continue
            targets = [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")]
            targets += [line.split(maxsplit=5)[-1].strip() for line in Path(f"/proc/{pid}/maps").open()]
        except OSError:
            continue  # it ended while being read
        held.update(t for t in targets if t.startswith(HOST_FOLDERS) and not t.endswith(" (deleted)"))
    return {path for path in held if not any(Path(path).is_relative_to(folder) for folder in (*given, *INSTALLED))}


def tree(root: int) -> set[int]:
    """``root`` and every process below it."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text() if entry.name.isdigit() else ""
        except OSError:
            continue
        if stat:
            children.setdefault(int(stat.rpartition(")")[2].split()[1]), []).append(int(entry.name))
    found, todo = set(), [root]
    while todo:
        pid = todo.pop()
        found.add(pid)
        todo.extend(children.get(pid, []))
    return found


def kill_tree(root: int) -> None:
    """SIGKILL to ``root``'s process group and to every process below it, until all are gone."""
    pids = tree(root)
    os.killpg(root, signal.SIGKILL)
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + 30
    while any(Path(f"/proc/{pid}").exists() and not _zombie(pid) for pid in pids):
        assert time.monotonic() < deadline, "the killed processes did not go"
        time.sleep(0.05)


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] == "Z"
    except OSError:
        return True


@pytest.fixture
def tmpdir_of_service() -> Iterator[Path]:
    """A short path: the fork server's socket must fit in 107 bytes under the run folder under it."""
    needs_bubblewrap()
    folder = Path(tempfile.mkdtemp(prefix="rh-leftovers-", dir="/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.parametrize(
    ("stop", "api_workers"), [(signal.SIGTERM, "1"), (signal.SIGINT, "2")], ids=["sigterm", "sigint-api-workers"]
)
def test_a_clean_stop_leaves_nothing(tmpdir_of_service: Path, tmp_path: Path, stop: int, api_workers: str) -> None:
    with service(tmpdir_of_service, tmp_path / "serve.log", "--api-workers", api_workers) as (process, url):
        score_every_kind(url)
        held = held_host_files(process.pid, tmpdir_of_service, tmp_path)
        process.send_signal(stop)
        process.wait(timeout=120)
    assert sorted(p.relative_to(tmpdir_of_service).as_posix() for p in tmpdir_of_service.rglob("*")) == []
    assert sorted(path for path in held if Path(path).exists()) == []


def test_a_killed_service_leaves_only_its_run_folder_and_the_next_start_removes_it(
    tmpdir_of_service: Path, tmp_path: Path
) -> None:
    log = tmp_path / "serve.log"
    with service(tmpdir_of_service, log, "--api-workers", "2") as (process, url):
        score_every_kind(url)
        held = held_host_files(process.pid, tmpdir_of_service, tmp_path)
        kill_tree(process.pid)
    left = [p.name for p in tmpdir_of_service.iterdir()]
    assert len(left) == 1 and left[0].startswith(PREFIX), left
    assert sorted(path for path in held if Path(path).exists()) == []
    with service(tmpdir_of_service, log) as (process, _):
        assert [p.name for p in tmpdir_of_service.iterdir() if p.name in left] == []  # swept as it started
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=120)
    assert sorted(p.relative_to(tmpdir_of_service).as_posix() for p in tmpdir_of_service.rglob("*")) == []
