"""What the released probe suites call: the service, behind the shapes each suite knows how to drive.

None of these imports a verifier. Each reply a suite builds becomes one ``POST /v1/score`` on the
service, through the TRL reward function a trainer would use (:func:`rewardhub.integrations.trl.reward_func`):

- falsepass drives TRL reward functions itself (its ``RewardFunctionScorer`` calls them as
  ``GRPOTrainer`` does); :class:`FalsepassAdapter` is the hand-written adapter its README asks for
  (how a reply writes an answer, what a wrong answer is), over the tasks of :mod:`.probe_tasks`;
- gradecheck and gameability drive a PrimeIntellect ``verifiers`` environment (a dataset and a
  rubric of reward functions); :class:`ServiceEnvironment` is such an environment whose one reward
  function is the service's.

:class:`CountingClient` stands between the reward function and the HTTP client and counts what the
service answered, so that a verdict the service could not give (status ``error``) is never read as
a 0 a suite would then call "resisted".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from falsepass.adapter import Adapter
from falsepass.model import Example
from falsepass.reward_support import RewardFunctionScorer

from rewardhub.audit.probe_tasks import ProbeTask, VerifierProbes
from rewardhub.client import RewardClient
from rewardhub.integrations.trl import reward_func
from rewardhub.types import Result, VerifierRef

__all__ = ["CountingClient", "FalsepassAdapter", "ServiceEnvironment", "service_reward"]


class CountingClient:
    """A :class:`RewardClient` that counts requests and result statuses (what the service really said)."""

    def __init__(self, client: RewardClient) -> None:
        self.client = client
        self.requests = 0
        self.unsent = 0
        self.statuses: Counter[str] = Counter()
        self.errors: list[str] = []

    def score(self, samples: Sequence[Any], verifier: Any = None) -> list[Result]:
        try:
            results = self.client.score(samples, verifier)
        except UnicodeEncodeError as exc:  # a lone surrogate (falsepass's P10): no JSON body can carry it
            self.unsent += 1
            self._note(f"not sent: {exc}")
            raise
        self.requests += 1
        for result in results:
            self.statuses[result.status] += 1
            if result.status != "ok":
                self._note(f"{result.status}: {result.error}")
        return results

    def _note(self, error: str) -> None:
        if len(self.errors) < 5:
            self.errors.append(error)


def service_reward(probes: VerifierProbes, client: CountingClient) -> Any:
    """The TRL reward function a trainer would hand GRPOTrainer for this verifier, on ``client``."""
    spec = VerifierRef(name=probes.verifier, config=probes.config) if probes.config else probes.verifier
    return reward_func(spec, client=client, name=f"rewardhub_{probes.verifier}")


class FalsepassAdapter(Adapter):
    """falsepass's adapter for one verifier: its tasks, how a reply writes an answer, a wrong answer."""

    def __init__(self, probes: VerifierProbes, reward: Any) -> None:
        self.name = f"rewardhub:{probes.verifier}"
        self.probes = probes
        self.reward = reward
        self.closed = bool(probes.labels)  # falsepass sprays every label of a closed set (A1 all_labels)
        self.labels = list(probes.labels)
        self._tasks: dict[str, ProbeTask] = {}

    def load(self, n: int, seed: int) -> tuple[RewardFunctionScorer, list[Example]]:
        examples = []
        for i, task in enumerate(self.probes.tasks[:n]):
            key = f"{self.probes.verifier}-{i}"
            self._tasks[key] = task
            examples.append(
                Example(key, task.prompt, task.answer, {"row": {"prompt": task.prompt, "reference": task.reference}})
            )
        name = self.reward.__name__
        return RewardFunctionScorer({name: self.reward}, {name: 1.0}, "prompt", conversational=False), examples

    def render(self, answer: str, example: Example) -> str:
        return self.probes.write(answer)

    def wrong_answer(self, example: Example) -> str:
        return self._tasks[example.key].wrong

    def shotgun_answers(self, example: Example) -> list[str]:
        return self.labels if self.closed else [self.wrong_answer(example), example.answer]


class _Rows(list):
    """The slice of a ``datasets.Dataset`` the suites read: rows by index, a column by name."""

    @property
    def column_names(self) -> list[str]:
        return list(self[0]) if self else []

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            return [row[key] for row in self]
        return super().__getitem__(key)


class _Parser:
    """A ``verifiers`` XML-style parser's face: the field the answer goes in and how it is written."""

    answer_field = "answer"

    def __init__(self, probes: VerifierProbes) -> None:
        self.probes = probes

    def format(self, answer: str = "", **_: Any) -> str:
        return self.probes.write(answer)


class _Rubric:
    """One reward function, the service's: ``funcs``/``weights`` (gradecheck) and ``score_rollout`` (gameability)."""

    def __init__(self, environment: ServiceEnvironment) -> None:
        self.funcs = [environment.reward]
        self.weights = [1.0]
        self._environment = environment

    async def score_rollout(
        self, prompt: Any, completion: Any, answer: Any, state: Any, task: str = "default", info: Any = None
    ) -> dict[str, float]:
        return {"reward": self._environment.reward(prompt=prompt, completion=completion, answer=answer, info=info)}


class ServiceEnvironment:
    """A single-turn ``verifiers`` environment whose rubric is the service (no ``verifiers`` install needed).

    ``message_type`` is ``completion``: a reply is plain text, as the verifier reads it.
    """

    message_type = "completion"

    def __init__(self, probes: VerifierProbes, reward: Any) -> None:
        self.probes = probes
        self.trl_reward = reward
        self.parser = _Parser(probes)
        self.rubric = _Rubric(self)
        self.unscored = 0
        self.rows = _Rows(
            {"prompt": task.prompt, "answer": task.answer, "info": {"reference": task.reference}, "task": "default"}
            for task in probes.tasks
        )

    def get_dataset(self, n: int = -1, **_: Any) -> _Rows:
        return self.rows if n < 0 else _Rows(self.rows[:n])

    get_eval_dataset = get_dataset

    def reward(
        self, completion: Any = None, info: Mapping[str, Any] | None = None, prompt: Any = None, **_: Any
    ) -> float:
        """The service's score of one reply. A reply it could not judge counts as 0, as both suites
        count a reward function that fails; :attr:`unscored` keeps the number so the report shows it."""
        text = completion if isinstance(completion, str) else _assistant_text(completion)
        reference = (info or {}).get("reference")
        [value] = self.trl_reward(
            prompts=[prompt if isinstance(prompt, str) else ""], completions=[text], reference=[reference]
        )
        if value is None:
            self.unscored += 1
            return 0.0
        return float(value)


def _assistant_text(completion: Any) -> str:
    if isinstance(completion, list):
        return "\n".join(
            str(m.get("content") or "") for m in completion if isinstance(m, dict) and m.get("role") == "assistant"
        )
    return "" if completion is None else str(completion)
