"""The engine's tokenizer must read ids as the trainer's does: vocabulary, specials, chat template."""

import pytest

from rewardhub.trainer import build_char_tokenizer
from rewardhub.trainer.rollout.tokenizer_check import TokenizerMismatch, check_same_tokenizer, tokenizer_differences


def test_the_same_tokenizer_built_twice_agrees():
    assert tokenizer_differences(build_char_tokenizer("0123456789+="), build_char_tokenizer("0123456789+=")) == []


def test_a_different_vocabulary_is_named():
    [difference] = tokenizer_differences(build_char_tokenizer("0123456789+="), build_char_tokenizer("0123456789-="))
    assert difference.startswith("vocabularies differ (16 vs 16 tokens; 2 differ")


def test_a_different_chat_template_is_refused_with_the_engine_named():
    trainer, engine = build_char_tokenizer("0123456789+="), build_char_tokenizer("0123456789+=")
    trainer.chat_template = "{{ messages[0]['content'] }}="
    engine.chat_template = "{{ messages[0]['content'] }}"
    with pytest.raises(TokenizerMismatch, match=r"tokenizer \(/models/x\) is not the trainer's: chat templates differ"):
        check_same_tokenizer(trainer, engine, "/models/x")


def test_a_different_end_of_sequence_token_is_named():
    trainer, engine = build_char_tokenizer("0123456789+="), build_char_tokenizer("0123456789+=")
    engine.eos_token = engine.pad_token
    assert any(d.startswith("eos_token_id") for d in tokenizer_differences(trainer, engine))
