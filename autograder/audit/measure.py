"""Measure one assignment's cases: constant answers, mutants, lint, and a mutation score.

Everything runs through the real engine (trials.py): the reference three
times (to see cases that flip), the untouched student notebook, each
function stubbed out (the template's `raise`, then each constant answer),
every function returning the same constant at once, and every mutant.  A
mutant is killed by public cases when one fails, killed only by hidden
cases when the public ones all pass but a hidden one fails, and otherwise
survives -- unless cases.toml marks it equivalent, with a reason.

A *constant answer* is a function whose code is `return False` (or `True`,
`0`, `''`, `None`, `[]`) whatever it is given.  What it earns is the points
of the cases that need the function (they fail while it raises) and still
pass, after the cases' requirements (cases.toml's `requires`) are applied:
that must be no more than cases.toml's `constant_floor`, 0 unless it says
otherwise.  The *look-up mutant* (lookup.py), the student notebook plus a
table of the public answers, must earn no more than `lookup_floor` (1).
"""

import time
from dataclasses import dataclass, field

from .config import load_config
from .lint import CONSTANTS, Finding, flips, static_findings

CONSTANT_WORDS = tuple(f"return {constant!r}" for constant in CONSTANTS)
from .lookup import measure_lookup
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
    earned: float = 0.0     # the points of the `lucky` cases: what the constant answer earns

    @property
    def template(self):
        """The template's own stub (it raises): it earns nothing by definition of `needs`."""
        return self.stub.startswith("raise")


@dataclass
class ConstantResult:
    """Every graded function returning the same constant at once: the whole notebook's score."""
    stub: str
    points: float
    passed: list


@dataclass
class AuditResult:
    assignment: object
    floor: float | None
    mutants: list
    stubs: list
    untouched_score: float
    findings: list
    stale_equivalents: list = field(default_factory=list)
    everywhere: list = field(default_factory=list)  # ConstantResult, one per constant
    constant_floor: float = 0.0
    lookup: list = field(default_factory=list)      # lookup.LookupResult, one per default
    lookup_floor: float = 1.0
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

    def constant_answers(self):
        """[(what, points)] of every constant answer: each function's, each everywhere, and the template."""
        found = [(f"{s.function}: {s.stub}", s.earned) for s in self.stubs if not s.template]
        found += [(f"every function: {c.stub}", c.points) for c in self.everywhere]
        return found + [("the untouched student notebook", self.untouched_score)]

    def constants_above_floor(self):
        return [(what, points) for what, points in self.constant_answers() if points > self.constant_floor + 1e-9]

    def constants_summary(self):
        answers = self.constant_answers()
        return {"floor": self.constant_floor, "checked": len(answers),
                "most": round(max((p for _, p in answers), default=0.0), 4),
                "above_floor": [f"{what} earns {points:g}" for what, points in self.constants_above_floor()]}

    def constants_line(self):
        above = self.constants_above_floor()
        head = f"{self.assignment.id}: {len(self.constant_answers())} constant answers"
        if not above:
            return (f"{head} earn {self.constants_summary()['most']:g} points at most "
                    f"(floor {self.constant_floor:g})")
        return (f"{head}: {len(above)} earn more than the floor of {self.constant_floor:g}: "
                + "; ".join(f"{what} earns {points:g}" for what, points in above))

    def constants_table(self):
        """One line per graded function, and one for every function at once: what each constant earns."""
        def row(label, pairs):
            return f"  {label:<{width}} " + " | ".join(f"{stub.removeprefix('return ')} {points:g}"
                                                       for stub, points in pairs)
        functions = list(dict.fromkeys(s.function for s in self.stubs))
        width = max([len("every function") + 1] + [len(f) + 1 for f in functions])
        lines = [row(f"{function}:", [(s.stub, s.earned) for s in self.stubs
                                      if s.function == function and not s.template]) for function in functions]
        lines.append(row("every function:", [(c.stub, c.points) for c in self.everywhere]
                         + [("template's stub (the untouched notebook)", self.untouched_score)]))
        return lines

    def lookup_most(self):
        """The look-up mutant's score: its best default's."""
        return max(self.lookup, key=lambda r: r.points, default=None)

    def lookup_above_floor(self):
        best = self.lookup_most()
        return best is not None and best.points > self.lookup_floor + 1e-9

    def lookup_summary(self):
        best = self.lookup_most()
        return {"floor": self.lookup_floor, "most": best.points if best else 0.0,
                "default": best.default if best else None,
                "by_default": {r.default: r.points for r in self.lookup}}

    def lookup_lines(self):
        """What the look-up mutant earns (its best default's score, against the floor), then by each default."""
        best = self.lookup_most()
        if best is None:
            return [f"{self.assignment.id}: no look-up mutant (no tested function)"]
        head = f"{self.assignment.id}: a table of the public answers (the look-up mutant)"
        if self.lookup_above_floor():
            head += (f" earns {best.points:g} point(s), more than the floor of {self.lookup_floor:g} "
                     f"(its default: {best.default})")
        else:
            head += f" earns {best.points:g} points at most (floor {self.lookup_floor:g})"
        return [head, "  by its default answer: " + " | ".join(f"{r.default} {r.points:g}" for r in self.lookup)]

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
    everywhere = _everywhere(reference, trials)
    progress(f"{assignment.id}: the look-up mutant (a table of the public answers)")
    lookup = measure_lookup(assignment, expected, trials, reference)

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
                       seconds=time.monotonic() - started, mutant_seconds=mutant_seconds, everywhere=everywhere,
                       constant_floor=config.constant_floor, lookup=lookup, lookup_floor=config.lookup_floor)


def _stubs(assignment, reference, trials, progress):
    """Each function's regions replaced by `raise`, then by `return <constant>`.

    A case *needs* a function when it does not pass while the function raises
    (after requirements: a case that requires one of the function's cases needs
    it too).  Each constant is graded on every case, so requirements judge it as
    they judge a hand-in; what it earns is the points of the cases that need the
    function and still pass.
    """
    functions = graded_functions(reference)
    constants = [(f, f"return {constant!r}") for f in functions for constant in CONSTANTS]
    progress(f"{assignment.id}: {len(functions) + len(constants)} stubs of {len(functions)} functions")

    def raising(function, slot):
        return trials.grade(replace_regions(reference, function, 'raise NotImplementedError("stub")'), slot)

    raised = dict(zip(functions, trials.map(raising, functions)))
    needs = {f: {r.name for r in results if r.status != "passed"} for f, results in raised.items()}

    def constant(plan, slot):
        function, statement = plan
        return trials.grade(replace_regions(reference, function, statement), slot)

    stubs = []
    for function in functions:
        free = [r for r in raised[function] if r.status == "passed"]
        stubs.append(StubResult(function or "(top level)", 'raise NotImplementedError("stub")',
                                [r.name for r in free], round(sum(r.points for r in free), 4),
                                needed=len(needs[function])))
    for (function, statement), results in zip(constants, trials.map(constant, constants)):
        passed = [r for r in results if r.status == "passed"]
        lucky = [r for r in passed if r.name in needs[function]]
        stubs.append(StubResult(function, statement, [r.name for r in passed],
                                round(sum(r.points for r in passed), 4), lucky=[r.name for r in lucky],
                                needed=len(needs[function]), earned=round(sum(r.points for r in lucky), 4)))
    order = {f or "(top level)": i for i, f in enumerate(functions)}
    return sorted(stubs, key=lambda s: order[s.function])  # stable: raise first, then the constants


def graded_functions(reference):
    """The top-level functions that hold a solution region, in the notebook's order."""
    return [f for f in dict.fromkeys(r.top_function for r in reference.regions) if f]


def _everywhere(reference, trials):
    """Every graded function returning the same constant at once (a template whose stubs all `return 0`)."""
    functions = graded_functions(reference)

    def stubbed(constant, slot):
        return trials.grade(replace_regions(reference, functions, f"return {constant!r}"), slot)

    out = []
    for constant, results in zip(CONSTANTS, trials.map(stubbed, CONSTANTS)):
        passed = [r for r in results if r.status == "passed"]
        out.append(ConstantResult(f"return {constant!r}", round(sum(r.points for r in passed), 4),
                                  [r.name for r in passed]))
    return out


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
