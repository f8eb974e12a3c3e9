"""No hidden case's input reaches any page, whatever names, messages and values a hand-in chooses.

The red team's attack: `raise type("Leak_" + "_".join(map(str, pos)), (Exception,), {})()` put all 9
hidden inputs on a feedback page, through the exception's name.  Its cousins: an input in a message, a
builtin exception subclass named after the input, a returned object whose repr holds it, and inputs
kept from a hidden case and handed back by a later public one.  The third red team's: a public case found
the hidden calls queued in its worker (through gc) and raised them, spelled as letters, in its message.  Graded, then `feedback`, `report` and
`release` through the real command; no file written may hold a hidden input in any of its spellings.
"""

import ast
import inspect
import json
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT

ALICE = ROOT / "examples" / "n-queens" / "submissions" / "alice.ipynb"
AUTOGRADER = [sys.executable, "-m", "autograder", "--course", str(ROOT)]

def _letters(args):
    """A call's arguments spelled as letters (what the red team did to get past a search for the input)."""
    return "".join("ABCDEFGHIJKLMNOPQRSTUVWXYZ"[ord(ch) % 26] for ch in json.dumps(args))


LEAKERS = {
    "by-type-name": '''
def _leak(pos):
    raise type("Leak_" + "_".join(map(str, pos)), (Exception,), {})()
''',
    "by-builtin-subclass": '''
def _leak(pos):
    error = type("Leak_" + "_".join(map(str, pos)), (ValueError,), {})
    error.__qualname__ = error.__name__
    raise error("x")
''',
    "by-message": '''
def _leak(pos):
    raise ValueError("input " + repr(pos) + " " + "_".join(map(str, pos)))
''',
    "by-renamed-class": '''
class Sneaky(Exception):
    pass
def _leak(pos):
    Sneaky.__name__ = "L_" + "_".join(map(str, pos))
    raise Sneaky("_".join(map(str, pos)))
''',
    "by-repr": '''
class Echo:
    def __init__(self, pos):
        self.pos = list(pos)
    def __repr__(self):
        return "Echo" + repr(self.pos) + "_".join(map(str, self.pos))
def _leak(pos):
    return Echo(pos)
''',
    "kept-for-later": '''
SEEN = []
def _leak(pos):
    SEEN.append(list(pos))
    if len(SEEN) > 1:
        raise ValueError("seen before: " + repr(SEEN) + " " + " ".join("_".join(map(str, p)) for p in SEEN))
    raise NotImplementedError("not yet")
''',
    "reads-the-queue": '''
import gc, json
def _queued():
    """Every call this process holds that it has not been asked yet: the worker's queue and read buffer."""
    found = []
    for thing in gc.get_objects():
        if type(thing).__name__ == "_Channel":
            found += list(thing._waiting)
            for line in bytes(thing._buffer).split(b"\\n"):
                try:
                    found.append(json.loads(line))
                except ValueError:
                    pass
    return [request for request in found if request.get("op") == "call"]
def _leak(pos):
    raise ValueError("is:" + ",".join(_letters(request["args"]) for request in _queued()))
''' + "\n" + inspect.getsource(_letters),
}


def notebook(helper):
    source = helper + '''
def get_n(pos):
    return _leak(pos)
def is_solved(pos):
    return _leak(pos)
def board2str(pos):
    return _leak(pos)
def count_solutions(n):
    return _leak([n])
'''
    return json.dumps({"cells": [{"cell_type": "code", "execution_count": None, "id": "c", "metadata": {},
                                  "outputs": [], "source": source}],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def spellings(value):
    """How a hand-in could write an input: repr, and joined by underscores or spaces."""
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    return {repr(value), repr(list(items)), "_".join(map(str, items)), " ".join(map(str, items))}


def hidden_spellings(nqueens):
    public_text = " ".join(c.call.text for c in nqueens.cases if not c.hidden)
    found = set()
    for case in nqueens.cases:
        if case.hidden:
            for argument in ast.parse(case.call.text, mode="eval").body.args:
                try:
                    value = ast.literal_eval(argument)
                except ValueError:
                    value = ast.literal_eval(argument.args[0])      # np.array([...])
                found |= {s for s in spellings(value) if len(s) >= 5 and s not in public_text}
    public_letters = {_letters(c.call.encoded()["args"]) for c in nqueens.cases if not c.hidden}
    # As the letter-spelling leaker writes them: after "is:" or a comma.
    return found | {f"{before}{letters}" for c in nqueens.cases if c.hidden for before in ("is:", ",")
                    if (letters := _letters(c.call.encoded()["args"])) not in public_letters}


@pytest.mark.slow
def test_no_hidden_input_reaches_feedback_report_or_release(tmp_path, nqueens):
    handins = tmp_path / "handins"
    handins.mkdir()
    for name, helper in LEAKERS.items():
        (handins / f"{name}.ipynb").write_text(notebook(helper))
    shutil.copy(ALICE, handins / "alice.ipynb")
    out = tmp_path / "out"
    for command in (["grade", "--assignment", "n-queens", "--out", str(out), "--timeout", "2", str(handins)],
                    ["feedback", "--out", str(out)], ["report", "--out", str(out)],
                    ["release", "--out", str(out), "--to", str(tmp_path / "release")]):
        done = subprocess.run([*AUTOGRADER, *command], capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
    secrets = hidden_spellings(nqueens)
    assert len(secrets) >= 9
    written = [p for p in [*out.rglob("*"), *(tmp_path / "release").rglob("*")]
               if p.is_file() and p.suffix in (".html", ".md", ".csv", ".txt", ".json")]
    leaks = {(str(p.relative_to(tmp_path)), s) for p in written for s in secrets if s in p.read_text(errors="replace")}
    assert leaks == set()
    page = (out / "feedback" / "by-type-name" / "feedback.md").read_text()
    assert "an exception of a class the notebook defines" in page
    by_message = (out / "feedback" / "by-message" / "feedback.md").read_text()
    assert "ValueError" in by_message                       # Python's own names are still shown
