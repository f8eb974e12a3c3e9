"""Statuses and errors in plain words, and tracebacks kept short.

The sentences here are generic, chosen by status or exception type, so none
repeats a case's input.  `failure_summary` and `hidden_result` decide what
may be said about a hidden case: never its message, only its kind, in words
from a fixed list the grader wrote (`hidden_words`), which the leak guard
holds every page to.
"""

import builtins
import functools
import itertools
import re

from .. import runtime
from ..core import colab

# Why a whole hand-in did not run to a verdict on every case (submissions.status).
SUBMISSION_STATUS = {
    "timeout": ("Some checks ran out of time.",
                "A function that never returns usually has a loop whose condition never becomes false, or a "
                "recursion without a base case. Call it yourself in Colab on a small input and check that it "
                "finishes; then make it do less work (stop as soon as the answer is known)."),
    "memory": ("Some checks ran out of memory.",
               "Look for a list that keeps growing, or for code that builds every possibility at once (all "
               "permutations of a long list): work through them one at a time instead."),
    "crashed": ("The Python process running your code stopped during some checks.",
                "Do not call exit(), quit() or os._exit() in the notebook, and avoid code that can crash the "
                "interpreter (very deep recursion). Run all cells in Colab and check that it reaches the end."),
    "invalid-notebook": ("Your file could not be read as a Jupyter notebook, so nothing in it was run.",
                         "In Colab use File → Download → Download .ipynb and hand in that file as it is, "
                         "without opening or saving it in another program first."),
    "unreadable": ("Your file could not be read, so nothing in it was run.",
                   "Download the notebook again (File → Download → Download .ipynb) and hand it in again."),
    "empty": ("Your hand-in has no code in it, so nothing could be run.",
              "Save your work in Colab (File → Save) before you download it, and check that the file you hand "
              "in is the notebook you worked on."),
    "wrong-file-type": ("The file you handed in is not a notebook (.ipynb) or a Python file (.py).",
                        "Hand in the notebook itself: in Colab, File → Download → Download .ipynb."),
    "unsafe-path": ("Your zip holds a file whose path points outside the archive (or a link), so it was not "
                    "unpacked.",
                    "Hand in the .ipynb file itself rather than a zip."),
    "too-large": ("Your hand-in is larger than the grader accepts.",
                  "Clear the outputs (Edit → Clear all outputs), save, download the .ipynb again and hand in "
                  "that file."),
    "invalid-zip": ("Your zip file could not be opened.",
                    "Hand in the .ipynb file itself, or make the zip again from the notebook."),
    "wrong-language": ("Your notebook runs another language than Python (its kernel says so), so nothing in it "
                       "was run.",
                       "Open the assignment's notebook from its Colab badge, which runs Python, and write your "
                       "code there; then hand in that notebook."),
    "superseded": ("This is an older submission of yours: a later one counts, so this one was not run.",
                   "Nothing to do: your latest submission is the one graded."),
    "no-notebook": ("No notebook (.ipynb) was found in your hand-in.",
                    "Check that your notebook is in the repository (commit and push it) or in the zip, "
                    "with the .ipynb extension."),
}

# One case's result (case_results.status).
CASE_STATUS = {
    "passed": "passed",
    "failed": "wrong answer",
    "error": "raised an error",
    "timeout": "ran out of time",
    "memory": "ran out of memory",
    "crashed": "crashed",
    "not-run": "not run",
}

CASE_ADVICE = {
    "failed": "Your function returned a value, but not the expected one.",
    "slow": "Your function returned the right answer, but too slowly: it must beat the baseline by the factor "
            "shown. Look for work done again and again that could be done once, or a search that could stop "
            "earlier.",
    "error": "Your function raised an error instead of returning a value.",
    "timeout": "No answer came back within the time limit: the function loops forever or does far too much "
               "work.",
    "memory": "The function used more memory than allowed.",
    "crashed": "The Python process stopped while running this check (exit() or a crash).",
    "withheld": "Your function returned the right value here, but this check counts only together with the "
                "checks it names: a function that returns the same answer whatever it is given, or that knows "
                "only the public checks' answers, would pass it by chance. Make those checks pass and this one "
                "counts too.",
}

# Plain words for common exceptions, by type name.
EXCEPTIONS = {
    "NotImplementedError": "This function is not written yet: the `raise NotImplementedError` line is still "
                           "there. Replace it with your code.",
    "NameError": "Your code uses a name that does not exist when the function runs: check its spelling, and "
                 "that the cell defining or importing it runs without an error.",
    "UnboundLocalError": "A variable is used before it gets a value in this function.",
    "TypeError": "A value of the wrong type was used: for example calling something that is not a function, "
                 "indexing a number, or mixing numbers and strings.",
    "IndexError": "Your code uses a list index that does not exist (past the end of the list).",
    "KeyError": "Your code looks up a key that is not in the dictionary.",
    "ValueError": "A function got a value it cannot work with (for example list.index of a missing item).",
    "ZeroDivisionError": "Your code divides by zero.",
    "AttributeError": "Your code uses an attribute or method the value does not have (check its type).",
    "RecursionError": "The function calls itself too deeply: is there a base case that is always reached?",
    "AssertionError": "An assert in your code failed.",
    "MemoryError": "The function used more memory than allowed.",
    "ImportError": "An import in your code failed: check the name you import, and that the package offers it "
                   "at the version the course uses.",
    "StopIteration": "next() was called on an iterator that had nothing left.",
    "SystemExit": "exit(), quit() or sys.exit() ends the notebook's Python session: in Colab, Run all stops at that "
                  "line and no cell after it runs (the grader went on with the next cell). Remove the call; inside "
                  "a function, use return.",
    "StdinNotImplementedError": "Your code waits for a person to type something (input(), or breakpoint() and the "
                                "debugger), and nobody can when a notebook is graded. Set the value in the code "
                                "instead of asking for it, and remove breakpoint() calls.",
    "BdbQuit": "The debugger (pdb.set_trace(), breakpoint() or %debug) waited for a person to type a command, and "
               "nobody can when a notebook is graded: remove the debugger call.",
}

_EXCEPTION_NAME = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)(?::|$)")


def _fixed_first_lines():
    """The first lines runtime.explain_difference can give that name no value and no number: the only words a
    hidden case's wrong answer may be described with.  Made by asking it of one value of each kind (and of the
    string and list differences it names), so the list cannot drift from what scoring writes."""
    kinds = (None, True, 0, "x", [1], {runtime.DICT: []}, {runtime.SET: []}, {runtime.FLOAT: "nan"},
             {runtime.TOO_BIG: True})
    pairs = [*itertools.product(kinds, kinds), ("a b", "a c"), ("a b", "a  b"), ("ab", "ab\n"), ("ab\n", "ab"),
             ([[1], [2]], [[2], [1]])]
    lines = {runtime.explain_difference(expected, received).split("\n")[0] for expected, received in pairs}
    return frozenset(line for line in lines if not any(character.isdigit() for character in line))


# The fixed first lines of runtime.explain_difference, which name no value: safe for a hidden case.
SAFE_FAILED = _fixed_first_lines()
SLOW = "too slow"
WITHHELD = "withheld"


def submission_problem(status, message=""):
    """(what happened, what to try) for a hand-in's status, or None when it ran normally."""
    if status in SUBMISSION_STATUS:
        return SUBMISSION_STATUS[status]
    if status == "graded" and "cell" in (message or ""):
        return ("Some notebook cells raised an error or were stopped when your notebook was run top to bottom.",
                "A check that needs what such a cell defines then fails too. In Colab use Runtime → Restart "
                "session and run all, and fix the first cell that fails.")
    if status and status != "graded":
        return (f"Your hand-in could not be graded normally ({status}).",
                "Ask your TA what went wrong.")
    return None


def is_test_student(name):
    """Is this the LMS's own test account?  Canvas names it "Test Student" (its submission zips spell it
    "studenttest"); a teacher's "Student view" hands in as that account."""
    return re.sub(r"[^a-z]", "", str(name).lower()) in ("teststudent", "studenttest")


def is_test_account(submission):
    """Canvas's Test Student, without a roster to flag it: a hand-in that came from Canvas (intake said so,
    and the gradebook kept it) under that name.  Only Canvas has such an account: a Moodle (or any other)
    student called "Test Student" is a student."""
    return submission.lms == "canvas" and is_test_student(submission.display_name)


def wrote_nothing(submission):
    """An empty hand-in, or one where every check stopped at a `raise NotImplementedError` left in place
    (the template handed in as it was)."""
    if submission.status == "empty":
        return True
    rows = submission.cases
    return bool(rows) and all(r.status == "error" and exception_name(r.message) == "NotImplementedError"
                              for r in rows)


def template_problem(first_function):
    """(what happened, what to try) for a hand-in whose every check met a stub: said once, at the top.

    It may be the template itself, or code whose every function calls one still a stub (a `get_n` left as
    it was stops them all): the words fit both."""
    return ("Every check stopped at a `raise NotImplementedError` line left from the template: your functions "
            "are not written yet, or each of them calls one that is not.",
            f"Start with `{first_function}`: replace its `raise NotImplementedError(...)` line between "
            "`### BEGIN YOUR CODE` and `### END YOUR CODE`, run its check cell, and go on down the notebook. "
            "If you did write code, check that you handed in the notebook you saved, not a fresh copy.")


def exception_name(message):
    """`NameError` from "NameError: name 'x' is not defined"; None when the message has no type.

    The name is whatever the hand-in's class is called: only for what the student may see of a
    public case, or for telling the stub's NotImplementedError apart.  A hidden case shows
    `builtin_exception_name` instead."""
    match = _EXCEPTION_NAME.match((message or "").strip())
    return match.group(1) if match else None


# Python's own exception classes: the only exception names a hidden case's feedback may show. A class
# the notebook defines can be named anything (`type("Leak_0_2_4", (Exception,), {})` spells a hidden input).
BUILTIN_EXCEPTIONS = frozenset(name for name, value in vars(builtins).items()
                               if isinstance(value, type) and issubclass(value, BaseException)) | \
    frozenset(("StdinNotImplementedError", "BdbQuit"))   # what input() and the debugger raise when graded
NOTEBOOK_EXCEPTION = "an exception of a class the notebook defines"


def builtin_exception_name(message):
    """The exception's name when it is one of Python's own, else NOTEBOOK_EXCEPTION (None: no type at all)."""
    name = exception_name(message)
    if name is None:
        return None
    return name if name in BUILTIN_EXCEPTIONS else NOTEBOOK_EXCEPTION


def error_words(message, cell=False):
    """Plain words for an error message, by its exception type (`cell`: a notebook cell's, not a check's)."""
    name = exception_name(message)
    where = "when this cell ran" if cell else "while running this check"
    if name is None:
        return f"Your code raised an error {where}."
    if name == "ModuleNotFoundError":
        return missing_module_words(message)
    return EXCEPTIONS.get(name.rsplit(".", 1)[-1], f"Your code raised {name} {where}.")


# Errors about how the notebook runs, not about what a function computes: their words say all (no case hint).
NOT_THE_FUNCTION = frozenset(("SystemExit", "StdinNotImplementedError", "BdbQuit", "ModuleNotFoundError"))

_MISSING_MODULE = re.compile(r"No module named '([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)'")


def missing_module_words(message):
    """What a student reads for `No module named 'x'`: the module, whether Colab has it, what the course offers."""
    match = _MISSING_MODULE.search(message or "")
    course = ("Python's standard library and " + ", ".join(colab.offered_imports()))
    if not match or len(match.group(1)) > 100:
        return f"Your code imports a module the grader does not have. The course offers {course}."
    module = match.group(1)
    top = module.split(".")[0]
    if top in colab.offered_imports():
        if module == top:   # offered, yet not installed: the grader's installation is at fault, not the notebook
            return (f"Your code imports `{top}`, which the course offers, but the grader's installation lacks it: "
                    "tell your instructor (the grader needs `pip install .` again).")
        return (f"Your code imports `{module}`, which `{top}` does not have at the version the course uses: check "
                f"the name (the course offers {course}).")
    package = "google.colab" if module.startswith("google.colab") else top
    if colab.colab_has(package):
        reason = colab.why_left_out(package)
        return (f"Your code imports `{package}`. Colab has it (its list of {colab.COLAB_AS_OF}), but this course's "
                f"grader does not" + (f": {reason}" if reason else "") + f". The course offers {course}: write "
                "that part with those, or ask your instructor.")
    return (f"Your code imports `{package}`, which neither Colab (its list of {colab.COLAB_AS_OF}) nor this "
            f"course's grader has, so a `!pip install` in the notebook would be needed, and the grader installs "
            f"nothing. If it is a file of your own, hand it in beside the notebook; otherwise the course offers "
            f"{course}: write that part with those.")


def is_slow(status, message):
    """A right answer that came too slowly (compare = "faster_than"): status failed, message "too slow: ..."."""
    return status == "failed" and (message or "").startswith(("too slow", "right answer, but"))


def is_withheld(status, message):
    """A right answer whose points a requirement withheld (grade/scoring.apply_requirements): status failed,
    message "withheld: ...".  The message names only public calls and hidden checks' descriptions."""
    return status == "failed" and runtime.is_withheld(message)


def case_result(status, message=""):
    if is_slow(status, message):
        return SLOW
    if is_withheld(status, message):
        return WITHHELD
    return CASE_STATUS.get(status, status or "not run")


def failure_summary(status, message, hidden):
    """One line about a case that did not pass, the same for every student who failed it the same way.

    For a hidden case it never repeats its message (which could echo the
    input): an exception's type is chosen by code, not by input, so it is
    kept; a wrong value is named by its kind only when the message is one of
    scoring's fixed sentences ("expected a bool, got a number").
    """
    message = (message or "").strip()
    if status in ("timeout", "memory", "crashed", "not-run"):
        return case_result(status)
    if status == "failed":
        if is_slow(status, message):
            return SLOW
        if is_withheld(status, message):
            return message.splitlines()[0]      # the grader's own words: public calls, hidden descriptions
        first = message.splitlines()[0] if message else ""
        if not first or (hidden and first not in SAFE_FAILED):
            return "wrong value"
        return first
    if status == "error" and hidden:
        name = builtin_exception_name(message)
        return f"{name} (message not shown: hidden case)" if name else "an error (message not shown: hidden case)"
    return message or case_result(status)


def hidden_result(status, message):
    """The only words about a hidden case's result that students get (see failure_summary): always one of
    hidden_words(), whatever the gradebook holds."""
    if status not in CASE_STATUS:
        return NOT_JUDGED              # a status this grader never writes: nothing it could say is known
    words = case_result(status, message)
    if status == "error":
        name = builtin_exception_name(message)
        return f"{words} ({name})" if name else words
    if status == "failed" and not is_withheld(status, message):
        detail = failure_summary(status, message, hidden=True)
        return words if detail in ("wrong value", words) else f"{words}: {detail}"
    return words


NOT_JUDGED = "no result"


@functools.cache
def hidden_words():
    """Every phrase hidden_result can give, written here, finite: each status's words, `raised an error (Name)`
    for Python's own exception names only, and `wrong answer: ...` with one of scoring's fixed sentences."""
    words = {*CASE_STATUS.values(), SLOW, WITHHELD, NOT_JUDGED}
    words |= {f"{CASE_STATUS['error']} ({name})" for name in (*BUILTIN_EXCEPTIONS, NOTEBOOK_EXCEPTION)}
    words |= {f"{CASE_STATUS['failed']}: {line}" for line in SAFE_FAILED - {"wrong value"}}
    return frozenset(words)


_LIBRARY_FILE = re.compile(r"/lib/python3\.\d+/(?:(?:site|dist)-packages/)?(?P<path>[^\"]+)$")


def _in_library(file):
    """A library's file (Python's own, an installed package's), or code one made at run time (`<string>`)."""
    return bool(_LIBRARY_FILE.search(file)) or (file.startswith("<") and not file.startswith(("<ipython-input-",
                                                                                               "<cell")))


def raised_in_library(traceback):
    """Where an error raised outside the student's code came from, and from which of their functions, in words:
    'The error was raised inside Python's standard library (multiprocessing/synchronize.py), called by your
    `count_solutions` (line 5): ...'.  None when it was raised in the student's own code (a cell, or
    a module handed in beside the notebook).  The worker keeps the innermost frame with the student's
    (engine/worker.py), so that both can be named."""
    frames = list(_LAST_FRAME.finditer(traceback or ""))
    if not frames or not _in_library(frames[-1].group("file")):
        return None
    yours = [i for i, f in enumerate(frames) if not _in_library(f.group("file"))]
    entry = next((f for f in frames[yours[-1] + 1 if yours else 0:] if _LIBRARY_FILE.search(f.group("file"))), None)
    if entry is None:
        return None
    path = _LIBRARY_FILE.search(entry.group("file")).group("path")
    package = "site-packages/" in entry.group("file") or "dist-packages/" in entry.group("file")
    where = f"`{path.split('/')[0]}`" if package else "Python's standard library"
    caller = (f", called by your `{frames[yours[-1]].group('function')}` (line {frames[yours[-1]].group('line')})"
              if yours else "")
    return (f"The error was raised inside {where} ({path}){caller}: look at what that line asks of it (the "
            "check's own hint is about your functions, which did not raise this).")


_LAST_FRAME = re.compile(r'^  File "(?P<file>[^"]*)", line (?P<line>\d+), in (?P<function>\S+)\n(?:    (?P<code>.*))?',
                         re.M)


def timeout_location(message, traceback):
    """'stopped after 2 s in `is_solved`, line 6 (`while i < n:`)' from a timed-out case's student frames.

    The worker keeps the student's frames at the moment it interrupts a case;
    the last one is where the code was stuck.  None when there are none.
    """
    frames = list(_LAST_FRAME.finditer(traceback or ""))
    if not frames:
        return None
    last = frames[-1]
    seconds = re.search(r"within ([0-9.]+ ?s)", message or "")
    code = (last.group("code") or "").strip()
    where = f"in `{last.group('function')}`, line {last.group('line')}" + (f" (`{code}`)" if code else "")
    reference = _REFERENCE.search(message or "")
    return (f"stopped after {seconds.group(1) if seconds else 'the time limit'} {where}"
            + (f"; {reference.group(0)}" if reference else ""))


# grading.py adds this to a time-out's message where the reference's time is recorded.
_REFERENCE = re.compile(r"the reference solution takes about [0-9.]+ m?s")


def short_traceback(text, frames=3):
    """The traceback of the student's own frames, at most `frames` of them, readably.

    Keeps the first frame (where the check entered the student's code) and
    the last ones (where the error happened).
    """
    blocks, current = [], []
    for line in (text or "").splitlines():
        if line.startswith("  File ") and current:
            blocks.append(current)
            current = []
        current.append(line)
    if current:
        blocks.append(current)
    blocks = [[_where(block[0]), *block[1:]] for block in blocks if block]
    if len(blocks) > frames:
        skipped = len(blocks) - frames
        blocks = [blocks[0], [f"  ... ({skipped} more call{'s' if skipped > 1 else ''}) ..."],
                  *blocks[-(frames - 1):]]
    return "\n".join(line for block in blocks for line in block).rstrip()


_FRAME = re.compile(r'^  File "(?P<file>[^"]*)", line (?P<line>\d+), in (?P<function>.+)$')


def _where(line):
    match = _FRAME.match(line)
    if not match:
        return line
    file = match.group("file")
    if file.startswith("<ipython-input-") or file.startswith("<cell"):
        return f"  in {match.group('function')}, line {match.group('line')} of its cell"
    return line
