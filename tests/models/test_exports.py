"""The public surface of rm_models and its registration as rewardhub verifiers."""

from __future__ import annotations

from importlib.metadata import entry_points

import pytest

import rewardhub.models
from rewardhub.registry import ENTRY_POINT_GROUP, Registry

VERIFIERS = {
    "outcome_rm": ("OutcomeRM", "model"),
    "prm": ("ProcessRM", "model"),
    "implicit_prm": ("ImplicitPRM", "model"),
    "judge": ("Judge", "judge"),
    "rubric": ("RubricJudge", "judge"),
    "pairwise_judge": ("PairwiseJudge", "group"),
}


def test_exported_names() -> None:
    assert rewardhub.models.__all__ == [
        "BackendError",
        "BackendSpec",
        "ImplicitPRM",
        "InputTooLong",
        "Judge",
        "JudgeConfig",
        "ModelConfig",
        "OutcomeRM",
        "PairwiseJudge",
        "ProcessRM",
        "RubricJudge",
        "UnsupportedOperation",
        "VerdictError",
    ]


@pytest.mark.parametrize("name", sorted(VERIFIERS))
def test_registered_by_entry_point_under_their_own_name(name: str) -> None:
    [ep] = entry_points(group=ENTRY_POINT_GROUP, name=name)
    cls = ep.load()
    assert cls is getattr(rewardhub.models, VERIFIERS[name][0])
    assert cls.name == name and cls.kind == VERIFIERS[name][1]
    Registry([cls])  # passes the registry's checks


@pytest.mark.parametrize("name", sorted(VERIFIERS))
def test_every_config_field_is_described(name: str) -> None:
    cls = getattr(rewardhub.models, VERIFIERS[name][0])
    schema = cls.describe()["config_schema"]
    undocumented = [field for field, spec in schema["properties"].items() if not spec.get("description")]
    assert undocumented == []
    assert cls.describe()["description"]
    with pytest.raises(ValueError):
        cls.Config.model_validate({"model": "m", "no_such_field": 1})  # extra fields are refused
