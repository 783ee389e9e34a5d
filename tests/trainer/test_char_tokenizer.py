"""The toy task's character tokenizer: 16 tokens, built locally, a real transformers tokenizer."""

from transformers import AutoTokenizer

from rewardhub.trainer.char_tokenizer import build_char_tokenizer


def test_sixteen_tokens_one_per_character():
    tokenizer = build_char_tokenizer()
    assert len(tokenizer) == 16
    assert tokenizer.convert_ids_to_tokens(tokenizer("7+8=")["input_ids"]) == ["<s>", "7", "+", "8", "="]


def test_decoding_joins_characters_and_drops_specials():
    tokenizer = build_char_tokenizer()
    ids = tokenizer("15", add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id, tokenizer.pad_token_id]
    assert tokenizer.decode(ids, skip_special_tokens=True) == "15"


def test_batches_are_left_padded_for_generation():
    batch = build_char_tokenizer()(["1+2=", "9+9="[:3]], padding=True)
    assert batch["attention_mask"][1][0] == 0 and batch["attention_mask"][0][0] == 1


def test_round_trips_through_save_pretrained(tmp_path):
    build_char_tokenizer().save_pretrained(tmp_path)
    loaded = AutoTokenizer.from_pretrained(tmp_path)
    assert loaded("3+4=")["input_ids"] == build_char_tokenizer()("3+4=")["input_ids"]
    assert (loaded.pad_token, loaded.eos_token, loaded.padding_side) == ("<pad>", "</s>", "left")
