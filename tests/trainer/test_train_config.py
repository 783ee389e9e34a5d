"""The configuration is typed, documented, strict, and overridable from the command line."""

import pytest
import yaml
from pydantic import BaseModel, ValidationError

from rewardhub.trainer.config import TrainConfig, apply_overrides, load_config


def sections(model: type[BaseModel], prefix=""):
    for name, field in model.model_fields.items():
        yield f"{prefix}{name}", field
        annotation = field.annotation
        for candidate in getattr(annotation, "__args__", (annotation,)):
            if isinstance(candidate, type) and issubclass(candidate, BaseModel):
                yield from sections(candidate, f"{prefix}{name}.")


def test_every_field_is_described():
    undocumented = [name for name, field in sections(TrainConfig) if not field.description]
    assert undocumented == []


def test_unknown_keys_are_errors_at_every_level():
    with pytest.raises(ValidationError, match="learning_rate"):
        TrainConfig.model_validate({"data": {"train": "x"}, "optim": {"learning_rate": 1.0}})
    with pytest.raises(ValidationError, match="stepz"):
        TrainConfig.model_validate({"data": {"train": "x"}, "stepz": 3})


def test_overrides_are_dotted_and_parsed_as_yaml():
    raw = apply_overrides(
        {"optim": {"lr": 1.0}},
        [
            "optim.lr=3e-4",
            "rollout.group_size=8",
            "reward.verifier={name: math}",
            "algorithm.mismatch.token_mask=[0.5, 2]",
        ],
    )
    assert raw["optim"]["lr"] == 3e-4
    assert raw["rollout"]["group_size"] == 8
    assert raw["reward"]["verifier"] == {"name": "math"}
    assert raw["algorithm"]["mismatch"]["token_mask"] == [0.5, 2]
    with pytest.raises(ValueError, match="key=value"):
        apply_overrides({}, ["optim.lr"])


def test_load_config_resolves_data_paths_next_to_the_yaml(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "train.jsonl").write_text('{"prompt": "1+1=", "reference": "2"}\n')
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump({"data": {"train": "data/train.jsonl"}, "steps": 5}))
    cfg = load_config(path, ["steps=7"])
    assert cfg.steps == 7
    assert cfg.data.train == str(tmp_path / "data" / "train.jsonl")


def test_the_defaults_are_on_policy_grpo_with_an_entropy_bonus():
    a = TrainConfig.model_validate({"data": {"train": "x"}}).algorithm
    assert (a.advantage, a.policy_loss, a.epochs, a.mini_batches, a.old_logprobs) == (
        "grpo",
        "ppo_clip",
        1,
        1,
        "trainer",
    )
    assert a.entropy_coef > 0
    assert a.mismatch.tis_cap is None and a.mismatch.token_mask is None


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"data": {}}, "train"),
        ({"data": {"train": "x"}, "reward": {"url": "http://x", "embedded": True}}, "not both"),
        ({"data": {"train": "x"}, "rollout": {"group_size": 1}}, "group_size"),
        ({"data": {"train": "x"}, "optim": {"micro_batch_size": 1000}}, "micro_batch_size"),
        ({"data": {"train": "x"}, "algorithm": {"mini_batches": 3}}, "divisible"),
    ],
)
def test_inconsistent_settings_are_refused(raw, message):
    with pytest.raises(ValidationError, match=message):
        TrainConfig.model_validate(raw)


def test_the_example_config_is_valid():
    cfg = load_config("examples/toy_addition.yaml")
    assert cfg.reward.embedded and cfg.reward.verifier == "exact"
    assert cfg.model.path is None and cfg.model.toy.hidden_size == 64
