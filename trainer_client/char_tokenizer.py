"""A character tokenizer built locally, for toy tasks that must run with no downloads.

Every character of the alphabet is one token, plus four specials (pad, bos, eos, unk). It is a
real :class:`~transformers.PreTrainedTokenizerFast` (a ``tokenizers`` word-level model over a
per-character split), so the same object works in our trainer, in TRL and with ``save_pretrained``.
"""

from __future__ import annotations

from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, processors
from transformers import PreTrainedTokenizerFast

__all__ = ["ADDITION_ALPHABET", "SPECIAL_TOKENS", "build_char_tokenizer"]

SPECIAL_TOKENS: tuple[str, ...] = ("<pad>", "<s>", "</s>", "<unk>")
ADDITION_ALPHABET = "0123456789+="
"""Digits and the two operators of ``a+b=``: with the specials, a 16-token vocabulary."""


def build_char_tokenizer(alphabet: str = ADDITION_ALPHABET) -> PreTrainedTokenizerFast:
    """A tokenizer whose vocabulary is the specials followed by the characters of ``alphabet``.

    Prompts get a ``<s>`` in front (so the first real token has something to attend to);
    generation ends at ``</s>``; batches are left-padded with ``<pad>`` for generation.
    """
    if len(set(alphabet)) != len(alphabet):
        raise ValueError(f"alphabet has repeated characters: {alphabet!r}")
    vocab = {token: i for i, token in enumerate(SPECIAL_TOKENS)}
    vocab.update({char: len(SPECIAL_TOKENS) + i for i, char in enumerate(alphabet)})
    backend = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    # every single character is its own piece; nothing is merged
    backend.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    backend.decoder = decoders.Fuse()
    backend.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", vocab["<s>"])])
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend,
        pad_token="<pad>",
        bos_token="<s>",
        eos_token="</s>",
        unk_token="<unk>",
        padding_side="left",
        model_input_names=["input_ids", "attention_mask"],
    )
    return tokenizer
