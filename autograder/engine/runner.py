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
expected values.
"""

import contextlib
import statistics
import time
from dataclasses import dataclass, field

from .sandbox import CaseCrashed, SandboxError, WorkerDied, WorkerTimeout, call_request, cell_request
from .scheduling import promptly


@dataclass
class CallOutcome:
    status: str            # "ok", "error", "timeout", "crashed"
    value: object = None   # plain value when ok
    message: str = ""
    traceback: str = ""
    seconds: float = 0.0
    cpu_seconds: float | None = None  # CPU time of the call, as its process counted it (median of repeats)


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
    """Execute `cells` (source strings), then each encoded call with its time limit.

    `files` ({name: bytes}: the hand-in's helper modules) are put in each worker's folder first.

    `budget` caps the whole run; calls left when it is spent are not run.
    `until(index, outcome)`, when given, may return True to stop after that
    call: the outcomes then end there (the audit needs only a mutant's first
    failing case).  A call with "sealed": True (a hidden case) must not be learnt before its turn: it comes
    after every other call, and is never sent ahead (see sealed).
    """
    _check_sealed_last(calls)
    started = time.monotonic()
    # The budget counts the time the hand-in's processes ran or slept, not the
    # time they waited for a CPU (Worker.charged); the wall clock only backs it up.
    budget_left = _Budget(budget, started + WALL_BUDGET_FACTOR * budget + WALL_BUDGET_EXTRA)
    # The cells may not eat the time the cases need: up to half the budget is kept for them.
    reserve = min(sum(t * c.get("repeat", 1) for t, c in zip(timeouts, calls)), budget / 2)
    skipped, cell_errors, outcomes = {}, [], []      # skipped: cell index -> why it stopped the worker
    stopped = set()
    restarts, runners, worker = 0, 0, None
    spent = [0.0, 0.0]  # student time, and of it the cells' (by the last run of them): see _run_cells, _call
    fork_runners = False  # a call has killed a worker that ran it itself: every case gets a runner now
    try:
        while len(outcomes) < len(calls):
            if budget_left(worker) <= 0:
                outcomes += [CallOutcome("timeout", message=f"not run: the hand-in used up its {budget:g} s")
                             for _ in range(len(calls) - len(outcomes))]
                break
            if worker is None:  # every restart skips one more cell or follows a case: no count is needed
                worker = sandbox.worker(slot)
                worker.fork_runners = fork_runners
                if files:
                    _put_files(worker, files)
                cell_errors = _run_cells(worker, cells, skipped, stopped, cell_timeout, budget_left, reserve, spent,
                                         rerun=budget_left.forgive_cells,
                                         first_call=_first_call(calls, timeouts, len(outcomes), fork_runners, until))
                if cell_errors is None:  # a cell hung or killed the worker: skip it next time
                    budget_left.close(worker)
                    worker, restarts = None, restarts + 1
                    continue
                budget_left.forgive_cells = False
            index = len(outcomes)
            limit = max(0.01, min(timeouts[index], budget_left(worker)))
            ran_in_worker = worker.runner == worker.pid or (worker.runner is None and not worker.fork_runners)
            ahead = _next_calls(calls, timeouts, index, budget_left(worker) - limit) \
                if ran_in_worker and until is None else []
            outcome, alive = _call(worker, calls[index], limit, spent, ahead)
            outcomes.append(outcome)
            if not alive:
                runners += worker.runners_started
                budget_left.close(worker)
                worker, restarts = None, restarts + 1
                if ran_in_worker and not fork_runners:
                    fork_runners = budget_left.forgive_cells = True
            if until is not None and until(index, outcome):
                break
    finally:
        if worker is not None:
            runners += worker.runners_started
            worker.close()
    # A cell that hung or killed the worker was skipped from then on: it is an error of the hand-in too.
    errors = sorted((cell_errors or []) + list(skipped.items()))
    return RunOutcome(outcomes, errors, sorted(skipped), restarts, time.monotonic() - started,
                      spent[0], runners, spent[1], sorted(stopped))


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


WALL_BUDGET_FACTOR, WALL_BUDGET_EXTRA = 4, 30.0


class _Budget:
    """Seconds left of a hand-in's budget, charged by its workers; calling it asks."""

    def __init__(self, budget, wall_deadline):
        self.budget, self.wall_deadline = budget, wall_deadline
        self.closed = 0.0  # charged by workers already replaced
        # The next worker's cells are a re-run that the grader's choice caused (the calls ran
        # in the worker, and one killed it), not the student: they are not charged.
        self.forgive_cells = False

    def __call__(self, worker):
        used = self.closed + (_charged(worker) if worker is not None else 0.0)
        return min(self.budget - used, self.wall_deadline - time.monotonic())

    def close(self, worker):
        worker.close()
        self.closed += _charged(worker)


def _charged(worker):
    return worker.charged - worker.forgiven


def _run_cells(worker, cells, skipped, stopped, timeout, budget_left, reserve, spent, rerun=False,
               first_call=None):
    """Run the cells; their errors, or None if one hung or killed the worker (it is then in `skipped`).

    `stopped` gathers the cells stopped at their time limit.  `rerun`: not
    charged to the budget, and each cell gets the limit it had on the first run.
    `first_call`: (the call that comes next, its limit), when the worker itself will answer it.
    """
    errors = []
    spent[1] = 0.0
    order = [index for index in range(len(cells)) if index not in skipped]
    for position, index in enumerate(order):
        left = budget_left.budget - worker.charged if rerun else budget_left(worker)
        limit = max(0.01, min(timeout, left - reserve))
        # The cells after this one are sent right behind it (pipelining: each starts the moment the one
        # before it ends, not a round trip later), each only while the budget gives it its full limit
        # even if every cell before it uses all of its own, so the limit sent ahead is the one it would
        # have had anyway.  Behind the last cell goes the first call, when the worker will answer it
        # itself (not on a re-run, whose cells' budget is not the one the call's limit comes from).
        ahead, spare = [], left - limit
        for following in order[position + 1:position + 1 + _MOST_AHEAD]:
            if spare - reserve < timeout:
                break
            ahead.append((cell_request(cells[following]), timeout))
            spare -= timeout
        else:
            if position + 1 + _MOST_AHEAD >= len(order) and first_call is not None and not rerun \
                    and spare >= first_call[1]:
                ahead.append((call_request(first_call[0]), first_call[1]))
        try:
            reply = worker.run_cell(cells[index], limit, ahead)
        except WorkerTimeout:
            skipped[index] = f"stopped after {limit:.3g} s (time limit); it would not stop, so it was skipped"
            stopped.add(index)
            return None
        except WorkerDied as error:
            skipped[index] = f"it stopped the Python process ({error}), so it was skipped"
            return None
        spent[0] += reply["seconds"]
        spent[1] += reply["seconds"]
        if reply["timed_out"]:
            stopped.add(index)
            errors.append((index, f"stopped after {limit:.3g} s (time limit)"))
        elif not reply["ok"]:
            errors.append((index, reply["error"] or "error"))
    if rerun:
        worker.forgiven = worker.charged
    return errors


def _first_call(calls, timeouts, index, fork_runners, until):
    """(the call `index`, its limit) to send behind the last cell, or None: only a call the worker will
    answer itself (no case runner), timed once, not sealed, and not in the audit (which may stop before it)."""
    if fork_runners or until is not None or index >= len(calls) or timed_alone(calls[index]) \
            or sealed(calls[index]):
        return None
    return calls[index], timeouts[index]


def sealed(call):
    """Must the call's input stay unknown to the hand-in until its turn (a hidden case)?

    Whatever a request sent ahead is queued behind can read it (the worker's queue is in the student's own
    process, through gc, and so is the pipe it comes down), and what that request answers, its value, its
    message, its pass or fail, is shown to the student.  So a sealed call is written only on its turn, when
    the worker has answered everything before it, and nothing is written behind it: not behind a cell, not
    behind an open call, not behind another sealed one (whose own result, however few its words, could
    otherwise carry a later input)."""
    return call.get("sealed") is True


def _check_sealed_last(calls):
    """A hand-in that keeps the inputs it is called with could hand a sealed one back in a later open call's
    value or message, which its feedback shows: every sealed call comes after every open one."""
    seen_sealed = False
    for call in calls:
        if seen_sealed and not sealed(call):
            raise ValueError("a sealed call (a hidden case) came before an open one: every open call must run first")
        seen_sealed = seen_sealed or sealed(call)


def timed_alone(call):
    """Is the call's time judged (a speed case, "timed", or one timed more than once)?  Then it is never sent
    ahead of its turn, nor anything behind it: the wall time measured here must be its own, from the
    moment it is asked for to its answer."""
    return call.get("repeat", 1) != 1 or call.get("timed") is True


# Requests sent ahead of their turn at most (sandbox.Worker also keeps their bytes under a pipe's page).
_MOST_AHEAD = 16


def _next_calls(calls, timeouts, index, budget_after):
    """[(a call after `index`, its limit), ...] in order, to send ahead of their turn.

    Only open calls (never a sealed one, see sealed) timed once, after an open call timed once (a case that
    judges speed is timed alone, from its own request), and each only while the budget left after every call before it has used its whole
    limit still gives it its full limit, so the limit sent ahead is the one it would have had anyway."""
    ahead = []
    if timed_alone(calls[index]) or sealed(calls[index]):
        return ahead
    for following in range(index + 1, min(len(calls), index + 1 + _MOST_AHEAD)):
        if timed_alone(calls[following]) or sealed(calls[following]) or budget_after <= timeouts[following]:
            break
        ahead.append((calls[following], timeouts[following]))
        budget_after -= timeouts[following]
    return ahead


def _call(worker, call, timeout, spent, ahead=()):
    """One call; returns (outcome, whether the worker is still usable).

    The time is measured here, outside the student's process, so patching
    the clock in the notebook changes nothing.  A call with "repeat": k runs
    k times and keeps the fastest, for cases that judge speed.  `ahead`: see Worker.call.
    """
    # A judged time is read the moment its answer comes, not when a busy core next frees up (scheduling.py).
    with promptly() if timed_alone(call) else contextlib.nullcontext():
        return _run_call(worker, call, timeout, spent, ahead)


def _run_call(worker, call, timeout, spent, ahead):
    best, cpu = None, []
    for _ in range(call.get("repeat", 1)):
        started = time.perf_counter()
        try:
            reply = worker.call(call, timeout, ahead)
        except CaseCrashed as error:
            return CallOutcome("crashed", message=str(error), seconds=time.perf_counter() - started), True
        except WorkerTimeout:
            return CallOutcome("timeout", message=_too_long(timeout),
                               seconds=time.perf_counter() - started), False
        except WorkerDied as error:
            return CallOutcome("crashed", message=f"the Python process running it stopped: {error}",
                               seconds=time.perf_counter() - started), False
        seconds = time.perf_counter() - started
        spent[0] += min(reply["seconds"], seconds)
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
    return best, True


def _too_long(limit):
    return f"no result within {limit:.3g} s (time limit, counted in CPU time)"
