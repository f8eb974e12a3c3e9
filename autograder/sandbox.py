"""The grader's side of one sandboxed worker process.

A worker runs as `python -I` from a private temporary folder that holds only
worker.py and runtime.py, with a scrubbed environment, no stdin, its output
thrown away, a memory limit, and its own process group so that everything it
started can be killed at once.  Requests and replies go over two pipes.
"""

import json
import os
import resource
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

_HERE = Path(__file__).parent
_INTERRUPT_GRACE = 1.0  # seconds a worker gets to answer after an interrupt


class WorkerTimeout(Exception):
    """The worker did not answer in time and did not yield to an interrupt."""


class WorkerDied(Exception):
    """The worker process ended (crash, os._exit, memory limit, ...)."""


@dataclass(frozen=True)
class Limits:
    memory_mb: int = 2048
    max_reply_bytes: int = 64 * 1024 * 1024


class Worker:
    def __init__(self, limits=Limits()):
        self.limits = limits
        self.folder = Path(tempfile.mkdtemp(prefix="autograder-worker-"))
        for name in ("worker.py", "runtime.py"):
            shutil.copy(_HERE / name, self.folder / name)
        home = self.folder / "home"
        home.mkdir()
        request_read, self._requests = os.pipe()
        self._replies, reply_write = os.pipe()
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "IPYTHONDIR": str(home / ".ipython"),
            "MPLBACKEND": "Agg",
            "PYTHONHASHSEED": "0",
            "LANG": "C.UTF-8",
        }
        self.process = subprocess.Popen(
            [sys.executable, "-I", "-B", str(self.folder / "worker.py"), str(request_read), str(reply_write)],
            pass_fds=(request_read, reply_write), stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=home, env=env,
            start_new_session=True, preexec_fn=self._limit_resources,
        )
        os.close(request_read)
        os.close(reply_write)
        self._buffer = b""

    def _limit_resources(self):
        memory = self.limits.memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    def request(self, message, timeout):
        """Send one request; return its reply, interrupting the worker at `timeout`."""
        try:
            os.write(self._requests, (json.dumps(message) + "\n").encode())
        except BrokenPipeError:
            raise WorkerDied("the worker had already stopped") from None
        reply = self._read_reply(timeout)
        if reply is not None:
            return reply
        os.kill(self.process.pid, signal.SIGINT)
        reply = self._read_reply(_INTERRUPT_GRACE)
        if reply is not None:
            reply["timed_out"] = True
            return reply
        self.kill()
        raise WorkerTimeout("no answer within the time limit, even after an interrupt")

    def _read_reply(self, timeout):
        deadline = time.monotonic() + timeout
        with selectors.DefaultSelector() as selector:
            selector.register(self._replies, selectors.EVENT_READ)
            while b"\n" not in self._buffer:
                left = deadline - time.monotonic()
                if left <= 0 or not selector.select(left):
                    return None
                chunk = os.read(self._replies, 1 << 20)
                if not chunk:
                    self.kill()
                    raise WorkerDied(self._death_reason())
                self._buffer += chunk
                if len(self._buffer) > self.limits.max_reply_bytes:
                    self.kill()
                    raise WorkerDied("the worker sent a reply larger than the limit")
        line, self._buffer = self._buffer.split(b"\n", 1)
        return json.loads(line)

    def _death_reason(self):
        code = self.process.wait()
        if code < 0:
            return f"killed by signal {signal.Signals(-code).name}"
        return f"exited with code {code}"

    def kill(self):
        """Kill the worker and everything in its process group."""
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.process.wait()

    def close(self):
        self.kill()
        for fd in (self._requests, self._replies):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
