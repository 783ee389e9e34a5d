"""`ServiceProcess` starts a real `rewardhub serve` child, answers at its URL, and stops it;
a child that cannot start is reported with its own log."""

import httpx
import pytest

from rewardhub.client import RewardClient
from rewardhub.server import ServiceProcess
from rewardhub.types import Sample


def test_serves_scores_then_stops(tmp_path):
    service = ServiceProcess(workers=1)
    with service as url, RewardClient(url) as client:
        results = client.score([Sample(response="7", reference="7"), Sample(response="8", reference="7")], "exact")
        assert [r.score for r in results] == [1.0, 0.0]
    with pytest.raises(httpx.TransportError):
        httpx.get(f"{url}/healthz", timeout=2)


def test_a_service_that_cannot_start_reports_its_log(tmp_path):
    broken = tmp_path / "settings.yaml"
    broken.write_text("workers: not-a-number\n")
    with pytest.raises(RuntimeError, match="did not start") as raised:
        ServiceProcess(config_file=str(broken), startup_timeout_s=30).start()
    assert "workers" in str(raised.value)
