"""`python -m autograder ARGS`, each call its own process, started by forking one that has imported the grader.

The semester tests run the real command line some 140 times. A new interpreter spends 0.6-0.8 CPU-s importing
click, rich, nbformat, jinja2 and the grader's own modules before a verb does anything: about a third of
those tests' CPU. Here one server per test process imports them once, and forks for each call.

What a new process gives, each call still gets, because it still is one: its own exit status (what
`sys.exit` or an uncaught exception leaves, through the interpreter's own exit: atexit, threads joined,
streams flushed), its own stdout and stderr, cwd, umask and environment (the caller's at the time of the
call), `sys.argv` and `sys.path` as `python -m` sets them, and nothing a previous call changed in memory,
since each fork starts from the server's state, which no call runs in.

What the interpreter reads from the environment at its start (PYTHON*, the locale's variables) is the
server's: a call whose environment differs there runs as a new interpreter instead. Modules are imported at
the server's start too, so what one read from the environment at import time would be the server's; none of
the grader's does (every `os.environ` is read inside a function).
"""

import atexit
import io
import json
import locale
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

TESTS = Path(__file__).resolve().parent
START_LIMIT = 300
ROOT = TESTS.parent

# The server's own source, run as `python -c`: imports every verb's module, then answers one call at a time.
# The child leaves the loop and runs the grader at the top level of this script, so the interpreter's own
# exit ends it, as it ends `python -m autograder`.
_SERVER = r"""
import gc, importlib, json, os, runpy, socket, struct, sys, time
listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
listener.bind(sys.argv[1])
listener.listen(8)
parent = os.getppid()
verbs = importlib.import_module("autograder.cli.main").VERBS
for target in verbs.values():
    importlib.import_module("autograder.cli." + target.split(":")[0])
# What the server imported stays out of each call's collections: a collection would touch, so copy, every page.
gc.freeze()
listener.settimeout(1.0)
print("ready", flush=True)
while True:
    try:
        connection, _ = listener.accept()
    except socket.timeout:
        if os.getppid() != parent:        # the test process is gone: so is the reason to wait
            sys.exit(0)
        continue
    connection.settimeout(None)
    message, fds, _, _ = socket.recv_fds(connection, 1 << 16, 3)
    while len(message) < 4 or len(message) < 4 + struct.unpack("!I", message[:4])[0]:
        message += connection.recv(1 << 16)            # a stream: a long environment comes in pieces
    request = json.loads(message[4:])
    pid = os.fork()
    if pid == 0:
        break
    for fd in fds:
        os.close(fd)
    connection.sendall(struct.pack("!i", pid))
    _, status = os.waitpid(pid, 0)
    connection.sendall(struct.pack("!i", os.waitstatus_to_exitcode(status)))
    connection.close()

listener.close()
connection.close()
for target, fd in zip((0, 1, 2), fds):
    os.dup2(fd, target)
    os.close(fd)
os.chdir(request["cwd"])
os.umask(request["umask"])
os.environ.clear()
os.environ.update(request["env"])
time.tzset()                               # TZ, which a new interpreter reads at its start
sys.argv = ["-m", *request["args"]]
sys.path[0] = request["cwd"]               # what `python -m` puts first; `-c` put "" there
runpy.run_module("autograder", run_name="__main__", alter_sys=True)
"""


def _read_at_start(environ):
    """The variables a new interpreter reads as it starts, before any of the grader's code runs."""
    return {k: v for k, v in environ.items() if k.startswith(("PYTHON", "LC_")) or k == "LANG"}


class _Server:
    """One per test process (and per pytest-xdist worker), started at its first call."""

    def __init__(self):
        self.lock = threading.Lock()
        self.started_with = _read_at_start(os.environ)
        self.folder = tempfile.mkdtemp(prefix="forked-cli-")
        self.address = os.path.join(self.folder, "socket")
        self.process = subprocess.Popen([sys.executable, "-c", _SERVER, self.address], stdout=subprocess.PIPE,
                                        stdin=subprocess.DEVNULL, text=True, cwd=ROOT)
        # It imports every verb first: under load that takes seconds, never minutes.
        started, _, _ = select.select([self.process.stdout], [], [], START_LIMIT)
        ready = self.process.stdout.readline() if started else ""
        if ready != "ready\n":
            self.process.kill()
            raise RuntimeError(f"the grader's fork server did not start within {START_LIMIT} s "
                               f"(exit status {self.process.wait()})")
        atexit.register(self.stop)

    def stop(self):
        self.process.kill()
        self.process.wait()
        for name in os.listdir(self.folder):
            os.unlink(os.path.join(self.folder, name))
        os.rmdir(self.folder)

    def run(self, args, timeout):
        umask = os.umask(0o022)
        os.umask(umask)
        request = json.dumps({"args": list(args), "cwd": os.getcwd(), "umask": umask, "env": dict(os.environ)})
        with self.lock, tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
                open(os.devnull, "rb") as nothing, socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as line:
            line.connect(self.address)
            message = struct.pack("!I", len(request.encode())) + request.encode()
            sent = socket.send_fds(line, [message], [nothing.fileno(), out.fileno(), err.fileno()])
            line.sendall(message[sent:])
            line.settimeout(timeout)
            pid = struct.unpack("!i", _read(line, 4))[0]
            try:
                status = struct.unpack("!i", _read(line, 4))[0]
            except socket.timeout:
                os.kill(pid, signal.SIGKILL)      # as subprocess.run's timeout does to its child
                _read(line, 4)
                raise subprocess.TimeoutExpired(["autograder", *args], timeout) from None
            return subprocess.CompletedProcess(["autograder", *args], status, _text(out), _text(err))


def _text(file):
    """What `subprocess.run(text=True)` makes of a stream: the locale's encoding, universal newlines."""
    file.seek(0)
    with io.TextIOWrapper(file, encoding=locale.getpreferredencoding(False)) as text:
        return text.read()


def _read(line, size):
    data = b""
    while len(data) < size:
        chunk = line.recv(size - len(data))
        if not chunk:
            raise ConnectionError("the grader's fork server closed the line")
        data += chunk
    return data


_server = None
_starting = threading.Lock()


def run(*args, timeout=600):
    """`python -m autograder *args` in a forked process: a CompletedProcess with its exit status and its text."""
    global _server
    if _server is not None and _read_at_start(os.environ) != _server.started_with:
        return subprocess.run([sys.executable, "-m", "autograder", *map(str, args)], capture_output=True, text=True,
                              timeout=timeout)
    with _starting:
        if _server is None or _server.process.poll() is not None:
            _server = _Server()
    return _server.run([str(a) for a in args], timeout)
