"""A sample the real service could not judge reaches the bundled trainer as its mask.

``rewardhub-train`` starts ``rewardhub serve`` as a child process for the run (``reward.embedded``)
and scores with ``exact``; half of the prompts carry a reference ``exact`` cannot read (an object),
so the service answers those samples with status ``error``. What the trainer must do with them: keep
them out of the loss and out of their group's baseline (advantage 0, shaped reward 0), count them in
``reward/masked_frac``, and dump them with the service's status, error message and verdict key.
"""

from __future__ import annotations

import json

import pytest

from rewardhub.trainer.loop import Trainer

UNREADABLE = {"not": "a string"}  # exact compares text: this reference cannot be judged


@pytest.mark.integration  # starts `rewardhub serve`
def test_the_services_error_samples_are_masked_and_dumped_with_their_status(make_config, tmp_path) -> None:
    train = tmp_path / "mixed.jsonl"
    records = [
        {"id": "judged-0", "prompt": "1+1=", "reference": "2"},
        {"id": "judged-1", "prompt": "2+3=", "reference": "5"},
        {"id": "unjudged-0", "prompt": "1+2=", "reference": UNREADABLE},
        {"id": "unjudged-1", "prompt": "3+3=", "reference": UNREADABLE},
    ]
    train.write_text("".join(json.dumps(r) + "\n" for r in records))
    cfg = make_config(
        steps=1,
        data={"train": str(train), "eval": None},
        reward={"embedded": True, "embedded_in": "subprocess", "client_process": False, "verifier": "exact"},
        debug={"dump": True},
    )
    [row] = Trainer(cfg).run()
    assert row["reward/error_frac"] == 0.5
    assert row["reward/masked_frac"] == 0.5

    dumped = [json.loads(line) for line in (tmp_path / "run" / "debug" / "step_000001.jsonl").read_text().splitlines()]
    assert len(dumped) == 16  # four prompts, groups of four
    for sample in dumped:
        unjudged = sample["reference"] == UNREADABLE
        assert sample["reward_status"] == ("error" if unjudged else "ok")
        assert sample["in_loss"] is (not unjudged)
        assert sample["reward_details"]["verdict_key"]["verifier"] == "exact"  # a dump can be re-verified
        if unjudged:
            assert sample["reward_error"]  # the service's own message, not a made-up one
            assert sample["shaped_reward"] == 0.0
            assert all(a == 0.0 for a in sample["advantages"])
        else:
            assert sample["reward_error"] is None
