"""The engine: runs untrusted hand-ins in a sandbox and brings back plain outcomes.

The grader's side: sandbox.py starts the zygote and asks it for workers;
handle.py is the grader's end of one worker (it writes requests and reads
answers, within their limits, watch.py); requests.py decides what is written
and when (pure); runner.py runs a notebook's cells and its cases and owns the
budget; replies.py checks every reply; scheduling.py keeps grading threads
from preempting workers.  The sandboxed side, copied into the sandbox's own
folder: zygote.py (a warm process, two roles) forks one worker.py per hand-in;
isolation.py and its parts shut each worker in before any student code runs.
Nothing here knows expected values or points: that is grade/'s job.

The rest of the package uses the engine only through the names below.
"""

from .isolation import HIDES, LAYERS, MAX_SLOTS
from .requests import Call
from .runner import CallOutcome, RunOutcome, run
from .sandbox import Limits, Sandbox, SandboxError, preload_for
from .scheduling import defer_to_workers, promptly

__all__ = ("Call", "CallOutcome", "HIDES", "LAYERS", "Limits", "MAX_SLOTS", "RunOutcome", "Sandbox", "SandboxError",
           "defer_to_workers", "preload_for", "promptly", "run")
