"""The grader's end of one worker: it writes requests and reads their answers, within their limits.

What to write and when is requests.RequestQueue's; what a request may cost is
runner.py's.  A `Worker` writes the lines it is given, reads and checks each
answer (replies.py), and watches the work from outside (watch.py): limits are
CPU seconds, judged by the CPU timer of the process doing the request and,
from here, by the kernel's count of the CPU time of the worker and every
process it started (a Pool's too), which that timer cannot see; a wall-clock
backstop stops what uses no CPU (sleeping, blocked) without counting the time
those processes waited for a CPU, so a busy machine cannot make honest code
time out.
"""

import functools
import os
import signal
import time

from . import replies
from .requests import RequestQueue, cell_request
from .watch import (MAX_FILES, Counts, Watch, alive, child_of, cpu_tolerance, folder_usage, how_it_ended, kill,
                    pidfd, write_all)

INTERRUPT_GRACE = 0.1    # seconds a worker gets to answer after an interrupt (not counting its waits for a CPU)
RUNNER_START = 5.0       # seconds a worker gets to fork a runner, or to report its end


class WorkerTimeout(Exception):
    """The worker did not answer in time and did not yield to an interrupt."""


class WorkerDied(Exception):
    """The worker process ended (crash, os._exit, a limit, ...)."""


class CaseCrashed(Exception):
    """The case's runner died or answered badly; the worker can fork another."""


class _RunnerEnded(Exception):
    def __init__(self, status):
        super().__init__(how_it_ended(status))
        self.status = status


class Worker:
    """The grader's end of one worker: cells run in it, cases in it or in a runner it forks.

    `used`: seconds of the hand-in's budget its requests took so far, each at most its limit (wall time minus
    the time its processes waited for a CPU, or their CPU time where that is more): runner.Budget charges it.
    `runners_started`: case runners forked.
    """

    def __init__(self, sandbox, pid, slot, requests_fd, replies_fd, home=None):
        self.sandbox, self.pid, self.slot = sandbox, pid, slot
        self._requests = requests_fd
        self._lines = replies.Lines(replies_fd, sandbox.limits.max_reply_bytes)
        self._replies = replies_fd
        self._queue = RequestQueue()
        self._runner = None  # pid of the live case runner, as seen from here (checked to be our child)
        self._runner_fd = None  # a pidfd for it: liveness and signals without a pid race
        self._before_runner = {}  # the worker's processes when the runner started ({pid: start}): not the case's
        self.runners_started = 0
        self.exit_status = None
        self._closed = False
        self.used = 0.0
        self._last_cpu = None  # CPU seconds the last request used, as the kernel counted them
        self._last_busy = None  # seconds the last request was busy, not waiting for a CPU (watch.Watch.end)
        self._counts = Counts(pid)  # the kernel's counts of the worker's time, and of every process it started
        # Outside the namespaces layer (whose tmpfs has its own size), the worker's folder lies on the
        # grader's disk, where only RLIMIT_FSIZE (one file) would hold it: its whole size is watched.
        # (`home`: its folder's name; see zygote.)
        self.home = home
        self._folder = None if sandbox.isolation == "namespaces" or home is None else sandbox.folder / "home" / home

    def answers_calls_itself(self, fork_runners):
        """Will the next call run in the worker itself (no case runner)?  `fork_runners`: the runner's choice that
        every case gets a runner of its own (after a call killed a worker that ran it)."""
        return self._runner == self.pid or (self._runner is None and not fork_runners)

    def run_cell(self, code, limit, ahead=()):
        """Run one cell in the worker; its reply (checked), with "timed_out" when it was stopped.

        `ahead`: [(what runs next, as cell_request or Call.message makes it, its limit), ...], sent right behind
        this one (see call).  Raises WorkerTimeout when it would not stop, WorkerDied when it ended or misbehaved.
        """
        reply, timed_out = self._worker_request(cell_request(code), limit,
                                                "no answer within the time limit, even after an interrupt", ahead)
        reply["timed_out"] = timed_out or reply["interrupted"]
        return reply

    def put_files(self, files, limit=5.0):
        """Put {name: bytes} in the worker's folder, before its cells: the hand-in's helper modules.

        Raises WorkerDied or WorkerTimeout as run_cell does; returns the checked reply.
        """
        message = {"op": "files", "files": [[name, data.decode("latin-1")] for name, data in files.items()]}
        reply, _ = self._worker_request(message, limit, "no answer while putting the hand-in's files in place")
        return reply

    def _worker_request(self, message, limit, no_answer, ahead=()):
        """A request the worker itself answers with a cell's reply: (checked reply, whether it was stopped).
        Any failure ends the worker (WorkerDied, or WorkerTimeout with `no_answer`)."""
        try:
            reply, timed_out = self._exchange(message, limit, self.pid, "cell", ahead)
        except replies.BadReply as error:
            self.close()
            raise WorkerDied(str(error)) from None
        if reply is None:
            self.close()
            raise WorkerTimeout(no_answer)
        return reply, timed_out

    def call(self, call, limit, ahead=(), fork_runners=False):
        """Run one requests.Call in the case runner (forking one if needed), or in the worker.

        Returns the checked reply, with "timed_out", "cpu_seconds" and "busy_seconds" (watch.Watch.end).  Raises
        CaseCrashed when the call's runner died or answered badly (the worker is still fine), WorkerDied when the
        worker itself must be replaced.
        `ahead`: [(a Call that comes next, its limit), ...] in order, sent right behind this one when the worker
        answers calls itself, so each starts the moment the one before it is answered instead of a round trip
        later.  `fork_runners`: see answers_calls_itself.
        """
        if self._runner not in (None, self.pid) and not alive(self._runner, self._runner_fd):
            self._stop_runner()  # it ended after its last answer: that costs no case
        if self._runner is None:
            if fork_runners:
                self._start_runner()
            else:
                self._runner = self.pid
        runner = self._runner
        if runner != self.pid:
            ahead = ()  # a runner that crashes would leave the next call for the worker to run: one at a time
        if call.sealed and (ahead or not self._queue.idle):
            # (requests.sealed: never written beside another request; the runner never asks it.)
            raise RuntimeError("a sealed call would have shared its worker with another request")
        try:
            reply, timed_out = self._exchange(call.message, limit, runner, "call",
                                              ahead=[(following.message, t) for following, t in ahead])
        except _RunnerEnded as ended:
            raise CaseCrashed(f"the Python process running it stopped: {how_it_ended(ended.status)}") from None
        except replies.BadReply as error:
            if runner == self.pid:
                self.close()
                raise WorkerDied(f"it sent back something that is not an answer: {error}") from None
            self._stop_runner()
            raise CaseCrashed(f"the Python process running it sent back something that is not an answer: "
                              f"{error}") from None
        if reply is None:
            if runner == self.pid:
                self.close()
                raise WorkerTimeout("no answer within the time limit, even after an interrupt")
            self._stop_runner()
            return {"ok": False, "timed_out": True, "error": "", "traceback": "", "seconds": 0.0,
                    "cpu_seconds": limit}
        used = self._last_cpu
        if used is not None and used > limit + cpu_tolerance(limit):
            # It, or the processes it started, outran its limit and answered before a look caught them (or its
            # CPU timer did not stop it): judged from here.
            timed_out = True
        reply["timed_out"] = timed_out or bool(reply.get("interrupted"))
        reply["cpu_seconds"] = used
        reply["busy_seconds"] = self._last_busy
        return reply

    def _start_runner(self):
        try:
            reply, _ = self._exchange({"op": "runner"}, RUNNER_START, self.pid, "runner")
        except (replies.BadReply, _RunnerEnded) as error:
            self.close()
            raise WorkerDied(f"it did not start a case runner ({error})") from None
        if reply is not None and reply["pid"] == 0:  # it could not fork: it answers calls itself
            self._runner = self.pid
            return
        pid = reply and child_of(self.pid, reply["pid"])
        handle = pidfd(pid) if pid else None
        if not pid or (handle is not None and child_of(self.pid, reply["pid"]) != pid):
            if handle is not None:
                os.close(handle)
            self.close()
            raise WorkerDied("it did not start a case runner")
        self._runner, self._runner_fd = pid, handle
        self.runners_started += 1
        # What the worker runs besides (processes its cells started) is not the runner's to take with it.
        self._before_runner = {process: start for process, start in self._counts.members().items() if process != pid}

    def _runner_gone(self):
        """The runner has ended and the worker has killed its process group: kill what it started that left the
        group (setsid, setpgid), an orphan now the worker's, so no process of that case runs on into the next."""
        self._runner = None
        if not self._counts.stop_strays(self._before_runner):
            self.close()
            raise WorkerDied("a process its case runner started could not be killed")

    def _stop_runner(self):
        """Kill the case runner; the worker must then say it ended, or it is replaced."""
        runner, self._runner = self._runner, None
        handle, self._runner_fd = self._runner_fd, None
        if runner is None:
            return
        kill(runner, signal.SIGKILL, handle)
        if handle is not None:
            os.close(handle)
        deadline = time.monotonic() + RUNNER_START
        while True:
            try:
                line = self._lines.next(max(0.0, deadline - time.monotonic()))
                if line is None:
                    break
                message = replies.parse(line) if line.strip() else {}
                if "event" in message and replies.check("event", message)["event"] == "runner-ended":
                    self._runner_gone()
                    return
            except replies.ChannelClosed:
                break
            except replies.BadReply:
                continue  # what the runner left half-written, or a late answer: not what we wait for
        self.close()
        raise WorkerDied("it did not notice its case runner end")

    def _exchange(self, message, limit, pid, kind, ahead=()):
        """Ask for a request; return (checked reply or None if it never came, whether it was stopped).

        `pid` is the process doing the work, watched for CPU time.  `ahead`: [(a request that comes next, its
        limit), ...], written right behind this one (see call).  Raises BadReply, _RunnerEnded (its runner ended
        instead of answering) and WorkerDied (the worker ended).
        """
        # What the worker's tree holds before the request can start: read once it is written, a child the request
        # forked at once would already be there, taken for an older process (a cell's Pool), and live on when
        # the request is stopped.  (A request sent ahead may have started already: read when its turn comes.)
        before = self._counts.read(pid) if self._queue.idle else None
        asking = self._queue.ask([(message, limit)] + (list(ahead) if pid == self.pid else []))
        if asking.cancel is not None:
            try:
                self._write_line(asking.cancel)
            except OSError:
                pass  # the worker has ended: nothing it was sent runs
        while (line := self._queue.next_line()) is not None:
            try:
                self._write_line(line)
            except OSError:
                if self._queue.first_unwritten:
                    raise WorkerDied(self._death()) from None
                # The worker has ended, in a request already queued: awaiting that one says so, and says
                # which request it was (a cell that ends the process is skipped, not the one asked for now).
                break
            self._queue.sent(line)
        number = self._queue.take()
        # A cell is also held to its limit in wall time (less time waiting for a CPU), as a
        # top-level loop of forks spends it in the kernel, where the CPU timer sees little.
        # Whatever process does the request, the whole worker's processes are counted (Counts.read).
        waited = Watch(functools.partial(self._counts.read, pid), limit, stall_after=limit if kind == "cell" else None,
                       first=before, doer=pid)
        try:
            reply, stopped = self._await(number, kind, pid, waited)
        finally:
            self._last_cpu, charge, self._last_busy = waited.end()
            # A request is charged at most its limit: what it took the grader to notice and stop an
            # overrun is the grader's time, never the hand-in's budget.
            self.used += min(charge, limit)
        interrupted = reply is not None and bool(reply.get("interrupted"))
        if reply is not None and (stopped or interrupted):
            self._end_what_it_started(waited.first)
        if interrupted:
            self._queue.interrupted()
        if self._queue.rerun(stopped, interrupted):
            # The interrupt the grader sent its predecessor may have landed in this request, which the
            # worker had already begun: it runs again, on its own.
            return self._exchange(message, limit, pid, kind)
        return reply, stopped

    def _end_what_it_started(self, first):
        """A request that was stopped takes the processes it started with it (a Pool outside a `with`, a child that
        left its process group), so none runs on into the next request, counted against it.  Once stopped, the
        process that did it runs nothing else until the grader writes again (worker.py's _Channel drops what
        was sent behind it), so all that is new in the worker's tree since `first` (its Usage when the request
        started) is that request's."""
        if first is None:
            return
        if not self._counts.stop_strays({pid: start for pid, start, _ in first.waits}):
            self.close()
            raise WorkerDied("a process its stopped case started could not be killed")

    def _write_line(self, line):
        write_all(self._requests, line)

    def _await(self, number, kind, pid, waited):
        interrupted = False
        while True:
            try:
                line = self._lines.next(waited.next_check())
            except replies.ChannelClosed:
                raise WorkerDied(self._death()) from None
            if line is None:
                self._check_disk()
                if interrupted:
                    if waited.answer_overdue(INTERRUPT_GRACE):
                        return None, True
                    continue
                if waited.verdict() is not None:
                    # Over: its processes used up the limit.  The CPU timer of the one doing the request counts
                    # that process alone (a Pool's processes compute while it waits for them), fires late on a
                    # loaded machine, or was caught.  Stalled: sleeping or blocked (no CPU, so no timer fires).
                    # Either way an interrupt, as its timer would send, then a moment: the Pool's `with` ends
                    # its processes and the answer comes, with where it was.  Without one it is killed (it
                    # caught the interrupt, or is deep in C code), and that time is the grader's, not the
                    # hand-in's.
                    kill(pid, signal.SIGINT, self._runner_fd if pid == self._runner else None)
                    waited.interrupted()
                    interrupted = True
                continue
            if not line.strip():
                continue
            reply = replies.parse(line)
            if "event" in reply and kind == "call":
                event = replies.check("event", reply)
                if event["event"] == "runner-ended":
                    self._runner_gone()
                    raise _RunnerEnded(event["status"])
                raise replies.BadReply(f"it sent an unknown event {event['event'][:40]!r}")
            verdict = self._queue.judge(reply.get("id"), number)
            if verdict == "late":
                continue  # the late answer to a request already given up on
            if verdict == "wrong":
                raise replies.BadReply("it wrote something other than the answer to the grader's request")
            self._queue.answered(interrupted)
            return replies.check(kind, reply), interrupted

    def _check_disk(self):
        """Stop a worker whose folder outgrew Limits.disk_mb (or holds more files than a notebook makes, or a
        folder the grader cannot look into: what is not measured is not allowed)."""
        if self._folder is None:
            return
        size, count, hidden = folder_usage(self._folder, MAX_FILES)
        if hidden:
            self.close()
            raise WorkerDied("it made a folder in its own that the grader cannot look into, so what it holds "
                             "cannot be measured")
        if size > self.sandbox.limits.disk_mb * 1024 * 1024 or count > MAX_FILES:
            self.close()
            raise WorkerDied(f"it wrote more than {self.sandbox.limits.disk_mb} MB (or {MAX_FILES} files) into "
                             "its folder")

    def _death(self):
        self.close(want_status=True)
        return how_it_ended(self.exit_status)

    def close(self, want_status=False):
        """Kill the worker and everything it started; idempotent."""
        if self._closed:
            return
        self._closed = True
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            kill(self.pid, signal.SIGKILL)
        if self._runner not in (None, self.pid):  # in its own process group, if student code moved it
            kill(self._runner, signal.SIGKILL, self._runner_fd)
        if self._runner_fd is not None:
            os.close(self._runner_fd)
        for fd in (self._requests, self._replies):
            os.close(fd)
        self._counts.close()
        self.exit_status = self.sandbox.worker_ended(self, want_status)

    def let_go(self):
        """Close the grader's ends of its pipes without killing it: a worker asked for ahead and never used,
        whose zygote (ending, or gone) ends it."""
        if not self._closed:
            self._closed = True
            for fd in (self._requests, self._replies):
                os.close(fd)
            self._counts.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
