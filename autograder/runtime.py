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


def _kind(plain):
    """What a plain value is, in the words every failure message uses."""
    if type(plain) is dict:
        for tag, name in ((OPAQUE, "object"), (DICT, "dict"), (SET, "set"), (FLOAT, "number"),
                          (TOO_BIG, "value too large to compare")):
            if tag in plain:
                return name
    return {bool: "bool", int: "number", float: "number", str: "string", list: "list",
            type(None): "None"}.get(type(plain), "value")


def _a(noun):
    return noun if noun == "None" else ("an " if noun[0] in "aeiou" else "a ") + noun


def explain_difference(expected, received):
    """Why `received` is not `expected`: one sentence, then (for strings) the lines that differ.

    The grader's feedback and the notebook's check cells both print this, so a
    student reads the same words in both places.
    """
    if type(received) is dict and OPAQUE in received:
        return f"returned an object of type {received[OPAQUE]}, not a plain value"
    if _kind(expected) != _kind(received):
        return f"expected {_a(_kind(expected))}, got {_a(_kind(received))}"
    if type(expected) is str and type(received) is str:
        return _string_difference(expected, received)
    if type(expected) is list and type(received) is list:
        if len(expected) != len(received):
            return f"wrong value: expected {len(expected)} item{'s' * (len(expected) != 1)}, got {len(received)}"
        # Only for a list of results (solutions, boards): a position is itself a
        # permutation, and "another order" would say nothing useful about it.
        # _same_items is quadratic: not worth seconds of the grader's time on a long list.
        if 0 < len(expected) <= 200 and all(type(item) is list for item in expected) \
                and _same_items(expected, received):
            return "wrong value: the right items, in another order"
    return "wrong value"


def _string_difference(expected, received):
    # Boards can differ invisibly (a trailing space, a final newline): name the
    # kind of difference and show the differing lines with repr, which shows
    # every space and \n.  A visible difference shows its first line only.
    want, got = expected.splitlines(keepends=True), received.splitlines(keepends=True)
    if "".join(expected.split()) == "".join(received.split()):
        if expected.rstrip("\n") == received.rstrip("\n"):
            whose = ("your string ends with a newline (\\n) the expected one does not have"
                     if len(received) > len(expected) else
                     "the expected string ends with a newline (\\n) yours does not have")
            head, shown = "only whitespace differs: " + whose, 3
        else:
            head, shown = "only whitespace differs (spaces or line breaks)", 3
    else:
        head, shown = "wrong value: the strings differ", 1
        if len(want) != len(got):
            head += f" (expected {len(want)} lines, got {len(got)})"
    lines = [head]
    differing = [i for i in range(max(len(want), len(got)))
                 if i >= len(want) or i >= len(got) or want[i] != got[i]]
    if len(want) > 1 or len(got) > 1 or shown == 3:
        for i in differing[:shown]:
            lines.append(f"line {i + 1}: expected {repr(want[i]) if i < len(want) else '(no such line)'}")
            lines.append(f"{' ' * len(str(i + 1))}       received {repr(got[i]) if i < len(got) else '(no such line)'}")
        if len(differing) > shown:
            lines.append(f"... and {len(differing) - shown} more differing line(s)")
    return "\n".join(lines)


def too_slow_message(seconds, baseline_seconds, options):
    """The message of a right answer that came too slowly (compare = "faster_than")."""
    return (f"too slow: right answer in {seconds:.3g} s, but it must be at least {options.get('speedup', 1):g} "
            f"times faster than {options['baseline']}, which took {baseline_seconds:.3g} s")


def withheld_message(missing, twin=False):
    """The message of a right answer that earns nothing because checks it requires did not pass.

    `missing` names those checks (a public call, or a hidden check's description).  The
    grader (grade/scoring.py), the notebook's check cells and every page use these words.
    `twin`: they are all hidden twins, the same check on inputs the public checks do not show.
    """
    names = " and ".join(missing)
    why = "an answer written for the public checks alone" if twin else "an answer that never changes"
    return (f"withheld: right answer, but this check counts only when {names} "
            f"{'also passes' if len(missing) == 1 else 'also pass'}, so that {why} earns nothing")


def is_withheld(message):
    return (message or "").startswith("withheld:")


def fix_first(function):
    """The hint of a check whose failure comes from `function`, which it calls and which fails its own checks."""
    return f"This check calls `{function}`, which fails its own checks: fix `{function}` first."


def raised_in(error, functions):
    """Which of `functions` (those a checked function calls) the error was raised in, or None.

    The innermost frame that is one of them: `is_solved` calling a `get_n` that is still a stub
    fails with get_n's NotImplementedError, and the student must be sent to `get_n`."""
    found = None
    for frame, _ in _traceback.walk_tb(error.__traceback__):
        if frame.f_code.co_name in functions:
            found = frame.f_code.co_name
    return found


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


_CHECKED = {}   # function -> (points earned, points checked), for check_total


def run_checks(cases, namespace=None, uses=()):
    """Run public cases in the notebook and print one verdict per case.

    `cases` is a list of dicts with keys call, expected (plain), points, hint
    and optionally compare / options / limit (the grader's time limit in seconds:
    a case that takes longer here is told so, as it would time out there) / requires
    (the checks that must pass too for this one to count: the call of another case of
    this cell, or a dict with call, expected and optionally compare / options) /
    hidden_requires (the descriptions of hidden checks it requires: the grader judges those).  `uses`
    names the tested functions the checked one calls, most basic first: when one of them
    failed its own check cell, a failing case points there instead of giving its hint.
    Nothing here raises.  The words are the grader's own (explain_difference,
    too_slow_message, withheld_message, fix_first), so the feedback page and this cell tell the
    same story.
    """
    namespace = namespace if namespace is not None else _sys._getframe(1).f_globals
    earned = total = 0.0
    cause = next((f for f in uses if f in _CHECKED and _CHECKED[f][0] < _CHECKED[f][1]), None)
    judged = [_judge(case, namespace, uses) for case in cases]
    verdicts = {case["call"]: result["passed"] for case, result in zip(cases, judged)}
    for case, result in zip(cases, judged):
        total += case["points"]
        passed, error, slow, received, seconds = (result[k] for k in ("passed", "error", "slow", "received",
                                                                        "seconds"))
        missing = [r if isinstance(r, str) else r["call"] for r in case.get("requires", ())
                   if not _required_passes(r, namespace, verdicts)]
        withheld = withheld_message(missing) if passed and missing else None
        earned += case["points"] if passed and not withheld else 0
        verdict = "✓ pass" if passed and not withheld else "✗ WITHHELD" if withheld else "✗ TOO SLOW" if slow \
            else "✗ FAIL"
        print(f"{verdict}  {case['call']}   ({case['points']:g} pt)")
        if slow or withheld:
            print(f"    {slow or withheld}")
        else:
            print(f"    expected: {_indent(show(case['expected']))}")
            print(f"    received: {_indent(error or show(received))}")
            if not passed and error is None:
                why = explain_difference(case["expected"], received)
                print("    why:      " + why.replace("\n", "\n              "))
        if result["timing"] and passed:
            print(f"    time: {result['timing']}")
        if case.get("limit") and error is None and seconds > case["limit"]:
            print(f"    time: {seconds:.3g} s here, over the grader's limit of {case['limit']:g} s for this case: "
                  "the grader would stop it (its limit counts CPU time; the reference takes far less)")
        # A function not written yet is its own problem, whatever it calls (as on the feedback page),
        # unless the error came out of one of the functions it calls.
        blame = result["raiser"] or (cause if cause and not (error or "").startswith("NotImplementedError")
                                     else None)
        if not passed and (blame or case.get("hint")):
            print(f"    hint: {fix_first(blame) if blame else case['hint']}")
    twins = list(dict.fromkeys(d for case in cases for d in case.get("hidden_requires", ())))
    if twins and earned:      # (nothing passed: nothing to qualify)
        print("the grader counts these checks only when the hidden checks they require pass too: "
              + "; ".join(f"\u201c{d}\u201d" for d in twins))
    function = cases[0]["call"].split("(")[0] if cases else ""
    _CHECKED[function] = (earned, total)
    print(f"{earned:g} / {total:g} points from these public checks")


def _judge(case, namespace, uses):
    """Run one case: whether it passed, and what its verdict lines need."""
    how, options = case.get("compare", "equal"), case.get("options") or {}
    received, error, slow, timing, seconds, raiser = None, None, None, "", 0.0, None
    try:
        received, seconds = best_time(lambda: to_plain(eval(case["call"], namespace)),  # noqa: S307
                                      options.get("repeat", 1))
        if how == "faster_than":
            _, baseline = best_time(lambda: eval(options["baseline"], namespace),  # noqa: S307
                                    options.get("repeat", 1))
            timing = f"{seconds:.3g} s (the baseline {options['baseline']}: {baseline:.3g} s)"
            if compare(case["expected"], received, how, options) and not timed_well(seconds, baseline, options):
                slow = too_slow_message(seconds, baseline, options)
    except Exception as exc:  # noqa: BLE001 - a check reports, it does not raise
        error = f"{type(exc).__name__}: {exc}"
        raiser = raised_in(exc, uses)
        if raiser:
            error += f"\n(raised in `{raiser}`, which this check calls)"
    passed = error is None and slow is None and compare(case["expected"], received, how, options)
    return dict(passed=passed, error=error, slow=slow, timing=timing, seconds=seconds, raiser=raiser,
                received=received)


def _required_passes(required, namespace, verdicts):
    """Does a required check pass?  A call of this cell has its verdict; another is judged by its value
    (a required check is never a speed case)."""
    call = required if isinstance(required, str) else required["call"]
    if call not in verdicts:
        try:
            received = to_plain(eval(call, namespace))  # noqa: S307
            verdicts[call] = compare(required["expected"], received, required.get("compare", "equal"),
                                     required.get("options"))
        except Exception:  # noqa: BLE001 - a check reports, it does not raise
            verdicts[call] = False
    return verdicts[call]


def check_total(public, hidden_points=0.0):
    """The grand total of every check cell run so far; `public` maps function -> its public points."""
    earned = 0.0
    for function, points in public.items():
        if function in _CHECKED:
            earned += _CHECKED[function][0]
            print(f"{function}: {_CHECKED[function][0]:g} / {points:g}")
        else:
            print(f"{function}: not checked yet (run its check cell) / {points:g}")
    print(f"Total: {earned:g} / {sum(public.values()):g} points from the public checks"
          + (f"; the grader adds hidden checks worth {hidden_points:g} more" if hidden_points else ""))


def _indent(text):
    return text.replace("\n", "\n              ") if "\n" in text else text
