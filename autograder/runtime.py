"""Value normalisation, fair comparison and the public-check helpers.

This one file is used in three places, so the rules are the same everywhere:
the grader compares with `to_plain` + `compare`, the sandboxed worker sends
`to_plain` values back to the grader, and `autograder build` pastes this
source into every student notebook so the public checks run in Colab with
nothing installed.  It must therefore import only the standard library
(numpy is used when present, never required).
"""

# Private names: these helpers are pasted into students' notebooks, and must
# not hand them `math` or `sys` that a failed import of their own would need.
import contextlib as _contextlib
import math as _math
import sys as _sys
import time as _time
import traceback as _traceback
import types as _types

# Tagged JSON forms for what plain JSON cannot say.
OPAQUE = "__opaque__"      # an object we refuse to compare (custom class, subclass, ...)
DICT = "__dict__"          # dict with any hashable keys, as [[key, value], ...]
SET = "__set__"            # set/frozenset, as a sorted list
FLOAT = "__float__"        # nan / inf / -inf
TOO_BIG = "__too_big__"    # bigger than we are willing to ship or compare

MAX_ITEMS = 1_000_000
MAX_DEPTH = 64
MAX_STR = 1_000_000


def _numpy():
    return _sys.modules.get("numpy")


def to_plain(value, _depth=0, _budget=None):
    """Convert a returned value to plain JSON-able data, or an opaque marker.

    Exact types only: a subclass of int or list, or any object with its own
    __eq__, becomes opaque and so never equals an expected value.  numpy
    scalars and arrays become the Python values they equal; tuples become lists.
    """
    budget = _budget if _budget is not None else [MAX_ITEMS]
    budget[0] -= 1
    if budget[0] < 0 or _depth > MAX_DEPTH:
        return {TOO_BIG: True}
    kind = type(value)
    if value is None or kind is bool or kind is int:
        return value
    if kind is float:
        return value if _math.isfinite(value) else {FLOAT: repr(value)}
    if kind is str:
        return value if len(value) <= MAX_STR else {TOO_BIG: True}
    if kind is list or kind is tuple:
        return [to_plain(item, _depth + 1, budget) for item in value]
    if kind is _types.GeneratorType:
        # A generator counts as the list of what it yields, read after it is done
        # (so one that keeps yielding the same mutable list shows that bug).
        items = []
        for item in value:
            items.append(item)
            if len(items) > MAX_ITEMS:
                return {TOO_BIG: True}
        return to_plain(items, _depth, budget)
    if kind is dict:
        return {DICT: [[to_plain(k, _depth + 1, budget), to_plain(v, _depth + 1, budget)]
                       for k, v in value.items()]}
    if kind is set or kind is frozenset:
        items = [to_plain(item, _depth + 1, budget) for item in value]
        return {SET: sorted(items, key=repr)}
    np = _numpy()
    if np is not None:
        if kind is np.ndarray:
            if value.size > MAX_ITEMS:
                return {TOO_BIG: True}
            return to_plain(value.tolist(), _depth + 1, budget)
        if isinstance(value, np.generic) and kind.__module__ == "numpy":
            return to_plain(value.item(), _depth + 1, budget)
    return {OPAQUE: f"{kind.__module__}.{kind.__qualname__}"}


def _is_tag(value, tag):
    return type(value) is dict and tag in value


def _equal(expected, received, rel_tol=0.0):
    if type(expected) is bool or type(received) is bool:
        # True == 1 in Python, but a checker that answers 1 has not said "True".
        return type(expected) is type(received) and expected == received
    if type(expected) in (int, float) and type(received) in (int, float):
        if rel_tol:
            return _math.isclose(expected, received, rel_tol=rel_tol, abs_tol=rel_tol)
        return expected == received
    if type(expected) is str or type(received) is str:
        return type(expected) is type(received) and expected == received
    if type(expected) is list and type(received) is list:
        return len(expected) == len(received) and all(
            _equal(e, r, rel_tol) for e, r in zip(expected, received))
    if type(expected) is dict and type(received) is dict:
        if OPAQUE in expected or OPAQUE in received or TOO_BIG in received:
            return False
        if DICT in expected and DICT in received:
            return _same_items(expected[DICT], received[DICT], rel_tol)
        if SET in expected and SET in received:
            return _same_items(expected[SET], received[SET], rel_tol)
        if FLOAT in expected and FLOAT in received:
            return expected[FLOAT] == received[FLOAT] and expected[FLOAT] != "nan"
        return False
    return expected is None and received is None


def _same_items(expected, received, rel_tol=0.0):
    """Multiset equality under _equal (items need not be hashable)."""
    if type(expected) is not list or type(received) is not list or len(expected) != len(received):
        return False
    left = list(received)
    for item in expected:
        for i, other in enumerate(left):
            if _equal(item, other, rel_tol):
                del left[i]
                break
        else:
            return False
    return True


# How a case's received value is judged against its expected value.  Every
# comparison works on plain values (see to_plain); the name is part of the
# case's data, so the same rule runs in the grader and in the notebook.
COMPARISONS = {
    "equal": lambda expected, received, options: _equal(expected, received),
    "approx": lambda expected, received, options: _equal(
        expected, received, options.get("rel_tol", 1e-9)),
    "same_items": lambda expected, received, options: _same_items(expected, received),
    # The value must be right AND the call at least options["speedup"] times
    # faster than options["baseline"]; the timing part is judged where the
    # call was timed (see timed_well).
    "faster_than": lambda expected, received, options: _equal(expected, received),
}


def timed_well(seconds, baseline_seconds, options):
    """For faster_than: is `seconds` at least `speedup` times below the baseline's?"""
    return seconds * options.get("speedup", 1) <= baseline_seconds


def best_time(function, repeat):
    """(value, fastest wall time in seconds) over `repeat` calls."""
    best = None
    for _ in range(max(1, repeat)):
        started = _time.perf_counter()
        value = function()
        seconds = _time.perf_counter() - started
        best = seconds if best is None else min(best, seconds)
    return value, best


def compare(expected, received, how="equal", options=None):
    """True when the plain value `received` passes against plain `expected`."""
    return COMPARISONS[how](expected, received, options or {})


def show(plain, limit=600):
    """A readable rendering of a plain value: boards as boards, long lists cut.

    Never raises, and stops rendering once `limit` characters are reached, so
    a huge or deeply nested value costs no more than a small one.
    """
    try:
        text = _show(plain, limit)
    except Exception:  # noqa: BLE001 - RecursionError, or a value that is not plain at all
        text = "<a value that cannot be shown>"
    return text if len(text) <= limit else text[:limit] + " ..."


def _show(plain, limit):
    if type(plain) is str:
        return plain if "\n" in plain else repr(plain)
    if type(plain) is dict and len(plain) == 1:
        if OPAQUE in plain:
            return f"<an object of type {plain[OPAQUE]}, not a plain value>"
        if TOO_BIG in plain:
            return "<a value too large to compare>"
        if FLOAT in plain:
            return str(plain[FLOAT])
        if DICT in plain:
            return _joined("{", (f"{show(k)}: {show(v)}" for k, v in plain[DICT]), "}", limit)
        if SET in plain:
            return _joined("{", (show(v) for v in plain[SET]), "}", limit)
    if type(plain) is list and len(plain) > 20:
        head = _joined("", (show(v, limit) for v in plain[:10]), "", limit)
        return f"[{head}, ... ({len(plain) - 10} more)]"
    if type(plain) is list:
        return _joined("[", (show(v, limit) for v in plain), "]", limit)
    if plain is None or type(plain) in (bool, int, float):
        return repr(plain)
    return "<a value that is not plain>"


def _joined(opening, pieces, closing, limit):
    """opening + ", ".join(pieces) + closing, but the pieces past `limit` characters are never made."""
    out, size = [opening], len(opening)
    for number, piece in enumerate(pieces):
        if number:
            out.append(", ")
            size += 2
        out.append(piece)
        size += len(piece)
        if size > limit:  # the caller cuts at `limit`: what would follow is never seen
            break
    out.append(closing)
    return "".join(out)


@_contextlib.contextmanager
def report_errors():
    """Run a demo block; print an error as a short message instead of raising.

    So "Run all" on an unfinished notebook reaches the last cell.
    """
    try:
        yield
    except Exception as error:  # noqa: BLE001 - reporting is the point
        print(f"✗ {type(error).__name__}: {error}")
        frames = _traceback.extract_tb(error.__traceback__)[1:]
        for line in _traceback.format_list(frames[-3:]):
            print("   " + line.rstrip().replace("\n", "\n   "))


def run_checks(cases, namespace=None):
    """Run public cases in the notebook and print one verdict per case.

    `cases` is a list of dicts with keys call, expected (plain), points, hint
    and optionally compare / options.  Nothing here raises.
    """
    namespace = namespace if namespace is not None else _sys._getframe(1).f_globals
    earned = total = 0.0
    for case in cases:
        total += case["points"]
        how, options = case.get("compare", "equal"), case.get("options") or {}
        timing = ""
        try:
            value, seconds = best_time(lambda: to_plain(eval(case["call"], namespace)),  # noqa: S307
                                       options.get("repeat", 1))
            received, error = value, None
            if how == "faster_than":
                _, baseline = best_time(lambda: eval(options["baseline"], namespace),  # noqa: S307
                                        options.get("repeat", 1))
                timing = (f"{seconds:.3g} s vs {baseline:.3g} s for {options['baseline']} "
                          f"(needs {options.get('speedup', 1):g}x faster)")
                if not timed_well(seconds, baseline, options):
                    error = "correct but too slow: " + timing
        except Exception as exc:  # noqa: BLE001 - a check reports, it does not raise
            received, error = None, f"{type(exc).__name__}: {exc}"
        passed = error is None and compare(case["expected"], received, how, options)
        earned += case["points"] if passed else 0
        print(f"{'✓ pass' if passed else '✗ FAIL'}  {case['call']}   ({case['points']:g} pt)")
        print(f"    expected: {_indent(show(case['expected']))}")
        print(f"    received: {_indent(error or show(received))}")
        if timing and passed:
            print(f"    time: {timing}")
        if not passed and case.get("hint"):
            print(f"    hint: {case['hint']}")
    print(f"{earned:g} / {total:g} points from these public checks")


def _indent(text):
    return text.replace("\n", "\n              ") if "\n" in text else text
