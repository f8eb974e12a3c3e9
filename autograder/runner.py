"""Run a notebook's code and a list of calls in a sandbox, whatever the code does.

Cells run top to bottom with errors allowed, as "Run all" would with
`allow_errors`.  A cell or call that runs past its time limit is interrupted;
if the worker will not yield, or dies, a fresh worker re-runs the cells,
skipping the ones that hung or killed it, and grading goes on with the next
call.  Outcomes are plain data; nothing here knows expected values.
"""

import time
from dataclasses import dataclass, field

from .sandbox import Limits, Worker, WorkerDied, WorkerTimeout

MAX_RESTARTS = 3


@dataclass
class CallOutcome:
    status: str            # "ok", "error", "timeout", "crashed"
    value: object = None   # plain value when ok
    message: str = ""
    traceback: str = ""
    seconds: float = 0.0


@dataclass
class RunOutcome:
    calls: list
    cell_errors: list = field(default_factory=list)   # (cell index, message)
    cells_skipped: list = field(default_factory=list)  # cells that hung or killed the worker
    restarts: int = 0


def run(cells, calls, timeouts, cell_timeout=30.0, limits=Limits()):
    """Execute `cells` (source strings), then each encoded call with its time limit."""
    skipped, cell_errors, outcomes = set(), [], []
    restarts = 0
    worker = None
    try:
        while len(outcomes) < len(calls):
            if worker is None:
                if restarts > MAX_RESTARTS:
                    message = "the notebook kept crashing the grader's worker; no further cases were run"
                    outcomes += [CallOutcome("crashed", message=message)
                                 for _ in range(len(calls) - len(outcomes))]
                    break
                worker = Worker(limits)
                cell_errors = _run_cells(worker, cells, skipped, cell_timeout)
                if cell_errors is None:  # a cell hung or killed the worker: skip it next time
                    worker.close()
                    worker, restarts = None, restarts + 1
                    continue
            index = len(outcomes)
            outcome, alive = _call(worker, calls[index], timeouts[index])
            outcomes.append(outcome)
            if not alive:
                worker.close()
                worker, restarts = None, restarts + 1
    finally:
        if worker is not None:
            worker.close()
    return RunOutcome(outcomes, cell_errors or [], sorted(skipped), restarts)


def _run_cells(worker, cells, skipped, timeout):
    errors = []
    for index, code in enumerate(cells):
        if index in skipped:
            continue
        try:
            reply = worker.request({"op": "cell", "code": code}, timeout)
        except (WorkerTimeout, WorkerDied):
            skipped.add(index)
            return None
        if reply.get("timed_out"):
            errors.append((index, f"stopped after {timeout:g} s (time limit)"))
        elif not reply["ok"]:
            errors.append((index, reply["error"]))
    return errors


def _call(worker, call, timeout):
    """One call; returns (outcome, whether the worker is still usable).

    The time is measured here, outside the student's process, so patching
    the clock in the notebook changes nothing.  A call with "repeat": k runs
    k times and keeps the fastest, for cases that judge speed.
    """
    best = None
    for _ in range(call.get("repeat", 1)):
        started = time.perf_counter()
        try:
            reply = worker.request({"op": "call", **call}, timeout)
        except WorkerTimeout:
            return CallOutcome("timeout", message=f"no result within {timeout:g} s",
                               seconds=time.perf_counter() - started), False
        except WorkerDied as error:
            return CallOutcome("crashed", message=f"the code stopped the Python process ({error})",
                               seconds=time.perf_counter() - started), False
        seconds = time.perf_counter() - started
        if reply.get("timed_out") or reply.get("interrupted"):
            return CallOutcome("timeout", message=f"no result within {timeout:g} s", seconds=seconds), True
        if not reply["ok"]:
            return CallOutcome("error", message=reply["error"], traceback=reply.get("traceback", ""),
                               seconds=seconds), True
        if best is None or seconds < best.seconds:
            best = CallOutcome("ok", value=reply["value"], seconds=seconds)
    return best, True
