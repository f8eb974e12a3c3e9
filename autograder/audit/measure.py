"""Measure one assignment's cases: stubs, mutants, lint, and a mutation score.

Everything runs through the real engine (trials.py): the reference three
times (to see cases that flip), the untouched student notebook, each
function stubbed out (raise, then each constant), and every mutant.  A
mutant is killed by public cases when one fails, killed only by hidden
cases when the public ones all pass but a hidden one fails, and otherwise
survives -- unless cases.toml marks it equivalent, with a reason.
"""

import time
from dataclasses import dataclass, field

from .config import load_config
from .lint import CONSTANTS, Finding, flips, static_findings
from .mutants import make_mutants
from .regions import load_reference, replace_regions
from .trials import Trials

REFERENCE_RUNS = 3


@dataclass
class MutantResult:
    mutant: object
    verdict: str            # "public", "hidden", "survived", "equivalent"
    killer: str = ""        # the first case that failed
    how: str = ""           # its status: failed, error, timeout, ...
    reason: str = ""        # why it is equivalent (cases.toml)
    marked_but_killed: bool = False
    flaky: bool = False     # a time-out in one run, no failure in the retry


@dataclass
class StubResult:
    function: str
    stub: str               # the statement put in place of every region of the function
    passed: list            # names of the cases that still pass
    points: float           # what the stubbed notebook scores
    lucky: list = field(default_factory=list)  # of those, the ones that fail when the function raises
    needed: int = 0         # how many cases fail when the function raises


@dataclass
class AuditResult:
    assignment: object
    floor: float | None
    mutants: list
    stubs: list
    untouched_score: float
    findings: list
    stale_equivalents: list = field(default_factory=list)
    seconds: float = 0.0            # the whole audit
    mutant_seconds: float = 0.0     # of which grading the mutants

    def count(self, verdict):
        return sum(1 for m in self.mutants if m.verdict == verdict)

    @property
    def killed(self):
        return self.count("public") + self.count("hidden")

    @property
    def score(self):
        """Killed over the mutants that can be killed (equivalent ones left out, and counted apart)."""
        total = len(self.mutants) - self.count("equivalent")
        return self.killed / total if total else 1.0

    def summary(self):
        return {"mutants": len(self.mutants), "killed": self.killed, "killed_public": self.count("public"),
                "killed_hidden_only": self.count("hidden"), "survived": self.count("survived"),
                "equivalent": self.count("equivalent"), "score": round(self.score, 4)}

    def summary_line(self):
        s = self.summary()
        floor = f" (floor {self.floor:.0%})" if self.floor is not None else ""
        return (f"{self.assignment.id}: {s['mutants']} mutants, {s['killed']} killed ({s['killed_public']} by public "
                f"cases, {s['killed_hidden_only']} only by hidden), {s['survived']} survived, "
                f"{s['equivalent']} equivalent: score {self.score:.1%}{floor}")

    def below_floor(self):
        return self.floor is not None and self.score < self.floor - 1e-9

    def by_function(self):
        rows = {}
        for result in self.mutants:
            row = rows.setdefault(result.mutant.function, {"function": result.mutant.function, "mutants": 0,
                                                           "public": 0, "hidden": 0, "survived": 0,
                                                           "equivalent": 0})
            row["mutants"] += 1
            row[result.verdict] += 1
        return list(rows.values())


def measure(assignment, sandbox, jobs, progress=lambda message: None):
    started = time.monotonic()
    config = load_config(assignment)
    expected = assignment.load_expected()
    reference = load_reference(assignment)
    trials = Trials(assignment, expected, sandbox, jobs)

    progress(f"{assignment.id}: the reference ({REFERENCE_RUNS} runs), the untouched student notebook")
    reference_runs = trials.map(lambda _, slot: trials.grade(reference.sources, slot), range(REFERENCE_RUNS))
    untouched = trials.grade_file(assignment.student_path, 0).score if assignment.student_path.exists() else 0.0
    findings = static_findings(assignment, expected) + flips(assignment, expected, reference_runs)
    if untouched:
        findings.append(Finding("untouched-scores", "", f"the untouched student notebook scores {untouched:g}"))

    stubs = _stubs(assignment, reference, trials, progress)
    findings += _stub_findings(assignment, stubs)

    mutants = make_mutants(reference)
    if not mutants:
        findings.append(Finding("no-mutants", "", "the reference has no ### BEGIN SOLUTION region to mutate, "
                                                  "so the score says nothing"))
    progress(f"{assignment.id}: grading {len(mutants)} mutants, {jobs} at a time")
    graded = time.monotonic()
    results = trials.map(lambda mutant, slot: _verdict(assignment, trials, mutant, slot, config), mutants)
    mutant_seconds = time.monotonic() - graded
    stale = sorted(set(config.equivalent) - {m.id for m in mutants})
    findings += [Finding("flips", r.mutant.function, f"mutant {r.mutant.id} timed out in one run and passed every "
                                                       "case in another: a time limit close to the reference's time?")
                 for r in results if r.flaky]
    return AuditResult(assignment, config.floor, results, stubs, untouched, findings, stale,
                       time.monotonic() - started, mutant_seconds)


def _stubs(assignment, reference, trials, progress):
    """Each function's regions replaced by `raise`, then by `return <constant>`.

    A case *needs* a function when it fails while the function raises.  Only
    those cases are run again with each constant: a case that passes while
    the function raises does not depend on what it returns.
    """
    functions = list(dict.fromkeys(r.top_function for r in reference.regions))
    constants = [(f, f"return {constant!r}") for f in functions if f for constant in CONSTANTS]
    progress(f"{assignment.id}: {len(functions) + len(constants)} stubs of {len(functions)} functions")
    by_name = {c.name: c for c in assignment.cases}

    def raising(function, slot):
        return trials.grade(replace_regions(reference, function, 'raise NotImplementedError("stub")'), slot)

    raised = dict(zip(functions, trials.map(raising, functions)))
    needs = {f: [by_name[r.name] for r in results if r.status != "passed"] for f, results in raised.items()}

    def constant(plan, slot):
        function, statement = plan
        if not needs[function]:
            return []
        return trials.grade(replace_regions(reference, function, statement), slot, needs[function])

    stubs = []
    for function in functions:
        free = [r for r in raised[function] if r.status == "passed"]
        stubs.append(StubResult(function or "(top level)", 'raise NotImplementedError("stub")',
                                [r.name for r in free], round(sum(r.points for r in free), 4),
                                needed=len(needs[function])))
    for (function, statement), results in zip(constants, trials.map(constant, constants)):
        free = [r for r in raised[function] if r.status == "passed"]
        lucky = [r for r in results if r.status == "passed"]
        stubs.append(StubResult(function, statement, [r.name for r in free + lucky],
                                round(sum(r.points for r in free + lucky), 4),
                                lucky=[r.name for r in lucky], needed=len(needs[function])))
    order = {f or "(top level)": i for i, f in enumerate(functions)}
    return sorted(stubs, key=lambda s: order[s.function])  # stable: raise first, then the constants


def _stub_findings(assignment, stubs):
    """Cases of a function that pass with a constant stub in it, though they fail when it raises.

    (Cases of other functions that a stub passes are listed in the report's
    stub table; only a function's own cases are its point.)
    """
    findings = []
    for stub in stubs:
        own = [c for c in assignment.cases if c.function == stub.function]
        lucky = [c for c in own if c.name in stub.lucky]
        if lucky:
            earned, total = round(sum(c.points for c in lucky), 4), round(sum(c.points for c in own), 4)
            findings.append(Finding("stub-passes", stub.function,
                                    f"{stub.stub} in {stub.function} passes {len(lucky)} of its {len(own)} cases "
                                    f"({earned:g} of its {total:g} points): " + "; ".join(c.name for c in lucky)))
    return findings


def _verdict(assignment, trials, mutant, slot, config):
    # Cases of the mutated function first: they usually fail soonest.  Public before hidden,
    # so the first failure tells which kind of case kills it.
    top = mutant.function.split(".")[0]
    order = sorted(assignment.cases, key=lambda c: (c.hidden, c.function != top))
    results = trials.grade(mutant.sources, slot, order, stop_at_first_failure=True)
    failed = next((r for r in results if r.status != "passed"), None)
    flaky = False
    if failed is not None and failed.status == "timeout":
        # A busy machine can push a right answer past its limit: a time-out counts only if it comes back.
        results = trials.grade(mutant.sources, slot, order, stop_at_first_failure=True)
        failed = next((r for r in results if r.status != "passed"), None)
        flaky = failed is None
    reason = config.equivalent.get(mutant.id, "")
    if failed is None:
        return MutantResult(mutant, "equivalent" if reason else "survived", reason=reason, flaky=flaky)
    case = next(c for c in assignment.cases if c.name == failed.name)
    return MutantResult(mutant, "hidden" if case.hidden else "public", failed.name, failed.status,
                        reason=reason, marked_but_killed=bool(reason))
