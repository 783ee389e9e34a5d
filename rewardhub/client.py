"""Talking to a rewardhub service: :class:`RewardClient` and its async twin.

Both share method names and behaviour (httpx's ``Client``/``AsyncClient`` pattern): JSON in,
:class:`~rewardhub.types.Result` out, and retries with exponential backoff on what is worth
retrying: connection failures, 5xx answers and 429 (waiting at least the server's
``Retry-After``). A 4xx other than 429 is the caller's mistake and raises :class:`ClientError`
at once. Transports are injectable, so tests can use ``httpx.ASGITransport`` without a socket.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from collections.abc import Mapping, Sequence
from typing import Any

import httpx

from rewardhub.types import Result, Sample, VerifierSpec

__all__ = ["AsyncRewardClient", "ClientError", "RewardClient"]

DEFAULT_URL = "http://127.0.0.1:8000"
RETRY_STATUSES = {429, 500, 502, 503, 504}


class ClientError(Exception):
    """The service answered with an error body (or not at all after every retry)."""

    def __init__(self, message: str, status_code: int | None = None, error: Mapping[str, Any] | None = None) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.error = dict(error or {})

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle with the status and error body (a trainer's reward process sends it across)."""
        return (type(self), (str(self), self.status_code, self.error))


class _Common:
    def __init__(
        self, base_url: str | None, api_key: str | None, max_retries: int, backoff_s: float, max_backoff_s: float
    ) -> None:
        self.base_url = (base_url or os.environ.get("REWARDHUB_URL") or DEFAULT_URL).rstrip("/")
        self.headers = {"authorization": f"Bearer {api_key}"} if api_key else {}
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s

    def _delay(self, attempt: int, response: httpx.Response | None) -> float:
        delay = min(self.max_backoff_s, self.backoff_s * 2**attempt) * (0.5 + random.random() / 2)
        if response is not None and response.status_code == 429:
            try:
                delay = max(delay, float(response.headers.get("retry-after", 0)))
            except ValueError:
                pass
        return delay

    @staticmethod
    def _should_retry(response: httpx.Response) -> bool:
        return response.status_code in RETRY_STATUSES

    @staticmethod
    def _raise_for_error(response: httpx.Response) -> Any:
        try:
            body = response.json()
        except ValueError:
            body = None
        if response.is_success:
            return body
        error = body.get("error", {}) if isinstance(body, dict) else {}
        message = error.get("message") or response.text[:300]
        raise ClientError(
            f"{response.status_code} {error.get('type', 'error')}: {message}", response.status_code, error
        )

    @staticmethod
    def _score_body(
        samples: Sequence[Sample | Mapping[str, Any]],
        verifier: VerifierSpec | Mapping[str, Any] | None,
        cache: bool | None = None,
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "samples": [
                s.model_dump(mode="json", exclude_none=True) if isinstance(s, Sample) else dict(s) for s in samples
            ]
        }
        if verifier is not None:
            body["verifier"] = verifier if isinstance(verifier, str | Mapping) else verifier.model_dump(mode="json")
        if cache is not None:
            body["cache"] = cache  # false: never served from or stored in the reward cache
        return body

    @staticmethod
    def _results(body: Mapping[str, Any]) -> list[Result]:
        return [Result.model_validate(r) for r in body["results"]]


class RewardClient(_Common):
    """Synchronous client. ``with RewardClient(url) as c: c.score(samples, "math")``."""

    def __init__(
        self,
        base_url: str | None = None,
        *,
        api_key: str | None = None,
        timeout: float = 300.0,
        max_retries: int = 5,
        backoff_s: float = 0.25,
        max_backoff_s: float = 10.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        super().__init__(base_url, api_key, max_retries, backoff_s, max_backoff_s)
        self._http = httpx.Client(base_url=self.base_url, headers=self.headers, timeout=timeout, transport=transport)

    def request(self, method: str, path: str, json: Any = None) -> Any:
        for attempt in range(self.max_retries + 1):
            try:
                response = self._http.request(method, path, json=json)
            except httpx.TransportError as exc:
                if attempt == self.max_retries:
                    raise ClientError(f"cannot reach {self.base_url}: {exc!r}") from exc
                time.sleep(self._delay(attempt, None))
                continue
            if self._should_retry(response) and attempt < self.max_retries:
                time.sleep(self._delay(attempt, response))
                continue
            return self._raise_for_error(response)
        raise AssertionError("unreachable")

    def score(
        self,
        samples: Sequence[Sample | Mapping[str, Any]],
        verifier: VerifierSpec | Mapping[str, Any] | None = None,
        cache: bool | None = None,
    ) -> list[Result]:
        return self._results(self.request("POST", "/v1/score", self._score_body(samples, verifier, cache)))

    def submit_job(
        self, samples: Sequence[Sample | Mapping[str, Any]], verifier: VerifierSpec | Mapping[str, Any] | None = None
    ) -> str:
        return self.request("POST", "/v1/jobs", self._score_body(samples, verifier))["job_id"]

    def job(self, job_id: str) -> dict[str, Any]:
        return self.request("GET", f"/v1/jobs/{job_id}")

    def wait_job(self, job_id: str, poll_s: float = 0.2, timeout_s: float = 3600.0) -> list[Result]:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            state = self.job(job_id)
            if state["status"] == "done":
                return self._results(state)
            if state["status"] == "failed":
                raise ClientError(f"job {job_id} failed: {state.get('error')}")
            time.sleep(poll_s)
        raise ClientError(f"job {job_id} not done after {timeout_s}s")

    def verifiers(self) -> list[dict[str, Any]]:
        return self.request("GET", "/v1/verifiers")["verifiers"]

    def health(self) -> dict[str, Any]:
        return self.request("GET", "/healthz")

    def sandbox_run(self, code: str, language: str = "python", **options: Any) -> dict[str, Any]:
        return self.request("POST", "/v1/sandbox/run", {"language": language, "code": code, **options})

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> RewardClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncRewardClient(_Common):
    """Asynchronous twin of :class:`RewardClient` (same methods, awaited)."""

    def __init__(
        self,
        base_url: str | None = None,
        *,
        api_key: str | None = None,
        timeout: float = 300.0,
        max_retries: int = 5,
        backoff_s: float = 0.25,
        max_backoff_s: float = 10.0,
        max_connections: int = 256,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        super().__init__(base_url, api_key, max_retries, backoff_s, max_backoff_s)
        limits = httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections)
        self._http = httpx.AsyncClient(
            base_url=self.base_url, headers=self.headers, timeout=timeout, transport=transport, limits=limits
        )

    async def request(self, method: str, path: str, json: Any = None) -> Any:
        for attempt in range(self.max_retries + 1):
            try:
                response = await self._http.request(method, path, json=json)
            except httpx.TransportError as exc:
                if attempt == self.max_retries:
                    raise ClientError(f"cannot reach {self.base_url}: {exc!r}") from exc
                await asyncio.sleep(self._delay(attempt, None))
                continue
            if self._should_retry(response) and attempt < self.max_retries:
                await asyncio.sleep(self._delay(attempt, response))
                continue
            return self._raise_for_error(response)
        raise AssertionError("unreachable")

    async def score(
        self,
        samples: Sequence[Sample | Mapping[str, Any]],
        verifier: VerifierSpec | Mapping[str, Any] | None = None,
        cache: bool | None = None,
    ) -> list[Result]:
        return self._results(await self.request("POST", "/v1/score", self._score_body(samples, verifier, cache)))

    async def submit_job(
        self, samples: Sequence[Sample | Mapping[str, Any]], verifier: VerifierSpec | Mapping[str, Any] | None = None
    ) -> str:
        return (await self.request("POST", "/v1/jobs", self._score_body(samples, verifier)))["job_id"]

    async def job(self, job_id: str) -> dict[str, Any]:
        return await self.request("GET", f"/v1/jobs/{job_id}")

    async def wait_job(self, job_id: str, poll_s: float = 0.2, timeout_s: float = 3600.0) -> list[Result]:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            state = await self.job(job_id)
            if state["status"] == "done":
                return self._results(state)
            if state["status"] == "failed":
                raise ClientError(f"job {job_id} failed: {state.get('error')}")
            await asyncio.sleep(poll_s)
        raise ClientError(f"job {job_id} not done after {timeout_s}s")

    async def verifiers(self) -> list[dict[str, Any]]:
        return (await self.request("GET", "/v1/verifiers"))["verifiers"]

    async def health(self) -> dict[str, Any]:
        return await self.request("GET", "/healthz")

    async def sandbox_run(self, code: str, language: str = "python", **options: Any) -> dict[str, Any]:
        return await self.request("POST", "/v1/sandbox/run", {"language": language, "code": code, **options})

    async def close(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncRewardClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
