"""The grader shapes users know from reinforcement fine-tuning, as pydantic models.

``string_check``, ``text_similarity``, ``score_model``, ``python`` and ``multi`` (whose
``graders`` is a mapping of names to graders, or a single grader). Fields OpenAI documents and
rewardhub ignores (``image_tag``, ``labels`` of model graders) are accepted; anything else is
refused. The one rewardhub addition is ``judge_config`` on ``score_model``: config fields for the
``judge`` verifier it maps to (``base_url``, ``backend``, ...).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "Grader",
    "MultiGrader",
    "PythonGrader",
    "RunGraderRequest",
    "ScoreModelGrader",
    "SimpleGrader",
    "StringCheckGrader",
    "TextSimilarityGrader",
]


class _Shape(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class StringCheckGrader(_Shape):
    type: Literal["string_check"]
    name: str = "string_check"
    input: str
    reference: str
    operation: Literal["eq", "ne", "like", "ilike"]


class TextSimilarityGrader(_Shape):
    type: Literal["text_similarity"]
    name: str = "text_similarity"
    input: str
    reference: str
    evaluation_metric: Literal[
        "fuzzy_match",
        "bleu",
        "gleu",
        "meteor",
        "cosine",
        "rouge_1",
        "rouge_2",
        "rouge_3",
        "rouge_4",
        "rouge_5",
        "rouge_l",
    ]
    pass_threshold: float | None = None


class InputMessage(_Shape):
    role: Literal["system", "developer", "user", "assistant"]
    content: str | list[dict[str, Any]]
    type: Literal["message"] | None = None


class ScoreModelGrader(_Shape):
    type: Literal["score_model"]
    name: str = "score_model"
    model: str
    input: list[InputMessage] = Field(min_length=1)
    range: tuple[float, float] | None = None
    sampling_params: dict[str, Any] = Field(default_factory=dict)
    pass_threshold: float | None = None
    judge_config: dict[str, Any] = Field(
        default_factory=dict,
        description="rewardhub extension: config fields of the `judge` verifier (base_url, backend, ...).",
    )


class PythonGrader(_Shape):
    type: Literal["python"]
    name: str = "python"
    source: str = Field(min_length=1, max_length=256 * 1024)
    image_tag: str | None = None
    pass_threshold: float | None = None


SimpleGrader = Annotated[
    StringCheckGrader | TextSimilarityGrader | ScoreModelGrader | PythonGrader, Field(discriminator="type")
]


class MultiGrader(_Shape):
    type: Literal["multi"]
    name: str = "multi"
    graders: dict[str, SimpleGrader] | SimpleGrader
    calculate_output: str = Field(min_length=1)
    pass_threshold: float | None = None

    def named_graders(self) -> dict[str, SimpleGrader]:
        if isinstance(self.graders, dict):
            return dict(self.graders)
        return {self.graders.name: self.graders}


Grader = Annotated[
    StringCheckGrader | TextSimilarityGrader | ScoreModelGrader | PythonGrader | MultiGrader,
    Field(discriminator="type"),
]


class RunGraderRequest(_Shape):
    """``POST /v1/graders/run``: one model output graded against one dataset item."""

    grader: Grader
    model_sample: str
    item: dict[str, Any] | None = None
