"""What the grader asks a worker, and in what order: the typed requests and the queue of those sent ahead.

Pure: no I/O, no clock.  `Call` is a case's call with what its timing needs
(timed alone, repeated, sealed); `RequestQueue` decides what is written to a
worker and when: which requests go ahead of their turn, each one's number and
epoch, when what was sent ahead must be cancelled, the byte cap, and the rule
for a request a late interrupt may have hit.  handle.Worker writes the lines
it is given and reads the answers; runner.py chooses the limits.

The worker's side of the same protocol is worker._Channel: it drops, unanswered,
what was queued behind an interrupted request and what a cancel names, and it
reads everything written before it runs each request.
"""

import collections
import functools
import json
from dataclasses import dataclass, field

# Requests sent ahead of their turn at most, and the bytes written and not yet answered (a pipe holds at least a
# page: a write then never blocks behind a worker that will not stop reading).
MOST_AHEAD = 16
AHEAD_BYTES = 4096


@dataclass(frozen=True, eq=False)
class Call:
    """One case's call, as the grader asks it: `function(*args, **kwargs)`, arguments encoded (core.calls), and
    what its timing needs.

    `repeat`: timed this many times, the fastest kept.  `timed`: its time is judged (a speed case, a baseline).
    `sealed`: its input must not be learnt before its turn (a hidden case), see sealed below."""
    function: str
    args: list
    kwargs: dict = field(default_factory=dict)
    repeat: int = 1
    timed: bool = False
    sealed: bool = False

    @classmethod
    def of(cls, encoded, **needs):
        """A Call from core.calls' encoding ({"function", "args", "kwargs"}) and its timing needs."""
        return cls(encoded["function"], encoded["args"], encoded.get("kwargs", {}), **needs)

    @property
    def alone(self):
        """Is its time judged (timed, or timed more than once)?  Then it is never sent ahead of its turn, nor
        anything behind it: the wall time measured must be its own, from the moment it is asked for to its answer."""
        return self.repeat != 1 or self.timed

    @functools.cached_property
    def message(self):
        """What the worker is sent: the call alone (how the grader times or seals it is the grader's).  One object
        per call, so comparing what was sent ahead with what comes next is mostly an identity check."""
        return {"op": "call", "function": self.function, "args": self.args, "kwargs": self.kwargs}


def cell_request(code):
    return {"op": "cell", "code": code}


def sealed(call):
    """Must the call's input stay unknown to the hand-in until its turn (a hidden case)?

    Whatever a request sent ahead is queued behind can read it (the worker's queue is in the student's own
    process, through gc, and so is the pipe it comes down), and what that request answers, its value, its
    message, its pass or fail, is shown to the student.  So a sealed call is written only on its turn, when
    the worker has answered everything before it, and nothing is written behind it: not behind a cell, not
    behind an open call, not behind another sealed one (whose own result, however few its words, could
    otherwise carry a later input)."""
    return call.sealed


def check_sealed_last(calls):
    """A hand-in that keeps the inputs it is called with could hand a sealed one back in a later open call's
    value or message, which its feedback shows: every sealed call comes after every open one."""
    seen_sealed = False
    for call in calls:
        if seen_sealed and not call.sealed:
            raise ValueError("a sealed call (a hidden case) came before an open one: every open call must run first")
        seen_sealed = seen_sealed or call.sealed


def calls_ahead(calls, limits, index, budget_after):
    """[(a call after `index`, its limit), ...] in order, to send ahead of their turn behind call `index`.

    Only open calls (never a sealed one) timed once, after an open call timed once (a case that judges speed is
    timed alone, from its own request), and each only while the budget left after every call before it has used
    its whole limit still gives it its full limit, so the limit sent ahead is the one it would have had anyway."""
    ahead = []
    if calls[index].alone or calls[index].sealed:
        return ahead
    for following in range(index + 1, min(len(calls), index + 1 + MOST_AHEAD)):
        if calls[following].alone or calls[following].sealed or budget_after <= limits[following]:
            break
        ahead.append((calls[following], limits[following]))
        budget_after -= limits[following]
    return ahead


def first_call(calls, limits, index, fork_runners, until):
    """(the call `index`, its limit) to send behind the last cell, or None: only a call the worker will answer
    itself (no case runner), timed once, not sealed, and not in the audit (which may stop before it)."""
    if fork_runners or until is not None or index >= len(calls) or calls[index].alone or calls[index].sealed:
        return None
    return calls[index], limits[index]


def cells_ahead(following, spare, reserve, timeout, last=None):
    """The cells to send behind the one about to run, as [(index, limit)], and whether `last` goes behind them.

    `following`: the indexes of the cells after it, in order; `spare`: the budget left once it has used its whole
    limit; `reserve`: what is kept for the cases; `last`: (a call, its limit) that may go behind the last cell.
    Each goes only while the budget gives it its full limit even if every cell before it uses all of its own,
    so the limit sent ahead is the one it would have had anyway."""
    ahead = []
    for index in following[:MOST_AHEAD]:
        if spare - reserve < timeout:
            return ahead, False
        ahead.append((index, timeout))
        spare -= timeout
    return ahead, len(following) <= MOST_AHEAD and last is not None and spare >= last[1]


@dataclass
class _Sent:
    number: int
    request: tuple     # (message, limit)
    size: int


@dataclass(frozen=True)
class Asking:
    """What the grader writes to ask for one request: a cancel first (or None), then the requests not yet written.

    `lines` are written in order until one fails or RequestQueue.next_line() says no more; `leaked`: the request
    asked for may run again (see RequestQueue.rerun)."""
    cancel: bytes | None
    leaked: bool


class RequestQueue:
    """The requests written to one worker and not yet answered, and what may be written next (see the module).

    Requests carry a number (their answer's id) and an epoch.  When what comes next is not what was sent ahead
    (the budget ran short, say), the epoch is cancelled: the worker drops whatever of it has not started, and
    late answers are skipped by their numbers.  When a request comes back interrupted, the worker drops what was
    queued behind it, and so does this queue (a new epoch).  An interrupt the grader sent one request may land in
    the one sent behind it, which the worker had already begun: that one runs again, alone, before anything is
    written behind it."""

    def __init__(self, cap=AHEAD_BYTES):
        self.cap = cap
        self._sent = collections.deque()   # _Sent, in order
        self._bytes = 0
        self._sequence = 0                 # the last number given
        self._epoch = 0
        self._interrupted_last = False     # the grader interrupted the last request it waited for
        self._unsettled = False            # a cancel was written and no answer read since
        self._wanted = []                  # what the current ask wants written, in order
        self._leaked = False

    @property
    def idle(self):
        """Has the worker answered everything it was written (nothing queued, nothing cancelled still running)?"""
        return not self._sent and not self._unsettled

    def ask(self, wanted):
        """Begin asking for wanted[0], with wanted[1:] ([(message, limit)]) to go behind it: the cancel to write
        first, if what was sent ahead is not what comes next.  Then write next_line() until it says None."""
        cancel = None
        if len(self._sent) > len(wanted) or any(sent.request != want for sent, want in zip(self._sent, wanted)):
            cancel = self._cancel()
        # After an interrupt that may have landed in the request sent ahead, that request may run again:
        # nothing more goes behind it until its answer says.
        self._leaked = bool(self._sent) and self._interrupted_last
        self._wanted = wanted[:1] if self._leaked else wanted
        return Asking(cancel, self._leaked)

    def next_line(self):
        """The next line to write for the current ask, or None: all of it is written, or the rest must wait its turn
        (written and unanswered requests stay under the cap; only the first, which a waiting worker reads at
        once, may be larger).  Call sent() once it is written."""
        if len(self._sent) >= len(self._wanted):
            return None
        message, limit = self._wanted[len(self._sent)]
        line = (json.dumps({**message, "limit": limit, "id": self._sequence + 1, "epoch": self._epoch}) + "\n").encode()
        if self._sent and self._bytes + len(line) > self.cap:
            return None
        return line

    @property
    def first_unwritten(self):
        """Is the line next_line() gave the one asked for now (nothing written before it)?  A failed write of that
        one means the worker has ended; of one behind it, that the worker ended in a request already queued."""
        return not self._sent

    def sent(self, line):
        """next_line()'s line was written."""
        self._sequence += 1
        self._sent.append(_Sent(self._sequence, self._wanted[len(self._sent)], len(line)))
        self._bytes += len(line)

    def take(self):
        """The number of the request whose answer is awaited now (the first written and unanswered)."""
        sent = self._sent.popleft()
        self._bytes -= sent.size
        return sent.number

    def judge(self, reply_id, number):
        """What an answer numbered `reply_id` is, awaiting `number`: "late" (to a request given up on: skip it),
        "ours", or "wrong"."""
        if type(reply_id) is int and reply_id < number:
            return "late"
        return "ours" if reply_id == number else "wrong"

    def answered(self, interrupted_by_grader):
        """The awaited answer came; the grader had interrupted its request or not."""
        self._interrupted_last = interrupted_by_grader
        self._unsettled = False  # it answers in order: what was cancelled before this is over

    def interrupted(self):
        """The answer came back interrupted: the worker dropped what was queued behind it (worker._Channel)."""
        self._forget()
        self._epoch += 1

    def rerun(self, stopped, interrupted):
        """Must the request just answered run again, alone?  When the interrupt the grader sent its predecessor may
        have landed in it (the worker had already begun it), and it was not stopped by the grader itself."""
        return self._leaked and not stopped and interrupted

    def _cancel(self):
        line = None
        if self._sent:
            line = (json.dumps({"op": "cancel", "epoch": self._epoch}) + "\n").encode()
            self._forget()
            self._epoch += 1
            self._unsettled = True
        return line

    def _forget(self):
        self._sent.clear()
        self._bytes = 0
