# --- Case checks for other grading engines (otter-grader, nbgrader) ---------
# Appended by `autograder export` after the comparison rules above (it uses
# their public functions only: to_plain, compare, best_time, timed_well, show,
# explain_difference, too_slow_message, withheld_message, and calibrate,
# which core/calibration.py adds) and imports what else it needs itself).  One call:
#
#     check("f([0, 2, 0])", False)
#
# runs the call against the notebook's own functions (the caller's globals),
# with the case's time limit, with whatever the student's code prints
# swallowed, and judges the value with to_plain + compare above.  It returns
# None when the case passes and raises CaseFailed (an AssertionError) when it
# does not, which is what both otter's doctests and nbgrader's test cells
# count as a failure.
import ast as _ast
import contextlib as _contextlib
import io as _io
import signal as _signal
import sys as _sys
import threading as _threading
import time as _time


HIDDEN_LABEL = "hidden: "   # how a hidden case is labelled (never by its call)


class CaseFailed(AssertionError):
    """A case did not pass; the message says why."""


class CaseTimeout(BaseException):
    """A call ran past its time limit.

    A BaseException, so student code that catches Exception cannot swallow it.
    """


_CONSTRUCTORS = {"list": list, "tuple": tuple, "range": range, "set": set, "frozenset": frozenset}


def parse_call(text):
    """'f(1, [2])' -> ('f', args, kwargs), built without eval (as the grader does)."""
    node = _ast.parse(text.strip(), mode="eval").body
    if not isinstance(node, _ast.Call) or not isinstance(node.func, _ast.Name):
        raise ValueError(f"{text!r} is not a call of one function by name")
    return (node.func.id, [_argument(a) for a in node.args],
            {k.arg: _argument(k.value) for k in node.keywords})


def _argument(node):
    if isinstance(node, _ast.Call):
        name = _ast.unparse(node.func)
        items = [_argument(a) for a in node.args]
        if name in ("np.array", "numpy.array"):
            import numpy

            return numpy.array(*items)
        return _CONSTRUCTORS[name](*items)
    return _ast.literal_eval(node)


_machine = {}


def case_limit(timeout):
    """CPU seconds of a case's `timeout`: a number is its fixed limit; (floor, scaled, calibration) is the
    course's rule, max(floor, scaled x ratio), with ratio how much slower this machine runs Python than the one
    that built the assignment (never below 1), measured once, by the same workload as the course's grader."""
    if not isinstance(timeout, (tuple, list)):
        return timeout
    floor, scaled, built = timeout
    if built and "now" not in _machine:
        _machine["now"] = calibrate()
    ratio = max(1.0, _machine["now"] / built) if built else 1.0
    return round(max(floor, scaled * ratio), 3)


@_contextlib.contextmanager
def _time_limit(seconds):
    """The case's limit in CPU time, as the course's own grader judges it: a busy grading machine (Gradescope's
    are shared) slows a case without timing it out.  Code that uses no CPU (sleeping, waiting) is stopped once
    it has computed next to nothing for twice its limit plus a second, re-judged each such period."""
    if not seconds or _threading.current_thread() is not _threading.main_thread():
        yield
        return
    period = 2 * seconds + 1
    last = [_time.process_time()]

    def out_of_cpu(signum, frame):
        raise CaseTimeout(f"no result within {seconds:g} s of CPU time")

    def idle(signum, frame):
        now = _time.process_time()
        busy, last[0] = now - last[0], now
        if busy < 0.1 * period:
            raise CaseTimeout(f"no result within {seconds:g} s: it waited, computing next to nothing, for "
                              f"{period:g} s")
        _signal.setitimer(_signal.ITIMER_REAL, period)   # computing, slowed by other work: its CPU timer judges

    previous = _signal.signal(_signal.SIGPROF, out_of_cpu), _signal.signal(_signal.SIGALRM, idle)
    _signal.setitimer(_signal.ITIMER_PROF, seconds)
    _signal.setitimer(_signal.ITIMER_REAL, period)
    try:
        yield
    finally:
        _signal.setitimer(_signal.ITIMER_REAL, 0)
        _signal.setitimer(_signal.ITIMER_PROF, 0)
        _signal.signal(_signal.SIGPROF, previous[0])
        _signal.signal(_signal.SIGALRM, previous[1])


def _run(text, namespace, timeout, repeat):
    """(plain value, fastest seconds) of the call `text` in `namespace`."""
    timeout = case_limit(timeout)
    function, _, _ = parse_call(text)
    target = namespace.get(function)
    if target is None:
        raise CaseFailed(f"NameError: {function} is not defined in the notebook")

    def once():
        _, args, kwargs = parse_call(text)  # fresh arguments for every call
        with _time_limit(timeout):
            return to_plain(target(*args, **kwargs))

    printed = _io.StringIO()
    with _contextlib.redirect_stdout(printed), _contextlib.redirect_stderr(printed):
        return best_time(once, repeat)


def check(call, expected, how="equal", options=None, timeout=None, hint="", label=None,
          namespace=None, requires=()):
    """Pass silently, or raise CaseFailed saying what was expected and what came back.

    `requires`: (call, expected, how, options, label) of each case that must pass too for this
    one to count (cases.toml's `requires`); a right answer without them fails as "withheld".
    """
    namespace = namespace if namespace is not None else _sys._getframe(1).f_globals
    options = options or {}
    label = label or call
    repeat = options.get("repeat", 1)
    try:
        received, seconds = _run(call, namespace, timeout, repeat)
        problem = None
        if how == "faster_than":
            _, baseline = _run(options["baseline"], namespace, 10 * (case_limit(timeout) or 0) or None, repeat)
            if not timed_well(seconds, baseline, options):
                problem = too_slow_message(seconds, baseline, options)
    except CaseFailed as error:
        raise CaseFailed(f"{label}: {error}") from None
    except CaseTimeout as error:
        raise CaseFailed(f"{label}: {error}") from None
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # noqa: BLE001 - SystemExit too: the student's bug
        raise CaseFailed(f"{label}: {type(error).__name__}: {error}") from None
    if not compare(expected, received, how, options):
        problem = (f"expected {show(expected)}, received {show(received)}\n"
                   + explain_difference(expected, received))
    if problem is None:
        missing = [required[4] for required in requires if not _passes(required, namespace, timeout)]
        if missing:
            problem = withheld_message(missing, twin=all(m.startswith(HIDDEN_LABEL) for m in missing))
    if problem is not None:
        raise CaseFailed(f"{label}: {problem}" + (f"\nhint: {hint}" if hint else ""))


def check_required(label, requires, timeout=None, namespace=None):
    """Raise CaseFailed ("withheld") unless every case in `requires` passes: the hidden twins a public
    case requires, judged where students cannot read them (nbgrader's hidden tests), after its own check."""
    namespace = namespace if namespace is not None else _sys._getframe(1).f_globals
    missing = [required[4] for required in requires if not _passes(required, namespace, timeout)]
    if missing:
        raise CaseFailed(f"{label}: " + withheld_message(missing, twin=all(m.startswith(HIDDEN_LABEL)
                                                                             for m in missing)))


def _passes(required, namespace, timeout):
    """`required`: (call, expected, how, options, label[, its own timeout]); without its own, the caller's."""
    call, expected, how, options = required[:4]
    try:
        received, _ = _run(call, namespace, required[5] if len(required) > 5 else timeout, 1)
    except KeyboardInterrupt:
        raise
    except BaseException:  # noqa: BLE001 - a required case that fails in any way does not pass
        return False
    return compare(expected, received, how, options or {})
