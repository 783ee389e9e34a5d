"""Where the trainer's rewards come from: a configured URL, or a service it starts for the run through
the launcher (a child process, or a thread of the trainer), stopped when the run ends."""

from __future__ import annotations

import httpx
import pytest

from rewardhub.client import RewardClient
from rewardhub.trainer import reward_service
from rewardhub.types import Sample


@pytest.mark.integration  # starts a service
@pytest.mark.parametrize("embedded_in", ["subprocess", "thread"])
def test_an_embedded_service_scores_for_the_run_then_stops(make_config, embedded_in: str) -> None:
    cfg = make_config(reward={"embedded": True, "embedded_in": embedded_in, "embedded_workers": 1})
    with reward_service(cfg) as url, RewardClient(url) as client:
        [result] = client.score([Sample(response="7", reference="7")], "exact")
        assert result.score == 1.0
    with pytest.raises(httpx.TransportError):
        httpx.get(f"{url}/healthz", timeout=2)


def test_a_configured_url_is_used_as_it_is(make_config) -> None:
    with reward_service(make_config(reward={"url": "http://rewards.example:8000"})) as url:
        assert url == "http://rewards.example:8000"


def test_no_service_configured_is_a_clear_error(make_config) -> None:
    with pytest.raises(ValueError, match="no reward service"), reward_service(make_config()):
        pass
