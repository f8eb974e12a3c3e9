"""Grade variants of the reference notebook through the sandbox, like hand-ins, many at once.

A variant is the reference's code cells with one change (a mutant, a stub).
It runs in a fresh sandboxed worker with the assignment's own time limits,
and every case is scored by scoring.score_case against expected.json, as
`grade` does; `jobs` variants run at once, each in its own grading slot.
"""

import queue
from concurrent.futures import ThreadPoolExecutor

from ..grade import baselines, handin as grading, scoring


class Trials:
    def __init__(self, assignment, expected, sandbox, jobs):
        self.assignment, self.expected, self.sandbox, self.jobs = assignment, expected, sandbox, jobs
        self.settings = assignment.settings()
        self._slots = queue.Queue()
        for slot in range(jobs):
            self._slots.put(slot)

    def map(self, function, items):
        """[function(item, slot) for item in items], `jobs` at a time, in the items' order."""
        def one(item):
            slot = self._slots.get()
            try:
                return function(item, slot)
            finally:
                self._slots.put(slot)

        with ThreadPoolExecutor(max_workers=self.jobs) as pool:
            return list(pool.map(one, items))

    def grade(self, sources, slot, cases=None, stop_at_first_failure=False):
        """Case results of the variant `sources` (cells), for `cases` in their order (default: all).

        With stop_at_first_failure the run ends at the first case that does
        not pass, which is all a mutant's verdict needs.
        """
        cases = self.assignment.cases if cases is None else cases
        yardsticks = baselines.baseline_seconds(self.assignment, self.sandbox, slot)

        def score(case, outcome):
            return scoring.score_case(case, self.expected[case.name], outcome, yardsticks.get(case.name))

        def until(index, outcome):
            return stop_at_first_failure and score(cases[index], outcome).status != "passed"

        run = grading.run_cases(self.assignment, list(sources), self.sandbox, slot, self.settings, cases, until)
        results = [score(case, outcome) for case, outcome in zip(cases, run.calls)]
        # A mutant's verdict is its first raw failure (a withheld case's requirement fails on its own);
        # every other variant is scored as a hand-in is, requirements and all.
        return results if stop_at_first_failure else scoring.apply_requirements(cases, results)

    def grade_file(self, path, slot):
        return grading.grade(self.assignment, self.expected, "audit", path, self.sandbox, slot, self.settings)

    def grade_cells(self, cells, slot):
        """A notebook's code cells (intake's CodeCell) graded as a hand-in is, requirements and all."""
        return grading.grade(self.assignment, self.expected, "audit", self.assignment.student_path, self.sandbox,
                             slot, self.settings, cells=cells)
