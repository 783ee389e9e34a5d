"""Sessions for trainers that drive tools: one stateful sandbox per rollout, over HTTP only.

- :class:`Session`: a handle on ``/v1/sessions`` (open, run, test, close) through the process's
  shared client, which waits out a 429's ``Retry-After`` (creation bursts) by itself.
- :class:`PythonSandboxEnvironment` and :class:`BashSandboxEnvironment`: TRL's
  ``GRPOTrainer(environment_factory=...)`` (TRL >= 1.x): one instance per rollout, ``reset`` opens a
  fresh session with the example's ``files``, the one public method (``python`` or ``bash``) is the
  tool the model calls, and ``get_reward`` runs the example's ``test_command`` on the session's files.
- :func:`python_tool`: a plain tool function for ``GRPOTrainer(tools=[...])``, where TRL keeps no
  state per rollout: each call runs in a session of its own (no variables survive a call).

What a tool call returns to the model is :func:`observation`: the output, and the verdict when it is
not ``ok``, so a model sees its own timeout or crash; a session that is gone raises, so an
infrastructure failure is never mistaken for the model's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rewardhub.integrations.common import ServiceSpec, service_spec, shared_client
from rewardhub.messages import observation

__all__ = ["BashSandboxEnvironment", "PythonSandboxEnvironment", "Session", "observation", "python_tool"]


class Session:
    """One session of the service (``POST /v1/sessions``), closed by :meth:`close` or its TTL."""

    def __init__(
        self,
        runtime: str = "python",
        files: Mapping[str, str] | None = None,
        ttl_s: float | None = None,
        limits: Mapping[str, Any] | None = None,
        service: ServiceSpec | None = None,
    ) -> None:
        self.client = shared_client(service or service_spec())
        body: dict[str, Any] = {"runtime": runtime, "files": dict(files or {})}
        if ttl_s is not None:
            body["ttl_s"] = ttl_s
        if limits:
            body["limits"] = dict(limits)
        self.runtime = runtime
        self.id: str | None = self.client.request("POST", "/v1/sessions", body)["session_id"]

    def run(
        self, code: str | None = None, *, command: str | None = None, timeout_s: float = 10.0, stdin: str = ""
    ) -> dict[str, Any]:
        """One call: ``code`` in the session's runtime, or a shell ``command``, reading ``stdin``; the
        answer (status, stdout, ...)."""
        body: dict[str, Any] = {"timeout_s": timeout_s}
        body.update({"code": code} if command is None else {"command": command})
        if stdin:
            body["stdin"] = stdin
        return self.client.request("POST", f"/v1/sessions/{self._id()}/run", body)

    def test(
        self,
        command: str,
        files: Mapping[str, str] | None = None,
        timeout_s: float = 60.0,
        artifacts: list[str] | None = None,
    ) -> dict[str, Any]:
        """Judge the session's files: ``command`` in a fresh program; the answer carries ``reward``.
        With ``artifacts``, in a fresh sandbox on those artifacts alone (docs/sessions.md)."""
        body: dict[str, Any] = {"command": command, "files": dict(files or {}), "timeout_s": timeout_s}
        if artifacts:
            body["artifacts"] = list(artifacts)
        return self.client.request("POST", f"/v1/sessions/{self._id()}/test", body)

    def close(self) -> None:
        """Delete the session (204; again is a no-op; one the service already ended, 404 or 410, is forgotten)."""
        if self.id is None:
            return
        session, self.id = self.id, None
        try:
            self.client.request("DELETE", f"/v1/sessions/{session}")
        except Exception as exc:  # noqa: BLE001 (an ended session is what close wants; anything else is raised)
            if getattr(exc, "status_code", None) not in (404, 410):
                raise

    def _id(self) -> str:
        if self.id is None:
            raise RuntimeError("this session is closed")
        return self.id


class _SandboxEnvironment:
    """One rollout's session for TRL's ``environment_factory``; public methods are TRL's tools."""

    runtime = "python"

    def __init__(self, url: str | None = None, api_key: str | None = None, timeout_s: float = 10.0) -> None:
        self._service = service_spec(url, api_key)
        self._timeout_s = timeout_s
        self._session: Session | None = None
        self._test: tuple[str, dict[str, str]] | None = None

    def reset(self, **example: Any) -> None:
        """A fresh session for the next rollout, with the example's ``files``; its ``test_command``
        (and ``test_files``) judge the rollout in :meth:`get_reward`."""
        self._close()
        self._session = Session(self.runtime, example.get("files") or {}, service=self._service)
        command = example.get("test_command")
        self._test = (command, dict(example.get("test_files") or {})) if command else None

    def get_reward(self) -> float | None:
        """1.0 if the example's test command passes on the session's files, else 0.0 (None: no test,
        or the sandbox failed, which is no judgement of the model)."""
        if self._session is None or self._test is None:
            return None
        answer = self._session.test(*self._test)
        self._close()
        return answer.get("reward")

    def _call(self, **body: Any) -> str:
        if self._session is None:
            raise RuntimeError("reset() opens the session before the first tool call")
        return observation(self._session.run(timeout_s=self._timeout_s, **body))

    def _close(self) -> None:
        if self._session is not None:
            self._session.close()
            self._session = None

    def __del__(self) -> None:
        try:
            self._close()
        except Exception:  # noqa: BLE001 (interpreter shutdown: the session's TTL ends it instead)
            pass


class PythonSandboxEnvironment(_SandboxEnvironment):
    runtime = "python"

    def python(self, code: str) -> str:
        """Run Python code in this conversation's interpreter; variables and files persist between calls.

        Args:
            code: Python source to run. The value of a final expression is printed.

        Returns:
            The output of the code, and its status if it failed.
        """
        return self._call(code=code)


class BashSandboxEnvironment(_SandboxEnvironment):
    runtime = "bash"

    def bash(self, command: str) -> str:
        """Run a bash command in this conversation's sandbox; files persist between calls.

        Args:
            command: The command line to run.

        Returns:
            The output of the command, and its status if it failed.
        """
        return self._call(code=command)


def python_tool(url: str | None = None, api_key: str | None = None, timeout_s: float = 10.0) -> Any:
    """A tool function for ``GRPOTrainer(tools=[python_tool()])``: each call in a session of its own."""
    service = service_spec(url, api_key)

    def python(code: str) -> str:
        """Run Python code in a fresh sandbox and return what it printed.

        Args:
            code: Python source to run. The value of a final expression is printed.

        Returns:
            The output of the code, and its status if it failed.
        """
        session = Session("python", service=service)
        try:
            return observation(session.run(code, timeout_s=timeout_s))
        finally:
            session.close()

    return python
