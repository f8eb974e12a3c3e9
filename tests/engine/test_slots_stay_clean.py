"""A slot is clean for the next hand-in whatever the last one did, and the grading user's files stay as they are.

The third red team (issue 32, items 2-5), as a determined student would do it, one hand-in graded before
its classmates in the same slot (`--jobs 1`), under every condition of tests/test_isolation_layers.py:

* it changes the grading user's files: a canary's mode, times and extended attributes, the gradebook's mode
  (Landlock does not mediate chmod, chown, utime or setxattr);
* it wrecks the slot for those after it: every folder of the sandbox it can name made mode 000 (the spare's
  among them), and its own folder made unremovable (a 0500 folder holding a file);
* it leaves what the next hand-in could find: a file it names in its own folder (found by `stat` alone),
  System V shared memory, a message queue and a semaphore set, a POSIX message queue, a key in the user's
  keyring, files in /tmp, /var/tmp and /dev/shm.

The classmates after it are honest and must keep 5 points: one whose code lives in a helper module handed in
beside the notebook (put in its folder by the grader), and others that write a file in their folder and read
it back, and lose points for anything of the wrecker they find.  No row is a `grader-error`, and nothing
of the wrecker is left on the machine after the run, for the next run under another user id or layer.
"""

import json
import os
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, solution_in_a_module
from test_isolation_layers import (RUNS, _hand_over, _launch, _owned_folder, _rows, _skip_unless_possible,
                                   course, sandbox_processes, tmp_path)  # noqa: F401 - fixtures

pytestmark = [pytest.mark.slow]

sys.path.insert(0, str(ROOT / "tests"))

ALICE = ROOT / "examples" / "n-queens" / "submissions" / "alice.ipynb"

# Every folder name of the sandbox a hand-in could guess from its own (it cannot list the folder above).
NEIGHBOURS = r'''
import os, re
def _neighbours():
    own = os.path.basename(os.getcwd())
    names = {f"slot-{s}-{k}" for s in range(4) for k in range(64)}
    found = re.match(r"(.*?)(\d+)$", own)
    if found:
        names |= {f"{found.group(1)}{k}" for k in range(max(0, int(found.group(2)) - 64), int(found.group(2)) + 64)}
    names.discard(own)
    return [os.path.join("..", name) for name in sorted(names)]
'''

WRECKER = NEIGHBOURS + r'''
import ctypes, ctypes.util
libc = ctypes.CDLL(None, use_errno=True)
# The grading user's files.
for path in (CANARY, GRADEBOOK):
    for action in (lambda: os.chmod(path, 0o666 if path == CANARY else 0o400), lambda: os.utime(path, (0, 0)),
                   lambda: os.setxattr(path, "user.wrecked", b"1"), lambda: os.chown(path, os.getuid(), -1)):
        try:
            action()
        except (OSError, AttributeError):
            pass
# The slot for those after it, once the next hand-in's worker (a spare, where the layer makes one) exists.
import time
time.sleep(0.3)
for folder in _neighbours():
    try:
        os.chmod(folder, 0)
    except OSError:
        pass
try:
    os.mkdir("locked")
    open("locked/inside", "w").close()
    os.chmod("locked", 0o500)
except OSError:
    pass
# What the next hand-in could find.
with open(f"secret-{TOKEN}.py", "w") as handle:
    handle.write("ANSWERS = 42\n")
for folder in ("/tmp", "/var/tmp", "/dev/shm"):
    try:
        with open(os.path.join(folder, f"left-by-{TOKEN}"), "w") as handle:
            handle.write("secret")
    except OSError:
        pass
libc.shmget(KEY, 4096, 0o1644)          # IPC_CREAT | 0644
libc.msgget(KEY, 0o1644)
libc.semget(KEY, 1, 0o1644)
for name in (None, ctypes.util.find_library("rt")):
    try:
        ctypes.CDLL(name).mq_open(f"/ag-{TOKEN}".encode(), os.O_CREAT | os.O_RDWR, 0o644, None)
        break
    except (OSError, AttributeError):
        pass
libc.syscall(248, b"user", f"ag-{TOKEN}".encode(), b"secret", 6, ctypes.c_int(-4))   # add_key to the user keyring
'''

FINDER = NEIGHBOURS + r'''
import ctypes, ctypes.util
libc = ctypes.CDLL(None, use_errno=True)
FOUND = [folder for folder in _neighbours() if os.path.exists(os.path.join(folder, f"secret-{TOKEN}.py"))]
FOUND += [folder for folder in ("/tmp", "/var/tmp", "/dev/shm")
          if os.path.exists(os.path.join(folder, f"left-by-{TOKEN}"))]
for kind, found in (("shared memory", libc.shmget(KEY, 0, 0)), ("a message queue", libc.msgget(KEY, 0)),
                    ("a semaphore set", libc.semget(KEY, 0, 0)),
                    ("a key", libc.syscall(249, b"user", f"ag-{TOKEN}".encode(), None, 0))):
    if found >= 0:
        FOUND.append(kind)
for name in (None, ctypes.util.find_library("rt")):
    try:
        if ctypes.CDLL(name).mq_open(f"/ag-{TOKEN}".encode(), os.O_RDONLY, 0, None) >= 0:
            FOUND.append("a POSIX message queue")
        break
    except (OSError, AttributeError):
        pass
_unchecked_get_n = get_n
def get_n(pos):
    if FOUND:
        raise LookupError("found what a hand-in before left: " + ", ".join(FOUND))
    return _unchecked_get_n(pos)
'''

# An honest notebook that writes in its folder, and copies and touches a file as Python's own library does it
# (shutil.copy sets the copy's mode, Path.touch its times: in the landlock layer as an ordinary user those calls
# do nothing, and must not fail).
WRITER = r'''
import pathlib, shutil
with open("scratch.txt", "w") as handle:
    handle.write("mine")
shutil.copy("scratch.txt", "copy.txt")
pathlib.Path("copy.txt").touch()
_unread_get_n = get_n
def get_n(pos):
    with open("copy.txt") as handle:
        assert handle.read() == "mine"
    return _unread_get_n(pos)
'''


def _alice_with(code):
    """alice's notebook (5 points) with `code` run after all her cells."""
    notebook = json.loads(ALICE.read_text())
    notebook["cells"].append({"cell_type": "code", "execution_count": None, "id": "extra", "metadata": {},
                              "outputs": [], "source": code})
    return json.dumps(notebook)


def _stub_with(code):
    return json.dumps({"cells": [{"cell_type": "code", "execution_count": None, "id": "attack", "metadata": {},
                                  "outputs": [], "source": code}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def _why(gradebook):
    """The first failing case of each hand-in and its cell errors, for an assertion's message."""
    with sqlite3.connect(gradebook) as db:
        cases = db.execute("SELECT s.student, c.status, substr(c.message, 1, 300) FROM case_results c JOIN submissions "
                           "s ON s.id = c.submission_id WHERE c.status != 'passed' GROUP BY s.student").fetchall()
        cells = db.execute("SELECT s.student, substr(e.error, 1, 300) FROM cell_errors e JOIN submissions s "
                           "ON s.id = e.submission_id").fetchall()
    return f"{cases}\n{cells}"


def _ipc_left(key):
    """System V objects with `key` anywhere on the machine."""
    found = []
    for kind in ("shm", "msg", "sem"):
        with open(f"/proc/sysvipc/{kind}") as handle:
            found += [kind for line in handle.read().splitlines()[1:] if int(line.split()[0]) == key]
    return found


@pytest.mark.conditions
@pytest.mark.parametrize("condition, layer, expect_layer", RUNS, ids=[f"{c}-{l}" for c, l, _ in RUNS])
def test_a_hand_in_can_neither_touch_the_graders_files_nor_reach_or_wreck_the_next_ones(tmp_path, course, condition,
                                                                                        layer, expect_layer):
    _skip_unless_possible(condition)
    token = tmp_path.name
    key = int.from_bytes(os.urandom(3), "big") + 1
    out = _owned_folder(tmp_path, condition, "out")
    canary = out / "canary"
    canary.write_text("the grading user's own file")
    canary.chmod(0o600)
    _hand_over(out, condition)
    before = canary.stat()
    header = (f"TOKEN = {token!r}\nKEY = {key}\nCANARY = {str(canary)!r}\n"
              f"GRADEBOOK = {str(out / 'g' / 'gradebook.db')!r}\n")
    handins = _owned_folder(tmp_path, condition, "handins")
    # Graded in this order, one at a time: plain files by name, then the Moodle folder.
    for name in ("a0-wrecker", "zz-wrecker"):
        (handins / f"{name}.ipynb").write_text(_stub_with(header + WRECKER))
    for name in ("b1-finder", "b2-finder", "b3-finder"):
        (handins / f"{name}.ipynb").write_text(_alice_with(header + FINDER + WRITER))
    notebook, module = solution_in_a_module("queens_helpers")
    helped = handins / "Helen Helper_502_assignsubmission_file_"
    helped.mkdir()
    (helped / "n-queens.ipynb").write_bytes(notebook)
    (helped / "queens_helpers.py").write_bytes(module)
    _hand_over(handins, condition)
    if condition == "ordinary-user":
        _hand_over(helped, condition)
    grader = _launch(condition, ["--course", str(course), "grade", "--assignment", "n-queens", "--out", str(out / "g"),
                                 "--jobs", "1", "--isolation", layer, str(handins)],
                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    output, _ = grader.communicate(timeout=600)
    assert grader.returncode == 0, output
    assert f"isolation: {expect_layer}" in output, output
    rows = _rows(out / "g" / "grades.csv")
    assert len(rows) == 6
    honest = {student: (row["score"], row["status"]) for student, row in rows.items() if "wrecker" not in student}
    assert honest == {student: ("5", "graded") for student in honest}, _why(out / "g" / "gradebook.db")
    assert rows["a0-wrecker"]["status"] == rows["zz-wrecker"]["status"] == "graded"
    after = canary.stat()
    assert (stat.S_IMODE(after.st_mode), after.st_mtime_ns, after.st_uid) == \
        (0o600, before.st_mtime_ns, before.st_uid), "the hand-in changed the grading user's file"
    assert "user.wrecked" not in os.listxattr(canary)
    gradebook_mode = stat.S_IMODE((out / "g" / "gradebook.db").stat().st_mode)
    assert gradebook_mode & 0o600 == 0o600 and "user.wrecked" not in os.listxattr(out / "g" / "gradebook.db")
    # Nothing of the wrecker is left for the next run, under another user id or layer.
    assert _ipc_left(key) == []
    assert not [p for folder in ("/tmp", "/var/tmp", "/dev/shm") for p in Path(folder).glob(f"left-by-{token}")]
    assert not (Path("/dev/mqueue") / f"ag-{token}").exists()
    assert sandbox_processes(str(out)) == []
    leftovers = [p for p in (out / "g").glob("autograder-sandbox-*")]
    assert leftovers == [], "the sandbox's folder outlived the run"


@pytest.mark.conditions
@pytest.mark.parametrize("condition, layer, gaps", [
    ("ordinary-user", "landlock", ("the grading user's files", "System V IPC", "network")),
    ("root", "auto", ("System V IPC",)),
    ("root", "users", ("System V IPC", "network")),
], ids=["ordinary-user-landlock", "root-auto", "root-users"])
def test_where_no_filter_can_be_installed_grade_says_what_it_cannot_hold_at_the_start(tmp_path, course, condition,
                                                                                      layer, gaps):
    """As on a machine whose architecture the filter does not know (AUTOGRADER_SECCOMP=0 stands for it here):
    what the layer then cannot promise is the first thing `grade` says, as `isolation: not held here`."""
    _skip_unless_possible(condition)
    out = _owned_folder(tmp_path, condition, "out")
    handins = _owned_folder(tmp_path, condition, "handins")   # (the users layer makes what it grades private)
    (handins / "alice.ipynb").write_bytes(ALICE.read_bytes())
    _hand_over(handins, condition)
    grader = _launch(condition, ["--course", str(course), "grade", "--assignment", "n-queens", "--out", str(out / "g"),
                                 "--isolation", layer, str(handins)], env={"AUTOGRADER_SECCOMP": "0"},
                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    output, _ = grader.communicate(timeout=600)
    assert grader.returncode == 0, output
    said = [line for line in output.splitlines() if line.startswith("isolation: not held here:")]
    for gap in gaps:
        assert any(gap in line for line in said), (gap, output)
    assert output.index("isolation: not held here") < output.index("alice")
