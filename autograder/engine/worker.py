"""The sandboxed side: run a notebook's cells once, then answer calls (itself, or from a case runner).

Runs in a process forked by zygote.py and shut into its sandbox by
isolation.py.  The student's stdout and stderr go nowhere; requests and
replies use their own pipes, one JSON object per line:

    {"id", "op": "cell", "code", "limit"}    the worker runs a cell
        -> {"id", "ok", "error", "interrupted", "seconds"}
    {"id", "op": "files", "files"}           the worker puts the hand-in's other files
        -> (as for a cell)                   ([[name, latin-1 text], ...]) in its folder
    {"id", "op": "runner"}                   the worker forks a case runner from its
        -> {"id", "pid"}                     post-cells state; the runner answers
                                             (pid 0: no fork was possible, the worker answers calls)
    {"id", "op": "call", "function", "args", "kwargs", "limit"}    the runner (or,
        -> {"id", "ok", "value" | "error", "traceback",             before any runner,
            "interrupted", "seconds"}                               the worker) calls
    {"event": "runner-ended", "status"}      the worker, when its runner ends
    {"op": "cancel", "epoch"}                requests of that epoch or before, sent
                                             ahead and not started, are dropped
Requests may carry an "epoch" (see _Channel).

A hand-in's calls first run in its worker: most hand-ins never crash, and a
fork costs them time.  Once a call has killed a worker, the grader re-runs
the cells in a new one and has every later case run in a forked runner, so
each further crash or hang costs a fork, not a re-run of the notebook: the
grader kills the runner and asks the worker for another.
`limit` is CPU seconds, enforced here by a CPU timer (so a busy machine does
not make honest code time out) and from outside by the grader, which trusts
nothing said here: every reply is checked (replies.py), every value is plain
(runtime.to_plain), and the grader decides what it is worth.
"""

import collections
import ctypes
import gc
import importlib
import json
import os
import select
import signal
import sys
import time
import traceback

try:  # in the sandbox, runtime.py sits beside this file
    import runtime
except ImportError:  # imported from the package (the grader's own tests)
    from .. import runtime

PR_SET_PDEATHSIG = 1
# The signals the time limits use: the grader's interrupt and our CPU timer.
LIMIT_SIGNALS = (signal.SIGINT, signal.SIGPROF)
_FILES_NOT_STUDENTS = frozenset((os.path.abspath(__file__), os.path.abspath(runtime.__file__)))


def serve(shell, request_fd, reply_fd):
    """The worker's loop: cells, and runners on request; returns when the grader hangs up."""
    # The shell is the worker's one long-lived object (what a cell or a call runs in): the limit signals'
    # state lives on it.
    shell.limit_signals = LimitSignals()
    shell.limit_signals.take()
    # The zygote's preloaded heap (IPython, numpy, ...) stays out of the hand-in's collections: a full one
    # costs 35-72 ms of CPU, which a case of a few ms was charged when it landed inside it.
    gc.freeze()
    # As in a Jupyter kernel, modules in the notebook's own folder import (a helper handed in beside
    # it, or one a cell wrote with %%writefile); the zygote's -I left that folder off sys.path.
    if "" not in sys.path:
        sys.path.insert(0, "")
    _serve(shell, _Channel(request_fd, reply_fd), runner=False)


def _serve(shell, channel, runner):
    me = os.getpid()
    while True:
        try:
            request = channel.receive()
            if request is None:
                return
            op = request.get("op")
            if op == "runner" and not runner:
                _fork_runner(shell, channel, request["id"])
                continue
            if op == "cell" and not runner:
                reply = run_cell(shell, request)
            elif op == "files" and not runner:
                reply = put_files(request.get("files"))
            elif op == "call":  # in a runner, or in the worker itself (handle.Worker.call's fork_runners)
                reply = call(shell, request)
            else:
                reply = {"ok": False, "seconds": 0.0, "error": f"{op!r} is not a request for this process"}
            if os.getpid() != me:
                os._exit(0)  # a fork made by student code returned into our loop: only we answer
            reply["id"] = request["id"]
            if reply.get("interrupted"):
                # A limit signal hit it: whatever the grader sent behind it is not run (see _Channel).
                channel.stale(request)
            channel.send(reply)
        except KeyboardInterrupt:
            continue  # a time-limit signal that came just after its reply


def _fork_runner(shell, channel, request_id):
    """Fork a case runner from this post-cells state; wait for it to end; say how it ended."""
    shell.limit_signals.take()
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # a cell may have set SIG_IGN, which would hide its exit
    gc.freeze()  # objects made so far stay out of the runner's collections: fewer copied pages
    parent = os.getpid()
    try:
        pid = os.fork()
    except OSError:
        # No process to spare (the cells used up the hand-in's process limit, say):
        # answer the calls here; a case that crashes this process then costs a re-run.
        channel.send({"id": request_id, "pid": 0})
        _serve(shell, channel, runner=True)
        return
    if pid == 0:
        try:
            ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            if os.getppid() != parent:  # the worker died before the line above
                os._exit(1)
            # A process group of its own, which whatever it starts shares (a multiprocessing Pool's processes):
            # they end with it (below).
            os.setpgid(0, 0)
            runner = _Channel(channel.request_fd, channel.reply_fd)
            runner.send({"id": request_id, "pid": os.getpid()})
            _serve(shell, runner, runner=True)
        finally:
            os._exit(0)
    status = None
    while True:
        try:
            ended, raw = os.waitpid(-1, 0)  # orphans of the runner come to us too: reap them
        except ChildProcessError:
            break
        except KeyboardInterrupt:
            continue
        if ended == pid:
            status = os.waitstatus_to_exitcode(raw)
            break
    _end_group(pid)
    # A newline first ends whatever line the runner left half-written.
    channel.send({"event": "runner-ended", "status": status}, fresh_line=True)


def _end_group(group):
    """Kill and reap what an ended runner left in its process group (a Pool's processes, busy on a case that ran
    out of time, come to us as orphans): no process of one case runs on into the next.  What left the group
    (setsid, setpgid) the grader kills from outside, where it sees the worker's whole tree (handle.py)."""
    try:
        os.killpg(group, signal.SIGKILL)
    except OSError:
        return            # nothing is left in it
    while True:
        try:
            os.waitpid(-group, 0)
        except ChildProcessError:
            return
        except KeyboardInterrupt:
            continue


class _Channel:
    """JSON lines in from the grader and out to it, over raw file descriptors (no buffers to fork).

    The grader may send requests ahead of their turn (pipelining).  Each carries an
    epoch; those of an epoch the grader has cancelled ({"op": "cancel", "epoch"}),
    or of the epoch of a request a limit signal interrupted, are dropped unanswered:
    a late interrupt must not let later requests run before the grader has decided
    what runs next.  Everything already written is read before each request is run,
    so a cancel written behind queued requests still comes before them.
    """

    def __init__(self, request_fd, reply_fd):
        self.request_fd, self.reply_fd = request_fd, reply_fd
        self._buffer = bytearray()
        self._waiting = collections.deque()  # requests read, not yet run
        self._stale = -1  # requests of this epoch or an earlier one are dropped
        self._ended = False  # the grader hung up (what was read before still runs)

    def stale(self, request):
        """Drop, unanswered, what was sent in `request`'s epoch or before (an interrupt hit it, or a cancel)."""
        self._stale = max(self._stale, _epoch(request))

    def receive(self):
        while True:
            self._read(block=False)
            while self._waiting:
                request = self._waiting.popleft()
                if _epoch(request) > self._stale:
                    return request
            if not self._read(block=True):
                return None

    def _read(self, block):
        """Take in what the grader has written; False once it has hung up."""
        if self._ended:
            return False
        if not block and not select.select([self.request_fd], [], [], 0)[0]:
            return True
        chunk = os.read(self.request_fd, 1 << 16)
        if not chunk:
            self._ended = True
            return False
        self._buffer += chunk
        while (end := self._buffer.find(b"\n")) >= 0:
            message = json.loads(bytes(self._buffer[:end]))
            del self._buffer[:end + 1]
            if message.get("op") == "cancel":
                self.stale(message)
            else:
                self._waiting.append(message)
        return True

    def send(self, message, fresh_line=False):
        data = memoryview((("\n" if fresh_line else "") + json.dumps(message) + "\n").encode())
        while data:
            data = data[os.write(self.reply_fd, data):]


def _epoch(message):
    epoch = message.get("epoch", 0)
    return epoch if type(epoch) is int else 0


def make_shell():
    # IPython, not exec(): magics, `!` lines and display behave as in Jupyter.
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    class GradingShell(InteractiveShell):
        """IPython's shell with the two hooks it leaves to a frontend (ipykernel's shell fills them for a
        kernel, which a worker has not): plots draw to no screen, and event loops are never started.

        `%matplotlib inline`, `%matplotlib notebook`, `%matplotlib widget`, `%pylab inline` and `%gui qt`
        are in real notebooks for what a person sees; a grader sees none of it, so every one of them
        quietly becomes the inline backend (figures are made, shown to nobody) instead of costing a
        correct notebook the cells that follow them."""

        kernel = None  # notebooks look for it to tell a kernel from a terminal; there is neither

        def ask_exit(self):
            """What `exit()` and `quit()` call (a kernel's shell ends the session there, and Colab's Run all stops):
            that cell, or that case, ends with SystemExit, as for sys.exit(), and the grader goes on."""
            raise SystemExit(EXIT_CALLED)

        def enable_matplotlib(self, gui=None):
            return super().enable_matplotlib("inline")

        def enable_gui(self, gui=None):
            pass

    config = Config()
    config.HistoryManager.enabled = False
    config.InteractiveShell.colors = "nocolor"
    config.InteractiveShell.xmode = "Plain"
    shell = GradingShell.instance(config=config)
    # As in a kernel that takes no input (nbclient's default): input() fails at once and says why,
    # where a worker's closed stdin would only say "EOF when reading a line".
    shell.user_ns["input"] = shell.user_ns_hidden["input"] = _no_input
    # breakpoint() would start pdb on a stdin that is closed: a bare BdbQuit.  It waits for a person; say so.
    sys.breakpointhook = _no_breakpoint
    return shell


EXIT_CALLED = "exit() was called: in Colab it ends the notebook's Python session, and Run all stops there"


def _no_input(prompt=""):
    from IPython.core.error import StdinNotImplementedError
    raise StdinNotImplementedError("input() was called, but a notebook being graded cannot be asked "
                                   "for input: set the value in the code instead")


def _no_breakpoint(*args, **kwargs):
    from IPython.core.error import StdinNotImplementedError
    raise StdinNotImplementedError("breakpoint() was called: it waits for a person to type debugger commands, "
                                   "and nobody can when a notebook is graded: remove it")


def runtime_names():
    """What a notebook's check-helper cell defines, so a grader may skip that cell."""
    return {name: value for name, value in vars(runtime).items() if not name.startswith("_")}


class LimitSignals:
    """The signals the time limits use (the grader's interrupt, our CPU timer), and whether student code is running
    (`armed`: a limit signal interrupts it) and was interrupted (`fired`)."""

    def __init__(self):
        self.armed = False
        self.fired = False
        self._handler = self._on_limit   # (one bound method, so that it is recognised as ours)

    def take(self):
        """The limit signals interrupt student code, whatever the grader inherited or a cell set.

        A grader started by `nohup` or `cmd &` passes SIGINT on ignored; a cell may
        ignore or block it.  As the init of a PID namespace, a process receives
        from outside only the signals it has a handler for: these have one.
        """
        for signum in LIMIT_SIGNALS:
            if signal.getsignal(signum) is not self._handler:  # (a handler set behind Python's back is
                signal.signal(signum, self._handler)           # caught by the grader's own watch)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, LIMIT_SIGNALS)

    def _on_limit(self, signum, frame):
        if self.armed:  # outside student code a late signal changes nothing
            self.fired = True
            raise KeyboardInterrupt

    def arm(self, limit):
        self.take()
        self.fired = False
        self.armed = True
        if limit:
            signal.setitimer(signal.ITIMER_PROF, limit)  # CPU time of this process, not the wall clock

    def disarm(self):
        """Stop the CPU timer; True if a limit signal interrupted the student's code."""
        self.armed = False
        signal.setitimer(signal.ITIMER_PROF, 0)
        return self.fired


def put_files(files):
    """The hand-in's helper modules beside its notebook, where `import utils` finds them as it did
    for the student (the grader chose and checked the names; a base name is all that is kept)."""
    started = time.perf_counter()
    try:
        for name, text in files:
            name = os.path.basename(str(name))
            if name and not name.startswith("."):
                with open(name, "wb") as file:
                    file.write(str(text).encode("latin-1"))
        importlib.invalidate_caches()
        error = None
    except Exception as exc:  # noqa: BLE001 - a full disk, say: the cells then show what is missing
        error = f"{type(exc).__name__}: {exc}"
    return {"ok": error is None, "error": error, "interrupted": False,
            "seconds": time.perf_counter() - started}


def run_cell(shell, request):
    started = time.perf_counter()
    limits = shell.limit_signals   # taken before the cell runs: what it does to the shell cannot change it
    try:
        limits.arm(request.get("limit"))
        result = shell.run_cell(request["code"], store_history=False)
        error = result.error_before_exec or result.error_in_exec
    except BaseException as exc:  # noqa: BLE001 - an interrupt that hit IPython's own code
        error = exc
    interrupted = limits.disarm()
    return {
        "ok": error is None,
        "error": _describe(error) if error is not None else None,
        "interrupted": interrupted,
        "seconds": time.perf_counter() - started,
    }


def call(shell, request):
    started, cpu_started = time.perf_counter(), time.process_time()
    limits = shell.limit_signals   # (as in run_cell)
    function = shell.user_ns.get(request["function"])
    if function is None:
        return {"ok": False, "seconds": 0.0,
                "error": f"NameError: {request['function']} is not defined in the notebook"}
    try:
        args = [decode(a) for a in request["args"]]
        kwargs = {k: decode(v) for k, v in request["kwargs"].items()}
        limits.arm(request.get("limit"))
        value = function(*args, **kwargs)
        plain = runtime.to_plain(value)  # a generator runs here, under the same limit
    except BaseException as error:  # noqa: BLE001 - SystemExit too: the student's bug, not ours
        interrupted = limits.disarm()
        return {"ok": False, "seconds": time.perf_counter() - started, "interrupted": interrupted,
                "error": "interrupted: the time limit ran out" if interrupted else _describe(error),
                "traceback": _student_frames(error)}
    if limits.disarm():  # the student's code caught the interrupt and returned anyway
        return {"ok": False, "seconds": time.perf_counter() - started, "interrupted": True,
                "error": "interrupted: the time limit ran out", "traceback": ""}
    return {"ok": True, "value": plain, "seconds": time.perf_counter() - started,
            "cpu": time.process_time() - cpu_started}


def decode(value):
    """Inverse of calls.encode: tagged JSON back to arguments."""
    if type(value) is list:
        return [decode(v) for v in value]
    if type(value) is not dict:
        return value
    if "__tuple__" in value:
        return tuple(decode(v) for v in value["__tuple__"])
    if "__dict__" in value:
        return {_hashable(decode(k)): decode(v) for k, v in value["__dict__"]}
    if "__set__" in value:
        items = {_hashable(decode(v)) for v in value["__set__"]}
        return frozenset(items) if value["frozen"] else items
    if "__range__" in value:
        return range(*value["__range__"])
    if "__ndarray__" in value:
        import numpy

        return numpy.array(value["__ndarray__"], dtype=value["dtype"])
    raise ValueError(f"unknown argument encoding: {sorted(value)}")


def _hashable(value):
    return tuple(value) if type(value) is list else value


def _describe(error):
    try:
        text = str(error)
    except BaseException:  # noqa: BLE001 - a hostile __str__
        text = "<unprintable>"
    return f"{type(error).__name__}: {text}"[:2000]


def _student_frames(error):
    """Traceback lines from the student's code only (where it failed, or was interrupted), and, when the error
    was raised inside a library the student's code called (Python's own, numpy...), the library's first frame
    and its innermost one: the feedback names the library (feedback/explain.raised_in_library)."""
    try:
        frames = [f for f in traceback.extract_tb(error.__traceback__)
                  if os.path.abspath(f.filename) not in _FILES_NOT_STUDENTS]
        own = [i for i, f in enumerate(frames) if not _in_library(f.filename)]
        if own and isinstance(error, SystemExit):
            frames = frames[:own[-1] + 1]   # exit() and quit() pass through IPython: the student's line says all
        elif own and own[-1] < len(frames) - 1:
            # The student's last frames, the library's first (what they called) and its last (where it failed).
            last = own[-1]
            frames = frames[:last + 1][-3:] + frames[last + 1:last + 2] + frames[max(last + 2, len(frames) - 1):]
        return "".join(traceback.format_list(frames[-5:]))[:4000]
    except BaseException:  # noqa: BLE001 - a frame whose source cannot be read, say
        return ""


_LIBRARY_FOLDERS = tuple(os.path.join(folder, "") for folder in
                         {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix})


def _in_library(filename):
    """Is this file Python's own or an installed package's (not a cell, nor a module handed in)?  Code made at
    run time (`<string>`, `<frozen importlib._bootstrap>`) is the library's that made it; a cell's is
    `<ipython-input-...>`."""
    if filename.startswith("<"):
        return not filename.startswith(_CELL_FILES)
    return os.path.abspath(filename).startswith(_LIBRARY_FOLDERS)


_CELL_FILES = ("<ipython-input-", "<cell")
