"""The tasks the released probe suites play against each rule verifier, and why some verifiers sit out.

The probe suites (falsepass, gradecheck, gameability) need what a dataset gives them: a prompt, the
reference the verifier is sent, the final answer a correct reply states, and how a reply writes it
(``render``, with ``{answer}`` where the answer goes). Everything else (the empty reply, the
shotgun of answers, the hedged slot, the retraction, NaN) the suites build themselves: nothing here
says what a bad reply looks like, apart from one definitely wrong answer per task, which is what a
suite's adapter must supply.

A verifier that pays some known-bad replies *by design* names those probes in ``by_design`` with
the reason (``json_schema`` judges the structure, not the values); one the suites cannot drive at
all is in :data:`NOT_PROBED` with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["NOT_PROBED", "PROBED", "ProbeTask", "VerifierProbes"]


@dataclass(frozen=True)
class ProbeTask:
    """One task: what the verifier is sent, and the answer a correct reply states."""

    prompt: str
    reference: Any
    answer: str
    wrong: str
    """An answer that is definitely not correct for this task (the suites' adapters ask for one)."""


@dataclass(frozen=True)
class VerifierProbes:
    """How the suites play one verifier: its config, how a reply writes an answer, its tasks."""

    verifier: str
    render: str
    tasks: tuple[ProbeTask, ...]
    config: dict[str, Any] = field(default_factory=dict)
    labels: tuple[str, ...] = ()
    """A closed answer set (choice letters): the suites spray every label."""
    by_design: dict[str, str] = field(default_factory=dict)
    """Probe ids ('P17', or '*' for every one) this verifier pays on purpose, each with the reason."""

    def design_reason(self, probe: str) -> str | None:
        return self.by_design.get(probe) or self.by_design.get("*")

    def write(self, answer: str) -> str:
        """A reply that states ``answer`` the way the task asks (``str.replace``: LaTeX braces stay)."""
        return self.render.replace("{answer}", answer)


_ARITHMETIC = (
    ProbeTask("What is 17 + 25? Put the final answer in \\boxed{}.", "42", "42", "49"),
    ProbeTask("What is 9 times 8? Put the final answer in \\boxed{}.", "72", "72", "79"),
    ProbeTask("What is 100 - 37? Put the final answer in \\boxed{}.", "63", "63", "70"),
)

_CAPITALS = (
    ProbeTask("What is the capital of France? Reply with the name only.", "Paris", "Paris", "Lyon"),
    ProbeTask("Which planet is known as the Red Planet? Reply with the name only.", "Mars", "Mars", "Venus"),
    ProbeTask("What is the chemical symbol for gold? Reply with the symbol only.", "Au", "Au", "Ag"),
)

_CHOICE = (
    ProbeTask(
        "Which gas do plants take in for photosynthesis?\nA) Oxygen\nB) Carbon dioxide\nC) Nitrogen\nD) Helium\n"
        "Answer with the letter.",
        "B",
        "B",
        "C",
    ),
    ProbeTask(
        "Which is the largest ocean?\nA) Atlantic\nB) Indian\nC) Arctic\nD) Pacific\nAnswer with the letter.",
        "D",
        "D",
        "A",
    ),
    ProbeTask(
        "How many sides has a hexagon?\nA) 6\nB) 5\nC) 8\nD) 7\nAnswer with the letter.",
        "A",
        "A",
        "B",
    ),
)

_PEOPLE = (
    ProbeTask(
        "Who was the first president of the United States? Give the answer in <answer></answer>.",
        ["George Washington", "Washington"],
        "George Washington",
        "John Adams",
    ),
    ProbeTask(
        "Who wrote Pride and Prejudice? Give the answer in <answer></answer>.",
        ["Jane Austen", "Austen"],
        "Jane Austen",
        "Charlotte Bronte",
    ),
    ProbeTask(
        "Who painted the Mona Lisa? Give the answer in <answer></answer>.",
        ["Leonardo da Vinci", "Leonardo"],
        "Leonardo da Vinci",
        "Michelangelo Buonarroti",
    ),
)

_CODES = (
    ProbeTask("Reply with the confirmation code K7-4410 exactly.", "K7-4410", "K7-4410", "K7-4411"),
    ProbeTask("Reply with the word ACCEPTED in capitals and nothing else.", "ACCEPTED", "ACCEPTED", "REJECTED"),
    ProbeTask("Reply with the ticket id T-0093 exactly.", "T-0093", "T-0093", "T-0039"),
)

_PERSON_SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}},
    "required": ["name", "age"],
    "additionalProperties": False,
}
_ITEM_SCHEMA = {
    "type": "object",
    "properties": {"sku": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]{3}$"}, "count": {"type": "integer"}},
    "required": ["sku", "count"],
    "additionalProperties": False,
}
_EVENT_SCHEMA = {
    "type": "object",
    "properties": {"title": {"type": "string"}, "day": {"type": "integer", "minimum": 1, "maximum": 31}},
    "required": ["title", "day"],
    "additionalProperties": False,
}
_JSON = (
    ProbeTask(
        "Return a JSON object with the person's name and age: Ada, 36.",
        _PERSON_SCHEMA,
        '{"name": "Ada", "age": 36}',
        '{"name": "Ada"}',
    ),
    ProbeTask(
        "Return a JSON object for the stock line: SKU ABC-123, 4 units.",
        _ITEM_SCHEMA,
        '{"sku": "ABC-123", "count": 4}',
        '{"sku": "abc123", "count": 4}',
    ),
    ProbeTask(
        "Return a JSON object for the event: standup on day 12 of the month.",
        _EVENT_SCHEMA,
        '{"title": "standup", "day": 12}',
        '{"title": "standup", "day": 42}',
    ),
)

_EMPLOYEES = (
    "CREATE TABLE emp (id INTEGER PRIMARY KEY, name TEXT, dept TEXT, salary INTEGER);"
    "INSERT INTO emp VALUES (1, 'Ann', 'eng', 120), (2, 'Bob', 'ops', 90), (3, 'Cid', 'eng', 100), (4, 'Dee', 'ops', 95);"
)
_SQL = (
    ProbeTask(
        "Table emp(id, name, dept, salary). List the names of the engineers (dept 'eng').",
        {"setup_sql": _EMPLOYEES, "gold_sql": "SELECT name FROM emp WHERE dept = 'eng'"},
        "SELECT name FROM emp WHERE dept = 'eng'",
        "SELECT name FROM emp WHERE dept = 'ops'",
    ),
    ProbeTask(
        "Table emp(id, name, dept, salary). How many employees earn more than 95?",
        {"setup_sql": _EMPLOYEES, "gold_sql": "SELECT COUNT(*) FROM emp WHERE salary > 95"},
        "SELECT COUNT(*) FROM emp WHERE salary > 95",
        "SELECT COUNT(*) FROM emp",
    ),
    ProbeTask(
        "Table emp(id, name, dept, salary). What is the highest salary in ops?",
        {"setup_sql": _EMPLOYEES, "gold_sql": "SELECT MAX(salary) FROM emp WHERE dept = 'ops'"},
        "SELECT MAX(salary) FROM emp WHERE dept = 'ops'",
        "SELECT MIN(salary) FROM emp WHERE dept = 'ops'",
    ),
)

_PHONE = (
    ProbeTask("Write a phone number in the form 555-0100.", "^\\d{3}-\\d{4}$", "555-0142", "5550142"),
    ProbeTask("Write a date in the form 2024-05-17.", "^\\d{4}-\\d{2}-\\d{2}$", "2024-05-17", "17/05/2024"),
    ProbeTask("Write a UK postcode such as SW1A 1AA.", "^[A-Z]{1,2}\\d[A-Z\\d]? \\d[A-Z]{2}$", "EC1A 1BB", "EC1A1BB"),
)

_SENTENCES = (
    ProbeTask(
        "Translate to English: 'Le chat dort sur le canapé.'",
        "The cat is sleeping on the sofa.",
        "The cat is sleeping on the sofa.",
        "A dog runs in the park.",
    ),
    ProbeTask(
        "Translate to English: 'Il pleut depuis ce matin.'",
        "It has been raining since this morning.",
        "It has been raining since this morning.",
        "The sun shines all day.",
    ),
    ProbeTask(
        "Translate to English: 'Nous partons demain à huit heures.'",
        "We are leaving tomorrow at eight o'clock.",
        "We are leaving tomorrow at eight o'clock.",
        "She reads a book in the garden.",
    ),
)

_PARTIAL = "a similarity score: a reply that holds the answer among other words earns part of the reward by design"

PROBED: dict[str, VerifierProbes] = {
    probes.verifier: probes
    for probes in (
        VerifierProbes("math", "The answer is $\\boxed{{answer}}$.", _ARITHMETIC),
        VerifierProbes("exact", "{answer}", _CAPITALS),
        VerifierProbes("choice", "Answer: {answer}", _CHOICE, labels=("A", "B", "C", "D")),
        VerifierProbes("qa_match", "<answer>{answer}</answer>", _PEOPLE),
        VerifierProbes("string_check", "{answer}", _CODES),
        VerifierProbes(
            "json_schema",
            "{answer}",
            _JSON,
            by_design={
                "P16": "it judges the JSON's structure, not the truth of its values (tool_call checks values)",
                "P17": "it judges the JSON's structure, not the truth of its values (tool_call checks values)",
            },
        ),
        VerifierProbes("sql", "```sql\n{answer}\n```", _SQL),
        VerifierProbes(
            "regex",
            "{answer}",
            _PHONE,
            config={"mode": "fullmatch"},
        ),
        VerifierProbes(
            "f1",
            "<answer>{answer}</answer>",
            _PEOPLE,
            by_design={"*": _PARTIAL},
        ),
        VerifierProbes(
            "text_similarity",
            "{answer}",
            _SENTENCES,
            by_design={"*": _PARTIAL},
        ),
    )
}
"""Every rule verifier the suites play, with its tasks."""

NOT_PROBED: dict[str, str] = {
    "format": "no reference answer: it pays the <think>…</think> layout by design, whatever the answer says",
    "length": "scores the reply's length against a budget, not an answer",
    "language_consistency": "scores the script the reply is written in, not an answer",
    "self_certainty": "scores the policy's own token log-probs (metadata), not an answer",
    "cosine_length": "shapes a correctness verifier's verdict by length; that verifier (math, ...) is probed itself",
    "ifeval": "judges instructions followed (length, keywords, case), not an answer a reply could get wrong",
    "tool_call": "reads tool calls, not a text answer: the suites' text probes have no tool-call form",
    "tool_sequence": "judges a whole tool trajectory: the suites' text probes have no trajectory form",
    "steps": "applies another rule verifier per assistant turn: that verifier is probed itself",
    "grounding": "reads coordinates: the suites' wrong answers and sprays are not points or boxes",
    "reasoning_gym": "each task family has its own released scorer; its exploit corpus (rewardhub audit) covers it",
}
"""Rule verifiers the suites do not drive, each with the reason."""
