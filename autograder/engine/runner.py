"""Run a notebook's code and a list of calls in a sandbox, whatever the code does.

Cells run top to bottom with errors allowed, as "Run all" would with
`allow_errors`.  Then the calls run one after another, in the worker itself
while nothing has gone wrong (most hand-ins: no fork to pay for).  Every case
gets its own try: the first call that kills or hangs the worker costs one
re-run of the cells, which is not charged to the hand-in's budget; from then
on the new worker forks a case runner from its post-cells state, and each
call that kills or hangs a runner costs a fork of a new one, not a re-run of
the notebook.  Only when the worker itself stops cooperating (its code is the
student's: cells can patch it) or a cell hangs or kills it does a fresh
worker re-run the cells (charged), skipping the ones that hung or killed it.
Limits are CPU seconds; a whole hand-in also has a wall-clock budget, and
nothing else bounds the tries.  Outcomes are plain data; nothing here knows
expected values.  What goes ahead of its turn is requests.py's to say; the
budget is this module's alone (Budget).
"""

import contextlib
import statistics
import time
from dataclasses import dataclass, field

from .handle import CaseCrashed, WorkerDied, WorkerTimeout
from .requests import calls_ahead, cell_request, cells_ahead, check_sealed_last, first_call
from .sandbox import SandboxError
from .scheduling import promptly


@dataclass
class CallOutcome:
    status: str            # "ok", "error", "timeout", "crashed"
    value: object = None   # plain value when ok
    message: str = ""
    traceback: str = ""
    seconds: float = 0.0
    cpu_seconds: float | None = None  # CPU time of the call, as its process counted it (median of repeats)
    cpu_fastest: float | None = None  # the least of those CPU times: the run least disturbed by other work


@dataclass
class RunOutcome:
    calls: list
    cell_errors: list = field(default_factory=list)    # (cell index, message)
    cells_skipped: list = field(default_factory=list)  # cells that hung or killed the worker
    restarts: int = 0             # workers replaced (the cells re-run)
    seconds: float = 0.0          # wall time of the whole run, as the grader saw it
    student_seconds: float = 0.0  # time the student's code ran, as the worker measured it
    runners: int = 0              # case runners forked: one, plus one per case that crashed or hung
    cells_seconds: float = 0.0    # of which the notebook's cells took
    cells_stopped: list = field(default_factory=list)  # cells stopped at their time limit (indexes)


def run(sandbox, slot, cells, calls, timeouts, cell_timeout=30.0, budget=300.0, until=None, files=None):
    """Execute `cells` (source strings), then each requests.Call with its time limit.

    `files` ({name: bytes}: the hand-in's helper modules) are put in each worker's folder first.

    `budget` caps the whole run; calls left when it is spent are not run.
    `until(index, outcome)`, when given, may return True to stop after that
    call: the outcomes then end there (the audit needs only a mutant's first
    failing case).  A sealed call (a hidden case) must not be learnt before its turn: it comes after every
    other call, and is never sent ahead (requests.sealed).
    """
    check_sealed_last(calls)
    return _Run(sandbox, slot, cells, calls, timeouts, cell_timeout, budget, until, files).outcome()


WALL_BUDGET_FACTOR, WALL_BUDGET_EXTRA = 4, 30.0
# A JIT compiler's folder in a traceback, and the CPU seconds its first compile of a function is allowed on top of
# the call's limit (numba compiles a small @njit function in 0.3-1.5 s on a loaded 2-core machine).
JIT_FOLDERS = ("/site-packages/numba/", "/site-packages/llvmlite/")
JIT_ALLOWANCE = 5.0


class Budget:
    """Seconds left of a hand-in's budget, charged by its workers (what each request used, Worker.used).

    It counts the time the hand-in's processes ran or slept, not the time they waited for a CPU; the wall
    clock only backs it up."""

    def __init__(self, seconds, wall_deadline):
        self.seconds, self.wall_deadline = seconds, wall_deadline
        self._closed = 0.0    # charged by workers already replaced
        self._forgiven = 0.0  # of what the current worker used, the seconds not charged (forgive)

    def left(self, worker):
        used = self._closed + (worker.used - self._forgiven if worker is not None else 0.0)
        return min(self.seconds - used, self.wall_deadline - time.monotonic())

    def forgive(self, worker):
        """What `worker` used so far is not charged: a re-run of the cells the grader's choice caused."""
        self._forgiven = worker.used

    def close(self, worker):
        worker.close()
        self._closed += worker.used - self._forgiven
        self._forgiven = 0.0


class _Run:
    """One run of a hand-in: its workers, in turn, and all it learnt of them."""

    def __init__(self, sandbox, slot, cells, calls, timeouts, cell_timeout, budget, until, files):
        self.sandbox, self.slot, self.cells, self.calls, self.timeouts = sandbox, slot, cells, calls, timeouts
        self.cell_timeout, self.seconds, self.until, self.files = cell_timeout, budget, until, files
        self.started = time.monotonic()
        self.budget = Budget(budget, self.started + WALL_BUDGET_FACTOR * budget + WALL_BUDGET_EXTRA)
        # The cells may not eat the time the cases need: up to half the budget is kept for them.
        self.reserve = min(sum(t * c.repeat for t, c in zip(timeouts, calls)), budget / 2)
        self.skipped, self.stopped = {}, set()   # skipped: cell index -> why it stopped the worker
        self.cell_errors, self.outcomes = [], []
        self.restarts = self.runners = 0
        self.student_seconds = 0.0
        self.cells_seconds = 0.0     # by the last run of the cells
        self.fork_runners = False  # a call has killed a worker that ran it itself: every case gets a runner now
        # The next worker's cells are a re-run that the grader's choice caused (the calls ran in the worker,
        # and one killed it), not the student: they are not charged.
        self.forgive_cells = False
        self.compiled = set()   # functions whose first call was given a JIT compiler's time (_compiling)

    def outcome(self):
        worker = None
        try:
            while len(self.outcomes) < len(self.calls):
                if self.budget.left(worker) <= 0:
                    self.outcomes += [CallOutcome("timeout", message=f"not run: the hand-in used up its "
                                                                     f"{self.seconds:g} s")
                                      for _ in range(len(self.calls) - len(self.outcomes))]
                    break
                if worker is None:  # every restart skips one more cell or follows a case: no count is needed
                    worker = self._new_worker()
                    if worker is None:
                        continue
                stop, worker = self._next_call(worker)
                if stop:
                    break
        finally:
            if worker is not None:
                self.runners += worker.runners_started
                worker.close()
        # A cell that hung or killed the worker was skipped from then on: it is an error of the hand-in too.
        errors = sorted((self.cell_errors or []) + list(self.skipped.items()))
        return RunOutcome(self.outcomes, errors, sorted(self.skipped), self.restarts, time.monotonic() - self.started,
                          self.student_seconds, self.runners, self.cells_seconds, sorted(self.stopped))

    def _new_worker(self):
        """A worker with the cells run, or None when one hung or killed it (skipped next time)."""
        worker = self.sandbox.worker(self.slot)
        try:
            if self.files:
                _put_files(worker, self.files)
            self.cell_errors = self._run_cells(worker, rerun=self.forgive_cells,
                                               first=first_call(self.calls, self.timeouts, len(self.outcomes),
                                                                self.fork_runners, self.until))
        except BaseException:
            worker.close()
            raise
        if self.cell_errors is None:  # a cell hung or killed the worker: skip it next time
            self.budget.close(worker)
            self.restarts += 1
            return None
        self.forgive_cells = False
        return worker

    def _next_call(self, worker):
        """Run the next call: (whether to stop, the worker to go on with, None if it must be replaced)."""
        index = len(self.outcomes)
        limit = max(0.01, min(self.timeouts[index], self.budget.left(worker)))
        ran_in_worker = worker.answers_calls_itself(self.fork_runners)
        ahead = calls_ahead(self.calls, self.timeouts, index, self.budget.left(worker) - limit) \
            if ran_in_worker and self.until is None else []
        outcome, alive = self._call(worker, self.calls[index], limit, ahead)
        self.outcomes.append(outcome)
        if not alive:
            self.runners += worker.runners_started
            self.budget.close(worker)
            worker, self.restarts = None, self.restarts + 1
            if ran_in_worker and not self.fork_runners:
                self.fork_runners = self.forgive_cells = True
        return self.until is not None and self.until(index, outcome), worker

    def _run_cells(self, worker, rerun=False, first=None):
        """Run the cells; their errors, or None if one hung or killed the worker (it is then in `skipped`).

        `rerun`: not charged to the budget, and each cell gets the limit it had on the first run.
        `first`: (the call that comes next, its limit), when the worker itself will answer it.
        """
        errors = []
        self.cells_seconds = 0.0
        order = [index for index in range(len(self.cells)) if index not in self.skipped]
        for position, index in enumerate(order):
            left = self.budget.seconds - worker.used if rerun else self.budget.left(worker)
            limit = max(0.01, min(self.cell_timeout, left - self.reserve))
            # The cells after this one are sent right behind it (pipelining: each starts the moment the one
            # before it ends, not a round trip later), and behind the last cell the first call, when the worker
            # will answer it itself (not on a re-run, whose cells' budget is not the one the call's limit comes
            # from): requests.cells_ahead.
            behind, with_call = cells_ahead(order[position + 1:], left - limit, self.reserve, self.cell_timeout,
                                            None if rerun else first)
            ahead = [(cell_request(self.cells[following]), cell_limit) for following, cell_limit in behind]
            if with_call:
                ahead.append((first[0].message, first[1]))
            try:
                reply = worker.run_cell(self.cells[index], limit, ahead)
            except WorkerTimeout:
                self.skipped[index] = (f"stopped after {limit:.3g} s (time limit); it would not stop, so it was "
                                       "skipped")
                self.stopped.add(index)
                return None
            except WorkerDied as error:
                self.skipped[index] = f"it stopped the Python process ({error}), so it was skipped"
                return None
            self.student_seconds += reply["seconds"]
            self.cells_seconds += reply["seconds"]
            if reply["timed_out"]:
                self.stopped.add(index)
                errors.append((index, f"stopped after {limit:.3g} s (time limit)"))
            elif not reply["ok"]:
                errors.append((index, reply["error"] or "error"))
        if rerun:
            self.budget.forgive(worker)
        return errors

    def _compiling(self, worker, call, reply, timeout):
        """Was a call that ran out of time stopped inside a JIT compiler, the first time for its function in this
        worker, with budget left for the compiler's time?  (What the traceback says is the hand-in's word: all it
        can buy is what importing numba buys any hand-in, one more run of one call per function.)"""
        files = [part.split('"', 1)[0] for part in (reply.get("traceback") or "").split('  File "')[1:]]
        if not any(folder in file for file in files for folder in JIT_FOLDERS) or call.function in self.compiled:
            return False
        self.compiled.add(call.function)
        return self.budget.left(worker) >= timeout + JIT_ALLOWANCE

    def _call(self, worker, call, timeout, ahead=()):
        """One call; returns (outcome, whether the worker is still usable).

        The time is measured here, outside the student's process, so patching the clock in the notebook changes
        nothing.  A call with `repeat` k runs k times and keeps the fastest, for cases that judge speed.  A judged
        call's time is the time it was busy, its waits for a CPU left out (watch.Watch.end): a speed case and its
        baseline are timed apart, and a CPU hog between them must not decide the case.  `ahead`: see Worker.call.
        """
        # A judged time is read the moment its answer comes, not when a busy core next frees up (scheduling.py).
        with promptly() if call.alone else contextlib.nullcontext():
            return self._run_call(worker, call, timeout, ahead)

    def _run_call(self, worker, call, timeout, ahead):
        best, cpu = None, []
        for _ in range(call.repeat):
            started = time.perf_counter()
            try:
                reply = worker.call(call, timeout, ahead, self.fork_runners)
            except CaseCrashed as error:
                return CallOutcome("crashed", message=str(error), seconds=time.perf_counter() - started), True
            except WorkerTimeout:
                return CallOutcome("timeout", message=_too_long(timeout),
                                   seconds=time.perf_counter() - started), False
            except WorkerDied as error:
                return CallOutcome("crashed", message=f"the Python process running it stopped: {error}",
                                   seconds=time.perf_counter() - started), False
            seconds = time.perf_counter() - started
            self.student_seconds += min(reply["seconds"], seconds)
            if call.timed and reply.get("busy_seconds") is not None:
                seconds = min(seconds, reply["busy_seconds"])
            if reply["timed_out"] and self._compiling(worker, call, reply, timeout):
                # The limit ran out while a JIT compiler (numba's @njit) was compiling the function on its first
                # call, as it does once per function and argument types: the call runs once more, allowed the
                # compiler's time on top of its limit, and that run counts.
                return self._run_call(worker, call, timeout + JIT_ALLOWANCE, ahead=())
            if reply["timed_out"]:
                return CallOutcome("timeout", message=_too_long(timeout), traceback=reply.get("traceback", ""),
                                   seconds=seconds), True
            if not reply["ok"]:
                status = "memory" if reply["error"].startswith("MemoryError") else "error"
                return CallOutcome(status, message=reply["error"], traceback=reply.get("traceback", ""),
                                   seconds=seconds), True
            if "cpu" in reply:
                cpu.append(min(reply["cpu"], seconds))
            if best is None or seconds < best.seconds:
                best = CallOutcome("ok", value=reply["value"], seconds=seconds)
        best.cpu_seconds = statistics.median(cpu) if cpu else None
        best.cpu_fastest = min(cpu) if cpu else None
        return best, True


def _put_files(worker, files):
    """The hand-in's helper modules in its worker's folder, before any of its code runs.  Nothing of the hand-in
    has run in that worker yet, so a failure is the grader's, never the student's (a folder not as it should be,
    a full disk): SandboxError, the hand-in is graded again in a fresh slot (grade/pool.py), never scored
    without its modules."""
    try:
        reply = worker.put_files(files)
    except (WorkerDied, WorkerTimeout) as error:
        worker.close()
        raise SandboxError(f"the hand-in's files could not be put beside it ({error})") from None
    if not reply["ok"]:
        worker.close()
        raise SandboxError(f"the hand-in's files could not be put beside it ({reply['error']})")


def _too_long(limit):
    return f"no result within {limit:.3g} s (time limit, counted in CPU time)"
