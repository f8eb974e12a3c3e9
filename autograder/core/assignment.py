"""An assignment as data: its reference notebook and its cases.

cases.toml declares each case as a call, its points, whether it is hidden,
how to compare, and a hint.  The expected values are not typed there: `build`
computes them from the reference notebook into expected.json.

A case may *require* others: its points count only when every case it
requires passes too (their own verdicts: a requirement is not passed on).  So a
"rejects ..." case of `is_solved` can count only when `is_solved` also
accepts a true solution, and a function that returns `False` whatever it is
given earns nothing.  Requirements are named per case (`requires = [...]`)
or for every case of a function (a top-level `[requires]` table).  A public
case may require a hidden *twin* (the same check on an input the public
checks do not show), so that a table of the public answers earns nothing:
the notebook's check cells judge its public requirements and name the hidden
ones by their descriptions, never running a hidden input.
"""

import hashlib
import json
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path

from . import limits
from .. import runtime
from .calls import Call, CallError, parse_call
from .errors import AutograderError
from .numbers import MAX_LIMIT_SECONDS, MAX_POINTS, NumberError, checked


class AssignmentError(AutograderError):
    """An assignment's files are missing or inconsistent."""


@dataclass(frozen=True)
class Case:
    name: str
    call: Call
    points: float
    hidden: bool
    description: str
    hint: str
    compare: str = "equal"
    options: dict = field(default_factory=dict)
    timeout: float | None = None
    # Names of the cases that must pass for this one to count (in the table's order; never the case itself).
    requires: tuple = ()

    @property
    def function(self):
        return self.call.function


@dataclass(frozen=True)
class Settings:
    """Time limits for grading one hand-in (seconds; see limits.py).

    Its repr is part of the grader key: it holds what was asked for, not what
    this machine's calibration made of it (so a regrade is not forced by noise).
    """
    case_timeout: float | None   # --timeout: every case's limit; None: the rule
    cell_timeout: float
    budget: float                # the most a hand-in may take: submission_timeout or --submission-timeout
    limit_floor: float | None = None   # --limit-floor / --limit-factor: the rule's terms for this run;
    limit_factor: float | None = None  # None: cases.toml's
    case_limits: tuple = field(default=(), compare=False, repr=False)  # CPU seconds per case, in order
    hand_in_budget: float = field(default=0.0, compare=False, repr=False)
    # The reference's CPU seconds per case on this machine (None where not recorded): a time-out says it.
    reference_seconds: tuple = field(default=(), compare=False, repr=False)
    # Each cell's limit on the first run, from the reference's cells (limits.first_cell_limit); None: the
    # generous `cell_timeout` from the start.
    first_cell_timeout: float | None = field(default=None, compare=False, repr=False)


@dataclass
class Assignment:
    id: str
    title: str
    notebook: str
    cases: list
    case_timeout: float
    cell_timeout: float
    budget: float
    cases_path: Path
    timing_path: Path
    solution_path: Path
    student_path: Path
    expected_path: Path
    # function -> functions it calls, declared in cases.toml's [uses] table
    # (call_graph.py adds what the reference notebook's code shows).
    uses: dict = field(default_factory=dict)
    limit_floor: float = 0.25    # see limits.py
    limit_factor: float = 20.0
    # Cells the grader need not run: demos, public checks, the check helpers
    # (the worker already has them) and the reference's instructor-only cells.
    skip_tags: tuple = ("demo", "public-check", "autograder-runtime", "reference-only")

    @property
    def max_score(self):
        return round(sum(c.points for c in self.cases), 6)

    @property
    def public_cases(self):
        return [c for c in self.cases if not c.hidden]

    @property
    def hidden_cases(self):
        return [c for c in self.cases if c.hidden]

    def functions(self):
        """Tested functions, in order of first appearance."""
        return list(dict.fromkeys(c.function for c in self.cases))

    def settings(self, case_timeout=None, budget=None, limit_floor=None, limit_factor=None):
        """The assignment's time limits on this machine, with command-line overrides."""
        timing = limits.load_timing(self)
        ratio = limits.machine_ratio(timing)
        rule = replace(self, limit_floor=self.limit_floor if limit_floor is None else limit_floor,
                       limit_factor=self.limit_factor if limit_factor is None else limit_factor)
        case_limits = limits.case_limits(rule, timing, ratio, case_timeout)
        cap = budget or self.budget
        return Settings(case_timeout=case_timeout, cell_timeout=self.cell_timeout, budget=cap,
                        limit_floor=limit_floor, limit_factor=limit_factor, case_limits=tuple(case_limits),
                        reference_seconds=tuple(limits.reference_seconds(self, timing, ratio)),
                        hand_in_budget=limits.hand_in_budget(rule, timing, ratio, case_limits, cap),
                        first_cell_timeout=limits.first_cell_limit(rule, timing, ratio))

    def rubric_key(self):
        """Changes whenever the assignment's own rubric does: its cases and points (cases.toml), expected values
        (expected.json), the reference's timings its limits follow (timing.json) and the limits course.toml
        and cases.toml set; not this machine's speed, nor what a run's options asked for."""
        digest = hashlib.sha256()
        for path in (self.cases_path, self.expected_path, self.timing_path):
            digest.update(path.read_bytes() if path.exists() else b"")
        digest.update(repr((self.case_timeout, self.cell_timeout, self.budget, self.limit_floor,
                            self.limit_factor)).encode())
        return digest.hexdigest()[:16]

    def grader_key(self, settings):
        """Changes whenever a regrade could change a result: `<rubric>.<options>`, the assignment's rubric
        (rubric_key) and what the run asked for (`--timeout`, `--limit-floor`, ...), so a stored key says
        whether a score was graded under the rubric the assignment has now (rubric_of)."""
        options = hashlib.sha256(repr(settings).encode()).hexdigest()[:16]
        return f"{self.rubric_key()}.{options}"

    def legacy_grader_key(self, settings):
        """The key versions before rubric_key stored: the same file graded under it needs no regrade."""
        digest = hashlib.sha256()
        for path in (self.cases_path, self.expected_path, self.timing_path):
            digest.update(path.read_bytes() if path.exists() else b"")
        digest.update(repr(settings).encode())
        return digest.hexdigest()[:16]

    def load_expected(self):
        try:
            data = json.loads(self.expected_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise AssignmentError(f"{self.expected_path} is missing: run `autograder build`") from None
        missing = [c.name for c in self.cases if c.name not in data["expected"]]
        if missing:
            raise AssignmentError(f"{self.expected_path} is stale (no value for {missing[0]!r}): "
                                  "run `autograder build`")
        return data["expected"]


def rubric_of(grader_key):
    """The rubric part of a stored grader key (Assignment.grader_key); None for a key an older version stored,
    which does not say."""
    rubric, dot, _ = (grader_key or "").partition(".")
    return rubric if dot else None


def load_assignment(course, assignment_id):
    folder = course.cases_dir / assignment_id
    path = folder / "cases.toml"
    if not path.is_file():
        known = ", ".join(course.assignment_ids()) or "none"
        raise AssignmentError(f"no assignment {assignment_id!r} (known: {known})")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise AssignmentError(f"{path}: {error}") from None
    cases = [_case(raw, path, i) for i, raw in enumerate(data.get("case", []), 1)]
    cases = _with_requirements(cases, [raw.get("requires", []) for raw in data.get("case", [])],
                               data.get("requires", {}), path)
    assignment = Assignment(
        id=assignment_id,
        title=data.get("title", assignment_id),
        notebook=data.get("notebook", f"{assignment_id}.ipynb"),
        cases=cases,
        # An assignment's own limits win; course.toml's [limits] are the defaults.  Each is checked as the
        # `grade` option that overrides it is (core/numbers.py).
        case_timeout=_seconds(data.get("case_timeout", course.limits["case_timeout"]), path, "case_timeout"),
        cell_timeout=_seconds(data.get("cell_timeout", course.limits["cell_timeout"]), path, "cell_timeout"),
        budget=_seconds(data.get("submission_timeout", course.limits["submission_timeout"]), path,
                        "submission_timeout"),
        cases_path=path,
        timing_path=folder / "timing.json",
        limit_floor=_seconds(data.get("limit_floor", limits.DEFAULT_FLOOR), path, "limit_floor"),
        limit_factor=_number(data.get("limit_factor", limits.DEFAULT_FACTOR), 1, 1e6, f"{path}: limit_factor"),
        solution_path=course.root / "solutions" / assignment_id / data.get("notebook", f"{assignment_id}.ipynb"),
        student_path=course.root / "assignments" / assignment_id / data.get("notebook", f"{assignment_id}.ipynb"),
        expected_path=folder / "expected.json",
        uses=_uses(data.get("uses", {}), path),
    )
    _validate(assignment, course)
    return assignment


def _number(value, low, high, where, unit=""):
    try:
        return checked(value, low, high, unit)
    except NumberError as error:
        raise AssignmentError(f"{where}: {error}") from None


def _seconds(value, path, key):
    return _number(value, 0.01, MAX_LIMIT_SECONDS, f"{path}: {key}", " seconds")


def _uses(raw, path):
    """[uses] table: `count_solutions = ["is_solved"]`, a function and the functions it calls."""
    if not isinstance(raw, dict) or not all(
            isinstance(v, list) and all(isinstance(f, str) for f in v) for v in raw.values()):
        raise AssignmentError(f'{path}: [uses] maps a function to a list of names, e.g. f = ["g"]')
    return {function: tuple(called) for function, called in raw.items()}


def _case(raw, path, number):
    where = f"{path}, case {number}"
    try:
        call = parse_call(raw["call"])
        points = _number(raw["points"], 0, MAX_POINTS, f"{where}: points", " points")
    except KeyError as error:
        raise AssignmentError(f"{where}: missing {error.args[0]!r}") from None
    except CallError as error:
        raise AssignmentError(f"{where}: {error}") from None
    hidden = bool(raw.get("hidden", False))
    description = raw.get("description", "")
    if hidden and not description:
        # A hidden case is shown to students by its description alone.
        raise AssignmentError(f"{where}: a hidden case needs a description")
    how = raw.get("compare", "equal")
    if how not in runtime.COMPARISONS:
        raise AssignmentError(f"{where}: compare = {how!r} is not one of {sorted(runtime.COMPARISONS)}")
    options = raw.get("options", {})
    if how == "faster_than":
        try:
            parse_call(options["baseline"])
        except KeyError:
            raise AssignmentError(f"{where}: compare = 'faster_than' needs options.baseline, "
                                  "a call to time against") from None
        except CallError as error:
            raise AssignmentError(f"{where}: options.baseline: {error}") from None
    return Case(
        name=raw.get("name") or (f"hidden: {description}" if hidden else call.text),
        call=call, points=points, hidden=hidden, description=description,
        hint=raw.get("hint", ""), compare=how, options=options,
        timeout=None if raw.get("timeout") is None else _seconds(raw["timeout"], path, f"case {number}: timeout"),
    )


def _with_requirements(cases, per_case, per_function, path):
    """The cases with `requires` filled in: the names of the cases each one needs to pass.

    An entry names a case by its name (a public case's call text, or `name = ...`) or by its call text
    when that is unambiguous.  Cases may require each other: `a` requires `b` and `b` requires `a`
    means both count or neither.
    """
    if not isinstance(per_function, dict) or not all(
            isinstance(v, list) and all(isinstance(e, str) for e in v) for v in per_function.values()):
        raise AssignmentError(f'{path}: [requires] maps a function to a list of cases, '
                              'e.g. is_solved = ["is_solved([0, 2, 4, 6, 1, 3, 5])"]')
    known = {c.function for c in cases}
    for function in per_function:
        if function not in known:
            raise AssignmentError(f"{path}: [requires] names {function!r}, which no case calls")
    out = []
    for number, (case, entries) in enumerate(zip(cases, per_case), 1):
        if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
            raise AssignmentError(f'{path}, case {number}: requires is a list of cases, e.g. ["f(1)"]')
        named = [_find_case(cases, entry, f"{path}, case {number}") for entry in entries]
        named += [_find_case(cases, entry, f"{path}, [requires] {case.function}")
                  for entry in per_function.get(case.function, [])]
        names = {c.name for c in named if c.name != case.name}
        for required in (c for c in cases if c.name in names):
            _check_requirement(case, required, path)
        order = tuple(c.name for c in cases if c.name in names)
        out.append(replace(case, requires=order) if order else case)
    return out


def _find_case(cases, entry, where):
    match = [c for c in cases if c.name == entry] or [c for c in cases if c.call.text == entry]
    if len(match) != 1:
        problem = "no case" if not match else f"{len(match)} cases"
        raise AssignmentError(f"{where}: requires {entry!r}, but {problem} has that name or call "
                              "(name a case by its call text, or by its `name`)")
    return match[0]


def _check_requirement(case, required, path):
    if required.compare == "faster_than":
        raise AssignmentError(f"{path}: the case {case.name!r} requires the speed case {required.name!r}, "
                              "whose verdict depends on the machine's timing: require a value case instead")


def _validate(assignment, course):
    names = [c.name for c in assignment.cases]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise AssignmentError(f"{assignment.cases_path}: case names repeat: {duplicates}")
    if abs(assignment.max_score - course.points_per_assignment) > 1e-9:
        raise AssignmentError(
            f"{assignment.cases_path}: cases add up to {assignment.max_score:g} points, "
            f"the course gives {course.points_per_assignment:g} per assignment")
