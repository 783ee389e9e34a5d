"""The engine and the trainer must read token ids the same way.

The trainer tokenises prompts (chat template included) and hands the engine token ids; the engine
samples ids that the trainer scores and decodes. If the two tokenizers disagree on a single id,
or the chat templates differ, every log-prob ratio is computed between different texts and the
mismatch corrections mask or reweight noise instead of kernel round-off. Nothing downstream can
detect it, so the engine refuses to start instead.
"""

from __future__ import annotations

from typing import Any

__all__ = ["TokenizerMismatch", "check_same_tokenizer", "tokenizer_differences"]


class TokenizerMismatch(ValueError):
    """The rollout engine's tokenizer or chat template is not the trainer's."""


def _vocab(tokenizer: Any) -> dict[str, int]:
    return dict(tokenizer.get_vocab())


def tokenizer_differences(trainer: Any, engine: Any) -> list[str]:
    """What differs between two tokenizers, in words; empty when they read ids the same way."""
    out = []
    ours, theirs = _vocab(trainer), _vocab(engine)
    if ours != theirs:
        differing = sorted(t for t in ours.keys() | theirs.keys() if ours.get(t) != theirs.get(t))
        out.append(
            f"vocabularies differ ({len(ours)} vs {len(theirs)} tokens; {len(differing)} differ, e.g. "
            f"{differing[:3]!r})"
        )
    for name in ("eos_token_id", "bos_token_id"):
        if getattr(trainer, name, None) != getattr(engine, name, None):
            out.append(f"{name}: trainer {getattr(trainer, name, None)!r}, engine {getattr(engine, name, None)!r}")
    if getattr(trainer, "chat_template", None) != getattr(engine, "chat_template", None):
        out.append("chat templates differ")
    return out


def check_same_tokenizer(trainer: Any, engine: Any, where: str) -> None:
    """Raise :class:`TokenizerMismatch` naming every difference between the two tokenizers."""
    differences = tokenizer_differences(trainer, engine)
    if differences:
        raise TokenizerMismatch(
            f"the rollout engine's tokenizer ({where}) is not the trainer's: "
            + "; ".join(differences)
            + ". Load both from one folder (model.path)."
        )
