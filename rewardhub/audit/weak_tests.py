"""Weak test suites: the problems whose tests accept a reference solution broken in one place.

For each problem (:class:`~rewardhub.audit.code_tasks.CodeTask`):

1. the reference must pass its own tests, else the problem is left out (``reference_fails``);
2. its mutants (:func:`~rewardhub.audit.mutation.mutants`, seeded, at most ``max_mutants``) are
   scored against the tests: a mutant that passes every test *survives*;
3. a survivor is checked beside the reference on fresh inputs
   (:mod:`~rewardhub.audit.fresh_inputs`): one whole test that calls both on each input and
   compares what they return (``repr``) or raise (the exception's type). A survivor that
   disagrees somewhere is *broken*, and its problem is **weak**. A survivor that agrees
   everywhere may be an equivalent program, and is reported as ``unconfirmed``, never as weak;
   so is every survivor of a problem with no fresh inputs (stdin/stdout tests, tests without
   literal calls) or whose reference fails the comparison with itself (a random or slow one).

Every program here, the reference included, runs only through a :data:`~rewardhub.audit.run.ScoreFn`:
the ``code`` verifier of the service, in its sandbox, in this process or on a running server.
Steps 1, 2 and 3 are three batches, so the fresh-input runs are paid only for the survivors. A
mutant that loops forever is the common slow case, so each problem's mutants get a clock made
from its reference's own slowest test (:func:`mutant_timeout`), not the verifier's ceiling: a
correct but much slower mutant is then rejected, which can only hide a weak problem, never
invent one. The arithmetic over the results is pure (:func:`task_findings`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from rewardhub.audit.code_tasks import CodeTask
from rewardhub.audit.fresh_inputs import fresh_calls
from rewardhub.audit.mutation import Mutant, mutants
from rewardhub.audit.run import ScoreFn
from rewardhub.types import OK, Result, Sample, VerifierRef

__all__ = [
    "MutantAudit",
    "TaskAudit",
    "audit_mutants",
    "fresh_input_tests",
    "mutant_timeout",
    "program_response",
    "summary",
    "task_findings",
]

HIDDEN_CHECK = """
import copy as _copy


def _outcome(function, args):
    try:
        return ("returned", repr(function(*_copy.deepcopy(args))))
    except BaseException as exc:
        return ("raised", type(exc).__name__)


def check(candidate):
    reference = {{}}
    exec(compile({source!r}, "<reference>", "exec"), reference)
    for args in {inputs!r}:
        assert _outcome(candidate, args) == _outcome(reference[{entry!r}], args), args


check({entry})
"""
"""One whole test: the program and the reference on each fresh input, in the same process (so a
set's order or a hash agrees), each on its own copy of the arguments."""


@dataclass(frozen=True)
class MutantAudit:
    kind: str
    diff: str
    passed_tests: bool
    broken: bool | None = None
    """Told apart from the reference on a fresh input; None when not checked (it failed the tests)
    or when nothing could check it."""
    error: str | None = None
    """Why it was not judged (the sandbox or the verifier failed), else None."""


@dataclass(frozen=True)
class TaskAudit:
    id: str
    status: str
    """``judged``, ``reference_fails``, ``reference_error``, ``no_mutants``."""
    mutants: list[MutantAudit] = field(default_factory=list)
    fresh_inputs: int = 0
    note: str | None = None

    @property
    def accepted(self) -> list[MutantAudit]:
        """Broken mutants the tests accept: each one a wrong program the reward pays."""
        return [m for m in self.mutants if m.passed_tests and m.broken]

    @property
    def unconfirmed(self) -> list[MutantAudit]:
        return [m for m in self.mutants if m.passed_tests and not m.broken]

    @property
    def weak(self) -> bool:
        return bool(self.accepted)

    def report_line(self) -> dict[str, Any]:
        """One line of the report file a trainer's data loader reads."""
        return {
            "id": self.id,
            "mutants_accepted": len(self.accepted),
            "mutants_tried": len(self.mutants),
            "accepted": [{"kind": m.kind, "diff": m.diff} for m in self.accepted],
        }


def mutant_timeout(
    reference: Result, ceiling_s: float, calls: int = 1, factor: float = 10.0, floor_s: float = 0.1
) -> float:
    """Seconds a mutant's test may run: ``factor`` times the reference's slowest test (per call,
    times ``calls``), at least ``floor_s`` (a loaded machine's scheduling), at most ``ceiling_s``."""
    slowest_ms = max((float(t.get("elapsed_ms") or 0.0) for t in reference.details.get("tests", [])), default=0.0)
    return round(min(ceiling_s, max(floor_s, factor * calls * slowest_ms / 1000.0)), 3)


def _with_timeout(spec: VerifierRef, seconds: float) -> VerifierRef:
    return VerifierRef(name=spec.name, config={**(spec.config or {}), "test_timeout_s": seconds})


def program_response(source: str) -> str:
    """A response holding ``source`` as its one code block, as a policy would answer. (A solution
    holding a fence of its own is cut there, fails its tests and is left out as ``reference_fails``.)"""
    return f"```python\n{source.rstrip()}\n```\n"


def fresh_input_tests(task: CodeTask, inputs: Sequence[Sequence[Any]]) -> dict[str, Any]:
    """The reference (for the ``code`` verifier) that compares a program with ``task``'s solution on ``inputs``."""
    source = f"{task.setup}\n{task.solution}" if task.setup else task.solution
    test = HIDDEN_CHECK.format(source=source, inputs=[list(args) for args in inputs], entry=task.entry_point)
    return {"test": test, "entry_point": task.entry_point}


def _passes(result: Result) -> bool:
    return result.status == OK and result.score >= 1.0


def _error(result: Result) -> str | None:
    return None if result.status == OK else (result.error or result.status)


def task_findings(
    task: CodeTask,
    made: Sequence[Mutant],
    reference: Result,
    on_tests: Sequence[Result],
    control: Result | None,
    on_fresh: dict[int, Result],
    fresh_inputs: int,
) -> TaskAudit:
    """One problem's audit from its results: the reference's and each mutant's on the tests, the
    reference's against itself on the fresh inputs (``control``) and the survivors' there (by index)."""
    if reference.status != OK:
        return TaskAudit(task.id, "reference_error", note=_error(reference))
    if not _passes(reference):
        return TaskAudit(task.id, "reference_fails", note="the reference solution fails its own tests")
    if not made:
        return TaskAudit(task.id, "no_mutants", note="no site to mutate")
    note = None
    checkable = fresh_inputs > 0 and control is not None and _passes(control)
    if fresh_inputs == 0:
        note = "no fresh inputs (no literal calls in the tests): survivors unconfirmed"
    elif control is not None and not _passes(control):
        note = f"the reference disagrees with itself on fresh inputs ({_error(control) or 'not deterministic or too slow'})"
    audits = []
    for index, (mutant, result) in enumerate(zip(made, on_tests, strict=True)):
        survived = _passes(result)
        broken: bool | None = None
        error = _error(result)
        if survived and checkable and index in on_fresh:
            fresh = on_fresh[index]
            error = _error(fresh)
            broken = None if error else not _passes(fresh)
        audits.append(MutantAudit(mutant.kind, mutant.diff, survived, broken, error))
    return TaskAudit(task.id, "judged", audits, fresh_inputs, note)


async def audit_mutants(
    score: ScoreFn,
    spec: VerifierRef,
    tasks: Sequence[CodeTask],
    max_mutants: int = 24,
    seed: int = 0,
    fresh: int = 8,
    kinds: Collection[str] | None = None,
) -> list[TaskAudit]:
    """Score every problem's reference, then its mutants, then the survivors on fresh inputs, with
    ``spec`` (the ``code`` verifier; its ``test_timeout_s`` is the ceiling of every clock)."""
    ceiling = float((spec.config or {}).get("test_timeout_s", 6.0))
    references = await score([_sample(task, task.solution, task.tests) for task in tasks], spec) if tasks else []
    made = [
        mutants(task.solution, max_mutants, seed, kinds) if _passes(ref) else []
        for task, ref in zip(tasks, references, strict=True)
    ]
    first: list[Sample] = []
    for task, reference, task_mutants in zip(tasks, references, made, strict=True):
        clock = _with_timeout(spec, mutant_timeout(reference, ceiling))
        first += [_sample(task, m.source, task.tests, clock) for m in task_mutants]
    results = await score(first, spec) if first else []
    on_tests: list[list[Result]] = []
    for task_mutants in made:
        on_tests.append(results[: len(task_mutants)])
        results = results[len(task_mutants) :]
    inputs = [fresh_calls(task.calls, fresh, seed) if task.entry_point else [] for task in tasks]
    second: list[Sample] = []
    where: list[tuple[int, int | None]] = []  # (task, mutant index or None for the reference's control)
    for t, task in enumerate(tasks):
        survivors = [i for i, result in enumerate(on_tests[t]) if _passes(result)]
        if not survivors or not inputs[t]:
            continue
        check = fresh_input_tests(task, inputs[t])
        clock = _with_timeout(spec, mutant_timeout(references[t], ceiling, calls=2 * len(inputs[t]), floor_s=1.0))
        for index, source in [(None, task.solution), *((i, made[t][i].source) for i in survivors)]:
            second.append(_sample(task, source, check, clock))
            where.append((t, index))
    second_results = await score(second, spec) if second else []
    controls: dict[int, Result] = {}
    on_fresh: list[dict[int, Result]] = [{} for _ in tasks]
    for (t, index), result in zip(where, second_results, strict=True):
        if index is None:
            controls[t] = result
        else:
            on_fresh[t][index] = result
    return [
        task_findings(task, made[t], references[t], on_tests[t], controls.get(t), on_fresh[t], len(inputs[t]))
        for t, task in enumerate(tasks)
    ]


def _sample(task: CodeTask, source: str, tests: Any, verifier: VerifierRef | None = None) -> Sample:
    return Sample(id=task.id, response=program_response(source), reference=tests, verifier=verifier)


def summary(audits: Sequence[TaskAudit]) -> dict[str, Any]:
    """The counts over a data set: the JSON report's head."""
    judged = [a for a in audits if a.status == "judged"]
    weak = [a for a in judged if a.weak]
    kinds: Counter[str] = Counter(m.kind for a in judged for m in a.accepted)
    return {
        "problems": len(audits),
        "judged": len(judged),
        "left_out": dict(Counter(a.status for a in audits if a.status != "judged")),
        "weak": len(weak),
        "weak_share": len(weak) / len(judged) if judged else 0.0,
        "mutants": sum(len(a.mutants) for a in judged),
        "survivors": sum(1 for a in judged for m in a.mutants if m.passed_tests),
        "accepted": sum(len(a.accepted) for a in judged),
        "unconfirmed": sum(len(a.unconfirmed) for a in judged),
        "not_judged": sum(1 for a in judged for m in a.mutants if m.error),
        "accepted_by_kind": dict(sorted(kinds.items())),
        "weak_ids": [a.id for a in weak],
    }
