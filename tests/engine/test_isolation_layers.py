"""The hostile corpus gets the same rows under every isolation layer and every way a grader is launched.

Conditions a grader meets on this kind of machine, each with the layers it can have:

* root (a server, CI): namespaces (picked by itself), users (with Landlock on
  top; and, by file permissions alone, a targeted test), landlock;
* an ordinary user (an instructor's laptop, JupyterHub): namespaces through an
  unprivileged user namespace, landlock.  Needs a user to run as: set
  AUTOGRADER_TEST_USER (`.ci/run` creates one with useradd);
* root without CAP_SYS_ADMIN, as Docker and Gradescope run containers
  (`capsh --drop=cap_sys_admin`): namespaces through a user namespace, users;
* launched with SIGINT ignored (`nohup`, `cmd &` in a script, cron).

Each run is the real command in a real process.  After it, no process of any
hand-in may be left; and a grader killed by `kill -9` on its whole process
group takes every hand-in's processes with it.
"""

import csv
import json
import os
import pwd
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from conftest import ROOT, once_per_run

pytestmark = [pytest.mark.slow]

CORPUS = ROOT / "tests" / "hostile" / "n-queens"
AUTOGRADER = [sys.executable, "-m", "autograder"]
TEST_USER = os.environ.get("AUTOGRADER_TEST_USER")

RUNS = [
    ("root", "auto", "namespaces"),
    ("root", "users", "users"),
    ("root", "landlock", "landlock"),
    ("ordinary-user", "auto", "namespaces"),
    ("ordinary-user", "landlock", "landlock"),
    ("no-cap-sys-admin", "auto", "namespaces"),
    ("no-cap-sys-admin", "users", "users"),
    ("sigint-ignored", "auto", "namespaces"),
]


def _skip_unless_possible(condition):
    if not sys.platform.startswith("linux"):
        pytest.skip("Linux only")
    if os.geteuid() != 0:
        pytest.skip("these conditions are set up from root (as CI runs)")
    if condition == "ordinary-user" and not TEST_USER:
        pytest.skip("set AUTOGRADER_TEST_USER to a user that can read this checkout and its .venv "
                    "(.ci/run creates one)")
    if condition == "no-cap-sys-admin" and not shutil.which("capsh"):
        pytest.skip("capsh is missing (apt-get install libcap2-bin)")


def _launch(condition, args, env=None, **popen):
    """Start the grader as `condition` says; returns the Popen."""
    env = {**os.environ, **(env or {})}
    command = AUTOGRADER + args
    preexec = None
    if condition == "ordinary-user":
        user = pwd.getpwnam(TEST_USER)
        command = ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--init-groups", "--"] + command
        env["HOME"] = user.pw_dir
    elif condition == "no-cap-sys-admin":
        # capsh runs its -c command with CAP_SYS_ADMIN gone from every set, as in a container.
        command = ["capsh", "--drop=cap_sys_admin", "--", "-c", 'exec "$@"', "grader"] + command
    elif condition == "sigint-ignored":
        def preexec():
            signal.signal(signal.SIGINT, signal.SIG_IGN)
    return subprocess.Popen(command, env=env, cwd=ROOT, preexec_fn=preexec, **popen)


@pytest.fixture
def tmp_path(tmp_path_factory):
    """A folder the ordinary user can reach too (pytest's own base folder is root's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="autograder-layers-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _owned_folder(tmp_path, condition, name):
    folder = tmp_path / name
    folder.mkdir()
    if condition == "ordinary-user":
        user = pwd.getpwnam(TEST_USER)
        os.chown(folder, user.pw_uid, user.pw_gid)
    return folder


def _hand_over(folder, condition):
    """The hand-ins in `folder` belong to whoever grades them in `condition`, as an instructor's own downloads do."""
    if condition == "ordinary-user":
        user = pwd.getpwnam(TEST_USER)
        for path in folder.iterdir():
            os.chown(path, user.pw_uid, user.pw_gid)


def _course_copy(folder):
    """A private copy of the course in `folder` that every condition's user can read.

    The users layer makes a course's hidden parts private for good (README, Security): grading the
    checkout itself would take them from the ordinary user of a test running at the same time.
    """
    copy = folder / "course"
    copy.mkdir()
    shutil.copy(ROOT / "course.toml", copy / "course.toml")
    for name in ("solutions", "assignments", "autograder/assignments"):
        shutil.copytree(ROOT / name, copy / name)
    for path in [copy, *copy.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return copy


@pytest.fixture
def course(tmp_path):
    return _course_copy(tmp_path)


def sandbox_processes(marker):
    """Live processes started by a sandbox whose folder path contains `marker`."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/environ", "rb") as handle:
                environ = handle.read()
            with open(f"/proc/{pid}/stat") as handle:
                state = handle.read().rsplit(") ", 1)[1][0]
        except OSError:
            continue
        if f"AUTOGRADER_SANDBOX=".encode() in environ and marker.encode() in environ and state != "Z":
            found.append(int(pid))
    return found


def sandbox_processes_after_the_grader(marker, seconds=15):
    """What is still alive `seconds` after the grader ended (at once, when nothing is): the kernel takes a moment,
    longer under load, to end a namespace's processes after its first one, so a fixed wait failed on load alone.
    A process that outlived its grading (an escaped looper, a sleeper) is still there then."""
    deadline = time.monotonic() + seconds
    while sandbox_processes(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    return sandbox_processes(marker)


def _rows(path):
    with open(path, newline="", encoding="utf-8") as handle:
        return {row["student"]: row for row in csv.DictReader(handle)}


@pytest.mark.conditions
@pytest.mark.parametrize("condition, layer, expect_layer", RUNS, ids=[f"{c}-{l}" for c, l, _ in RUNS])
def test_hostile_corpus_under_every_layer(tmp_path, course, condition, layer, expect_layer):
    _skip_unless_possible(condition)
    handins = _owned_folder(tmp_path, condition, "handins")
    for notebook in [*CORPUS.glob("*.ipynb"), *CORPUS.glob("*.py")]:
        shutil.copy(notebook, handins / notebook.name)
    _hand_over(handins, condition)
    out = _owned_folder(tmp_path, condition, "out")
    grader = _launch(condition, ["--course", str(course), "grade", "--assignment", "n-queens", "--out", str(out / "g"),
                                 "--limit-floor", "0.1", "--limit-factor", "10", "--submission-timeout", "20",
                                 "--isolation", layer, str(handins)],
                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    output, _ = grader.communicate(timeout=600)
    if "cannot read Python's own files" in output:
        pytest.skip("Python is installed where other users cannot read it (.ci/run makes it readable)")
    assert grader.returncode == 0, output
    assert f"isolation: {expect_layer}" in output, output
    rows = _rows(out / "g" / "grades.csv")
    assert {row["isolation"] for row in rows.values()} == {expect_layer}   # each row says how it was graded
    expected = _rows(CORPUS / "expected.csv")
    assert sorted(rows) == sorted(expected)
    wrong = {student: (rows[student]["score"], rows[student]["status"]) for student, want in expected.items()
             if (float(rows[student]["score"]), rows[student]["status"]) != (float(want["score"]), want["status"])}
    assert wrong == {}, output
    assert sandbox_processes_after_the_grader(str(out)) == [], "a hand-in's process outlived its grading"


@pytest.mark.conditions
def test_users_layer_without_landlock_hides_what_the_grader_keeps(tmp_path, course):
    """File permissions alone (a kernel without Landlock): a hand-in that knows every path finds none readable.

    (A whole-disk search could still find other, world-readable copies of a
    course elsewhere on the machine, and the network stays open: the README's
    table says so.  What this grader keeps is what it can and must hide.)
    """
    _skip_unless_possible("root")
    out = tmp_path / "out"
    handins = tmp_path / "handins"
    handins.mkdir()
    shutil.copy(ROOT / "examples" / "n-queens" / "submissions" / "alice.ipynb", handins / "alice.ipynb")
    secrets = [course / "autograder" / "assignments" / "n-queens" / "expected.json",
               course / "autograder" / "assignments" / "n-queens" / "cases.toml",
               course / "solutions" / "n-queens" / "n-queens.ipynb",
               out / "gradebook.db", handins / "alice.ipynb"]
    probe = ("import os\nLEAKS = []\n"
             f"for path in {[str(p) for p in secrets]!r} + [os.path.join({str(out)!r}, n) for n in "
             f"('grades.csv', 'handins')]:\n"
             "    try:\n        open(path, 'rb').read(1)\n        LEAKS.append(path)\n"
             "    except OSError:\n        pass\n"
             "assert os.getuid() != 0\n"
             "def get_n(pos):\n    if LEAKS:\n        raise RuntimeError('read: ' + ', '.join(LEAKS))\n"
             "    return len(pos)\n")
    notebook = {"cells": [{"cell_type": "code", "execution_count": None, "id": "probe", "metadata": {},
                           "outputs": [], "source": probe}],
                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (handins / "prober.ipynb").write_text(json.dumps(notebook))
    # A first run makes the gradebook exist, so the second one's probe has it to look for.
    for _ in range(2):
        result = subprocess.run(AUTOGRADER + ["--course", str(course), "grade", "--assignment", "n-queens", "--out",
                                              str(out), "--isolation", "users", "--regrade", str(handins)],
                                cwd=ROOT, capture_output=True, text=True, timeout=300,
                                env={**os.environ, "AUTOGRADER_LANDLOCK": "0"})
        assert result.returncode == 0, result.stderr
    assert "isolation: users" in result.stderr
    with sqlite3.connect(out / "gradebook.db") as db:
        messages = db.execute("SELECT c.status, c.message FROM case_results c JOIN submissions s "
                              "ON s.id = c.submission_id WHERE s.student = 'prober' AND s.counted = 1 "
                              "AND c.function = 'get_n'").fetchall()
    assert messages and all(status == "passed" for status, _ in messages), messages
    assert _rows(out / "grades.csv")["alice"]["score"] == "5"


def test_the_proc_walker_really_steals_without_isolation(tmp_path):
    """The corpus's /proc walker is a real attack: with no layer at all it finds the answers."""
    handins = tmp_path / "in"
    handins.mkdir()
    shutil.copy(CORPUS / "walks-proc-to-the-answers.ipynb", handins)
    result = subprocess.run(AUTOGRADER + ["--course", str(ROOT), "grade", "--assignment", "n-queens", "--out",
                                          str(tmp_path / "out"), "--isolation", "none", str(handins)],
                            cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    row = _rows(tmp_path / "out" / "grades.csv")["walks-proc-to-the-answers"]
    assert float(row["score"]) > 0
    assert row["isolation"] == "none"   # and the row says it was graded unprotected


LOOPER = """{"cells": [{"cell_type": "code", "execution_count": null, "id": "a", "metadata": {}, "outputs": [],
  "source": "import os, signal, time\\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\\nif os.fork() == 0:\\n    os.setsid()\\n    while True:\\n        pass\\nwhile True:\\n    pass"}],
  "metadata": {}, "nbformat": 4, "nbformat_minor": 5}"""


@pytest.mark.parametrize("condition, layer", [("root", "auto"), ("root", "users"), ("root", "landlock"),
                                              ("ordinary-user", "auto"), ("ordinary-user", "landlock"),
                                              ("no-cap-sys-admin", "auto"), ("sigint-ignored", "auto")])
@pytest.mark.conditions
def test_kill_9_of_the_grader_takes_every_hand_in_with_it(tmp_path, course, condition, layer):
    _skip_unless_possible(condition)
    handins = _owned_folder(tmp_path, condition, "handins")
    for name in ("ann", "ben", "cat", "dan"):
        (handins / f"{name}.ipynb").write_text(LOOPER)
    _hand_over(handins, condition)
    out = _owned_folder(tmp_path, condition, "out")
    grader = _launch(condition, ["--course", str(course), "grade", "--assignment", "n-queens", "--out", str(out / "g"),
                                 "--jobs", "2", "--isolation", layer, str(handins)],
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 60
    while len(sandbox_processes(str(out))) < 4 and time.monotonic() < deadline:
        time.sleep(0.2)   # two hand-ins looping, each with an escaped child
    assert len(sandbox_processes(str(out))) >= 4, "the looping hand-ins never started"
    os.killpg(grader.pid, signal.SIGKILL)
    grader.wait()
    deadline = time.monotonic() + 60    # (past the slot zygotes' own shutdown bound, 11 s, with loopers beside)
    while sandbox_processes(str(out)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert sandbox_processes(str(out)) == [], "hand-in processes outlived the grader's kill -9"


# What a worker can do to the machine, found by a hand-in and reported through what `get_n` returns:
# its cases pass only when it found nothing.  Every layer, every condition: never uid 0 outside its
# user namespace (the trust issue: as root without CAP_SYS_ADMIN it was), no /proc/sys file it may
# write, no /etc/shadow, and no more processes than Limits.processes.
BREACH_PROBE = r'''
import os, signal, time
HARMLESS = {"/proc/sys/kernel/ns_last_pid"}   # mode 0666: the next pid of the worker's own PID namespace,
                                              # written only with CAP_SYS_ADMIN over it, which it dropped
def _breaches():
    found = []
    me = os.getuid()
    try:
        mapping = [tuple(map(int, line.split())) for line in open("/proc/self/uid_map")]
    except OSError:                            # Landlock hides /proc: no user namespace either
        mapping = [(0, 0, 2 ** 32 - 1)]
    for inner, outer, count in mapping:
        if inner <= me < inner + count and outer + (me - inner) == 0:
            found.append("uid 0 outside its user namespace")
    for folder, _, names in os.walk("/proc/sys"):
        for name in names:
            path = os.path.join(folder, name)
            try:
                os.close(os.open(path, os.O_WRONLY))   # opened, never written
            except OSError:
                continue
            if path not in HARMLESS:
                found.append("writable: " + path)
    try:
        open("/etc/shadow").read(1)
        found.append("/etc/shadow is readable")
    except OSError:
        pass
    children = []
    for _ in range(300):
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            time.sleep(60)
            os._exit(0)
        children.append(pid)
    for pid in children:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    if len(children) > 64:
        found.append(f"forked {len(children)} processes")
    return found
BREACHES = _breaches()
def get_n(pos):
    if BREACHES:
        raise PermissionError("; ".join(BREACHES)[:1000])
    return len(pos)
'''


NETWORK_PROBE = r'''
import os, socket
GOT_OUT = []
def _try(what, action):
    try:
        action()
        GOT_OUT.append(what)
    except OSError:
        pass
def _udp(host):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.sendto(b"x", (host, 53))
def _unix(address):
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(1)
        s.connect(address)
_try("UDP to 127.0.0.1", lambda: _udp("127.0.0.1"))
_try("UDP to 8.8.8.8", lambda: _udp("8.8.8.8"))
_try("DNS", lambda: socket.getaddrinfo("example.com", 80))
_try("TCP to 127.0.0.1", lambda: socket.create_connection(("127.0.0.1", PORT), timeout=1).close())
_try("a Unix socket", lambda: _unix(UNIX_PATH))
_try("an abstract Unix socket", lambda: _unix("\0" + ABSTRACT))
def get_n(pos):
    if GOT_OUT:
        raise PermissionError("got out: " + ", ".join(GOT_OUT))
    return len(pos)
'''


def _probe_notebook(source):
    return json.dumps({"cells": [{"cell_type": "code", "execution_count": None, "id": "probe", "metadata": {},
                                  "outputs": [], "source": source}],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def _get_n_results(out, student):
    with sqlite3.connect(out / "gradebook.db") as db:
        return db.execute("SELECT c.status, c.message FROM case_results c JOIN submissions s ON s.id = c.submission_id "
                          "WHERE s.student = ? AND c.function = 'get_n' AND s.counted = 1", (student,)).fetchall()


def _probes_graded(shared_folder, condition, layer):
    """The breach probe, the network probe and alice's honest notebook, graded in one run of `condition` and
    `layer`, shared by the tests that read it (one grader start per condition, not one per probe):
    {returncode, output, <probe>: [[status, message], ...] of its get_n cases, alice: her score}."""
    import socket as sockets

    def run():
        folder = Path(tempfile.mkdtemp(prefix="autograder-layers-"))
        folder.chmod(0o755)
        listeners = []
        try:
            course = _course_copy(folder)
            for family, address in ((sockets.AF_UNIX, str(folder / "listening.sock")),
                                    (sockets.AF_UNIX, "\0ag-test-" + folder.name),
                                    (sockets.AF_INET, ("127.0.0.1", 0))):
                listener = sockets.socket(family, sockets.SOCK_STREAM)
                listener.bind(address)
                listener.listen(8)
                listeners.append(listener)
            os.chmod(folder / "listening.sock", 0o777)
            handins = _owned_folder(folder, condition, "handins")
            (handins / "prober.ipynb").write_text(_probe_notebook(BREACH_PROBE))
            network = (f"UNIX_PATH = {str(folder / 'listening.sock')!r}\nABSTRACT = {'ag-test-' + folder.name!r}\n"
                       f"PORT = {listeners[2].getsockname()[1]}\n" + NETWORK_PROBE)
            (handins / "netprobe.ipynb").write_text(_probe_notebook(network))
            shutil.copy(ROOT / "examples" / "n-queens" / "submissions" / "alice.ipynb", handins / "alice.ipynb")
            _hand_over(handins, condition)
            out = _owned_folder(folder, condition, "out")
            grader = _launch(condition, ["--course", str(course), "grade", "--assignment", "n-queens", "--out",
                                         str(out / "g"), "--isolation", layer, str(handins)],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            output, _ = grader.communicate(timeout=600)
            record = {"returncode": grader.returncode, "output": output}
            if grader.returncode == 0:
                record.update({probe: _get_n_results(out / "g", probe) for probe in ("prober", "netprobe")})
                record["alice"] = _rows(out / "g" / "grades.csv")["alice"]["score"]
            return record
        finally:
            for listener in listeners:
                listener.close()
            shutil.rmtree(folder, ignore_errors=True)
    return once_per_run(shared_folder, f"isolation-probes-{condition}-{layer}", run)


def _probe_verdict(record, probe, expect_layer):
    assert record["returncode"] == 0, record["output"]
    assert f"isolation: {expect_layer}" in record["output"], record["output"]
    results = record[probe]
    assert results and all(status == "passed" for status, _ in results), results
    assert record["alice"] == "5"


@pytest.mark.conditions
@pytest.mark.parametrize("condition, layer, expect_layer", RUNS, ids=[f"{c}-{l}" for c, l, _ in RUNS])
def test_no_worker_is_uid_0_outside_or_reaches_the_host(shared_folder, condition, layer, expect_layer):
    _skip_unless_possible(condition)
    _probe_verdict(_probes_graded(shared_folder, condition, layer), "prober", expect_layer)


@pytest.mark.conditions
@pytest.mark.parametrize("condition, layer, expect_layer", RUNS, ids=[f"{c}-{l}" for c, l, _ in RUNS])
def test_no_hand_in_reaches_the_network_udp_dns_or_a_unix_socket(shared_folder, condition, layer, expect_layer):
    _skip_unless_possible(condition)
    _probe_verdict(_probes_graded(shared_folder, condition, layer), "netprobe", expect_layer)


@pytest.mark.conditions
@pytest.mark.parametrize("condition, layer", [("root", "users"), ("root", "landlock"), ("ordinary-user", "landlock"),
                                              ("no-cap-sys-admin", "users")])
def test_a_hand_in_cannot_fill_the_disk_under_out(tmp_path, course, condition, layer):
    """Outside the namespaces layer the worker's folder lies under --out, on the grader's disk.

    The hider writes into a folder it made enterable but not listable (mode 0300): what the disk watch cannot
    list, it counts all the same (issue 32, item 4: 320 MB went unseen, and the folder, which the grading user
    could not remove, cost the honest hand-ins after it their points).  zz-alice and zzz-alice come next in the
    same slot, the second in the hider's folder as the slot's two folders were used in turn; each hand-in's folder
    is removed once it is over, so what two of them write never adds up."""
    import threading

    _skip_unless_possible(condition)
    handins = _owned_folder(tmp_path, condition, "handins")
    # Each writes a file, then waits half a second: longer than the grader's look at the folder takes to come
    # round (POLL, 0.25 s) on a loaded machine too.  Without the wait, writes of zeros at memory speed raced the
    # looks: beside other tests a grader, waiting for a CPU, looked late and --out reached 306 MB.
    filler = ("import time\nfor i in range(40):\n    with open(f'big{i}.bin', 'wb') as f:\n"
              "        f.write(bytes(60 << 20))\n    time.sleep(0.5)\n"
              "def get_n(pos):\n    return len(pos)\n")
    hider = ("import os, time\nos.mkdir('hidden', 0o300)\nfor i in range(6):\n"
             "    with open(f'hidden/big{i}.bin', 'wb') as f:\n        f.write(bytes(60 << 20))\n"
             "    time.sleep(0.5)\n"
             "def get_n(pos):\n    return len(pos)\n")
    (handins / "filler.ipynb").write_text(_probe_notebook(filler))
    (handins / "hider.ipynb").write_text(_probe_notebook(hider))
    shutil.copy(ROOT / "examples" / "n-queens" / "submissions" / "alice.ipynb", handins / "alice.ipynb")
    for name in ("zz-alice", "zzz-alice"):
        shutil.copy(ROOT / "examples" / "n-queens" / "submissions" / "alice.ipynb", handins / f"{name}.ipynb")
    out = _owned_folder(tmp_path, condition, "out")
    peak, done = [0], threading.Event()

    def watch():
        while not done.is_set():
            used = subprocess.run(["du", "-sm", str(out)], capture_output=True, text=True).stdout.split()
            peak[0] = max(peak[0], int(used[0]) if used else 0)
            time.sleep(0.05)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        grader = _launch(condition, ["--course", str(course), "grade", "--assignment", "n-queens", "--out",
                                     str(out / "g"), "--isolation", layer, "--jobs", "1", str(handins)],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        output, _ = grader.communicate(timeout=600)
    finally:
        done.set()
        watcher.join()
    assert grader.returncode == 0, output
    rows = _rows(out / "g" / "grades.csv")
    assert {rows[name]["score"] for name in ("alice", "zz-alice", "zzz-alice")} == {"5"} and "filler" in rows
    assert peak[0] < 300, f"--out grew to {peak[0]} MB"


LEAVER = r'''
import ctypes, os
for folder in ("/tmp", "/var/tmp", "/dev/shm"):
    try:
        with open(os.path.join(folder, "left-by-a-" + TOKEN), "w") as handle:
            handle.write("secret")
        os.chmod(os.path.join(folder, "left-by-a-" + TOKEN), 0o644)
    except OSError:
        pass
libc = ctypes.CDLL(None)
segment = libc.shmget(KEY, 4096, 0o1644)        # IPC_CREAT | 0644
def get_n(pos):
    return len(pos)
'''
FINDER = r'''
import ctypes, os
FOUND = [os.path.join(folder, "left-by-a-" + TOKEN) for folder in ("/tmp", "/var/tmp", "/dev/shm")
         if os.path.exists(os.path.join(folder, "left-by-a-" + TOKEN))]
if ctypes.CDLL(None).shmget(KEY, 0, 0) >= 0:
    FOUND.append("a System V shared memory segment")
def get_n(pos):
    if FOUND:
        raise PermissionError("found what the hand-in before left: " + ", ".join(FOUND))
    return len(pos)
'''


@pytest.mark.conditions
def test_without_landlock_one_hand_in_leaves_nothing_for_the_next_of_its_slot(tmp_path, course):
    _skip_unless_possible("root")
    handins = tmp_path / "handins"
    handins.mkdir()
    token = tmp_path.name
    key = int.from_bytes(os.urandom(3), "big") + 1          # a System V key of this run's own
    (handins / "a-leaver.ipynb").write_text(_probe_notebook(f"TOKEN = {token!r}\nKEY = {key}\n" + LEAVER))
    (handins / "b-finder.ipynb").write_text(_probe_notebook(f"TOKEN = {token!r}\nKEY = {key}\n" + FINDER))
    result = subprocess.run(AUTOGRADER + ["--course", str(course), "grade", "--assignment", "n-queens", "--out",
                                          str(tmp_path / "out"), "--isolation", "users", "--jobs", "1",
                                          str(handins)],
                            cwd=ROOT, capture_output=True, text=True, timeout=300,
                            env={**os.environ, "AUTOGRADER_LANDLOCK": "0"})
    assert result.returncode == 0, result.stderr
    assert "isolation: users" in result.stderr and "no Landlock" in result.stderr
    results = _get_n_results(tmp_path / "out", "b-finder")
    assert results and all(status == "passed" for status, _ in results), results
    assert not list(Path("/tmp").glob(f"left-by-a-{token}")) and not list(Path("/dev/shm").glob(f"left-by-a-{token}"))


@pytest.mark.alone          # it grades the checkout itself, whose folders the users layer makes private
def test_without_landlock_the_course_folder_is_unreadable_even_with_its_venv_inside(tmp_path):
    """The users layer hides the whole course folder, .git included, but for the way to Python's venv."""
    _skip_unless_possible("root")
    if not Path(sys.prefix).resolve().is_relative_to(ROOT):
        pytest.skip("the test venv is not inside the checkout here")
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from grade_throughput import course_modes_kept

    from autograder.core.course import load_course

    targets = [ROOT / ".git", ROOT / "README.md", ROOT / "course.toml", ROOT / "solutions",
               ROOT / "autograder" / "assignments" / "n-queens" / "expected.json"]
    if (ROOT / ".git").is_dir():
        targets.append(ROOT / ".git" / "HEAD")
    reader = ("import os\nREAD = []\nfor path in " + repr([str(p) for p in targets]) + ":\n"
              "    try:\n        (os.listdir(path) if os.path.isdir(path) else open(path, 'rb').read(1))\n"
              "        READ.append(path)\n    except OSError:\n        pass\n"
              "def get_n(pos):\n    if READ:\n        raise PermissionError('read: ' + ', '.join(READ))\n"
              "    return len(pos)\n")
    handins = tmp_path / "handins"
    handins.mkdir()
    (handins / "reader.ipynb").write_text(_probe_notebook(reader))
    with course_modes_kept(load_course(ROOT)):
        result = subprocess.run(AUTOGRADER + ["--course", str(ROOT), "grade", "--assignment", "n-queens", "--out",
                                              str(tmp_path / "out"), "--isolation", "users", str(handins)],
                                cwd=ROOT, capture_output=True, text=True, timeout=300,
                                env={**os.environ, "AUTOGRADER_LANDLOCK": "0"})
    assert result.returncode == 0, result.stderr
    results = _get_n_results(tmp_path / "out", "reader")
    assert results and all(status == "passed" for status, _ in results), results


LOOPERS = {
    "plain": "def board2str(pos):\n    while True:\n        pass\n",
    "catcher": ("def board2str(pos):\n    while True:\n        try:\n            x = 0\n            while True:\n"
                "                x += 1\n        except BaseException:\n            continue\n"),
    "recurser": "import sys\nsys.setrecursionlimit(10**9)\ndef board2str(pos):\n    return board2str(pos) + 1\n",
    "alarmist": ("import signal\nsignal.signal(signal.SIGALRM, lambda *a: None)\n"
                 "signal.signal(signal.SIGTERM, lambda *a: None)\n"
                 "def board2str(pos):\n    while True:\n        pass\n"),
}


@pytest.mark.conditions
@pytest.mark.parametrize("condition, layer, expect_layer", RUNS, ids=[f"{c}-{l}" for c, l, _ in RUNS])
def test_a_looper_that_ignores_interrupts_costs_what_a_plain_one_does(tmp_path, course, condition, layer,
                                                                       expect_layer):
    """Each is alice's notebook with `board2str` looping one way; each must score what the plain
    `while True: pass` scores, every case run (killing one is the grader's time).  The limits are
    tighter than the defaults (a 0.1 s floor, 5x the reference): the less time a limit leaves, the more
    a slow kill would show, and the class costs a quarter of what it does with the defaults.  board2str:
    four cases call it, each with the floor's limit (is_solved, which count_solutions calls too, made 17
    loop, one of them for 0.6 s: three times the CPU, in every condition, for the same proof)."""
    _skip_unless_possible(condition)
    handins = _owned_folder(tmp_path, condition, "handins")
    alice = json.loads((ROOT / "examples" / "n-queens" / "submissions" / "alice.ipynb").read_text())
    for name, code in LOOPERS.items():
        notebook = json.loads(json.dumps(alice))
        notebook["cells"].append({"cell_type": "code", "execution_count": None, "id": "loop", "metadata": {},
                                  "outputs": [], "source": code})
        (handins / f"{name}.ipynb").write_text(json.dumps(notebook))
    _hand_over(handins, condition)
    out = _owned_folder(tmp_path, condition, "out")
    grader = _launch(condition, ["--course", str(course), "grade", "--assignment", "n-queens", "--out", str(out / "g"),
                                 "--isolation", layer, "--limit-floor", "0.1", "--limit-factor", "5", str(handins)],
                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    output, _ = grader.communicate(timeout=600)
    assert grader.returncode == 0, output
    rows = _rows(out / "g" / "grades.csv")
    assert {name: rows[name]["score"] for name in LOOPERS} == {name: rows["plain"]["score"] for name in LOOPERS}
    with sqlite3.connect(out / "g" / "gradebook.db") as db:
        not_run = db.execute("SELECT COUNT(*) FROM case_results WHERE message LIKE 'not run%'").fetchone()[0]
    assert not_run == 0


@pytest.mark.conditions
@pytest.mark.parametrize("condition, layer", [("no-cap-sys-admin", "namespaces"), ("root", "users"),
                                              ("root", "landlock")])
def test_an_out_no_other_user_can_reach_is_named_where_workers_have_user_ids_of_their_own(tmp_path, course, condition,
                                                                                          layer):
    """As Docker runs the grader, or root in the users and landlock layers: its workers are their own user ids, so an
    --out under a `mktemp -d` (mode 700) cannot hold their sandbox; the message names the folder and the fix, not
    the kernel.  (In the users and landlock layers a worker there could write nothing in its own folder: Landlock's
    rule for it is made from its path.)"""
    _skip_unless_possible(condition)
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    grader = _launch(condition, ["--course", str(course), "grade", "--assignment", "n-queens", "--out",
                                 str(private / "out"), "--isolation", layer,
                                 str(ROOT / "examples" / "n-queens" / "submissions" / "alice.ipynb")],
                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    output, _ = grader.communicate(timeout=300)
    assert grader.returncode == 1, output
    assert f"{private} (mode 0o700) is its owner's alone" in output and "chmod o+x" in output, output
    assert "kernel refused" not in output and "Traceback" not in output


@pytest.mark.conditions
@pytest.mark.parametrize("condition, layer, expect_layer", RUNS, ids=[f"{c}-{l}" for c, l, _ in RUNS])
def test_a_pool_scipy_and_numba_score_5_in_every_layer(tmp_path, course, condition, layer, expect_layer):
    """Issue 41: what Colab runs, saved as Colab saves it, scores 5/5 wherever it is graded: a multiprocessing
    Pool in count_solutions (4.25 before: its semaphores found no /dev/shm), scipy.special.comb in
    uninformed-search (4.7: no scipy) and an @njit counter in bitwise-queens (3.1: no numba).  No process of the
    pool outlives its hand-in."""
    from colab_handins import COLAB_ONLY, write_colab_only

    _skip_unless_possible(condition)
    for assignment in COLAB_ONLY:
        handins = _owned_folder(tmp_path, condition, f"handins-{assignment}")
        write_colab_only(assignment, handins)
        _hand_over(handins, condition)
        out = _owned_folder(tmp_path, condition, f"out-{assignment}")
        grader = _launch(condition, ["--course", str(course), "grade", "--assignment", assignment, "--out",
                                     str(out / "g"), "--isolation", layer, str(handins)],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        output, _ = grader.communicate(timeout=600)
        if "cannot read Python's own files" in output:
            pytest.skip("Python is installed where other users cannot read it (.ci/run makes it readable)")
        assert grader.returncode == 0, output
        assert f"isolation: {expect_layer}" in output, output
        row = _rows(out / "g" / "grades.csv")["colab-only"]
        with sqlite3.connect(out / "g" / "gradebook.db") as db:
            failed = db.execute("SELECT name, status, message FROM case_results WHERE status != 'passed'").fetchall()
            cells = db.execute("SELECT error FROM cell_errors").fetchall()
        assert (row["score"], row["status"]) == ("5", "graded"), (assignment, failed, cells)
        assert sandbox_processes_after_the_grader(str(out)) == [], "a process of the pool outlived its grading"
