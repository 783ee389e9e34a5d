"""Runs the TRL snippet of docs/compat.md in this process, on whatever TRL is first on the path.

Usage: ``python trl_snippet_run.py SNIPPET_FILE WORKDIR``. The snippet finds ``model`` (a tiny
Qwen2 saved under WORKDIR with its tokenizer), ``config`` (a two-step ``GRPOConfig`` on CPU) and
``ds`` (four arithmetic prompts, two of them without a solution); the service is at
``REWARDHUB_URL``. Prints one JSON line: TRL's version and its ``log_history``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def tiny_model(root: Path) -> str:
    """A 2-layer Qwen2 with hidden size 32 and a character tokenizer, saved together (no downloads)."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

    specials = ["<pad>", "</s>", "<unk>"]
    vocab = {token: i for i, token in enumerate(specials + list("0123456789+= ab"))}
    backend = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    backend.decoder = decoders.Fuse()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend, pad_token="<pad>", eos_token="</s>", unk_token="<unk>", padding_side="left"
    )
    config = Qwen2Config(
        vocab_size=len(vocab),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=64,
        pad_token_id=vocab["<pad>"],
        eos_token_id=vocab["</s>"],
        tie_word_embeddings=True,
    )
    Qwen2ForCausalLM(config).save_pretrained(root / "model")
    tokenizer.save_pretrained(root / "model")
    return str(root / "model")


def main(snippet_file: str, workdir: str) -> None:
    import trl
    from datasets import Dataset
    from trl import GRPOConfig

    root = Path(workdir)
    namespace = {
        "model": tiny_model(root),
        "config": GRPOConfig(
            output_dir=str(root / "out"),
            per_device_train_batch_size=4,
            num_generations=2,
            max_completion_length=4,
            max_steps=2,
            learning_rate=1e-3,
            beta=0.0,
            logging_steps=1,
            report_to="none",
            save_strategy="no",
            use_cpu=True,
            bf16=False,
            disable_tqdm=True,
            seed=0,
        ),
        "ds": Dataset.from_list(
            [
                {"prompt": "1+1=", "solution": "2"},
                {"prompt": "2+2=", "solution": "4"},
                {"prompt": "3+3=", "solution": "6"},
                {"prompt": "4+4=", "solution": "8"},
            ]
        ),
    }
    exec(compile(Path(snippet_file).read_text(), "docs/compat.md (TRL)", "exec"), namespace)
    history = namespace["trainer"].state.log_history
    print(json.dumps({"version": trl.__version__, "file": trl.__file__, "log_history": history}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
