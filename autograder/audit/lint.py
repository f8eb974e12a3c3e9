"""Weak spots of a case table that need no mutant to see.

Static: a function tested at one input or at one size, a hidden case that
repeats a public input, a case whose expected value is what a constant stub
returns.  From runs: cases that flip between runs of the reference, and
cases a constant stub passes although they need the function.
"""

from dataclasses import dataclass

# The constant answers a function may be replaced by (the audit's stubs): what no code earns.
CONSTANTS = (False, True, 0, "", None, [])
TIGHT = 0.5  # a reference using more than this share of a case's time limit leaves little room


@dataclass(frozen=True)
class Finding:
    kind: str       # one-input, one-size, hidden-repeats-public, constant-expected, flips, stub-passes, ...
    function: str
    message: str


def same_plain(a, b):
    """Equal and of the same JSON kind (False is not 0, as the grader's rules say)."""
    return type(a) is type(b) and a == b


def size(args):
    """A case's size: the smallest board its input fits on (longest sequence, or largest number + 1)."""
    found = [0]

    def walk(value):
        if isinstance(value, bool) or value is None or isinstance(value, (str, float)):
            return
        if isinstance(value, int):
            found.append(value + 1)
            return
        try:
            items = list(value)
        except TypeError:
            return
        found.append(len(items))
        for item in items:
            walk(item)

    walk(list(args))
    found[1:2] = []  # the argument list itself is not a size
    return max(found)


def static_findings(assignment, expected):
    findings = []
    for function in assignment.functions():
        cases = [c for c in assignment.cases if c.function == function]
        inputs = {repr(c.call.encoded()) for c in cases}
        if len(inputs) == 1:
            findings.append(Finding("one-input", function,
                                    f"{function} is tested at one input only ({cases[0].call.text})"))
        sizes = {size(c.call.args) for c in cases}
        if len(inputs) > 1 and len(sizes) == 1:
            findings.append(Finding("one-size", function,
                                    f"every case of {function} has size {sizes.pop()}: try another board size"))
        public = {repr(c.call.encoded()): c for c in cases if not c.hidden}
        for case in cases:
            if case.hidden and repr(case.call.encoded()) in public:
                findings.append(Finding("hidden-repeats-public", function,
                                        f"hidden case {case.name!r} repeats the public input {case.call.text}"))
    for case in assignment.cases:
        for constant in CONSTANTS:
            if same_plain(expected[case.name], constant):
                findings.append(Finding("constant-expected", case.function,
                                        f"{case.call.text} expects {constant!r}, what a stub returning "
                                        f"{constant!r} gives"))
    return findings


def flips(assignment, expected, reference_runs):
    """Cases whose value or verdict differs between runs of the reference, or from expected.json."""
    findings = []
    for index, case in enumerate(assignment.cases):
        results = [run[index] for run in reference_runs]
        statuses = {r.status for r in results}
        if statuses != {"passed"}:
            how = ", ".join(sorted(statuses))
            findings.append(Finding("flips", case.function,
                                    f"{case.call.text}: the reference itself got {how} over {len(results)} runs "
                                    f"({next(r.message for r in results if r.status != 'passed')}); "
                                    "if it always fails, expected.json is stale: run `autograder build`"))
        elif len({r.received for r in results}) > 1:
            findings.append(Finding("flips", case.function,
                                    f"{case.call.text}: the reference returned different values in different runs"))
        limit = case.timeout or assignment.case_timeout
        slowest = max(r.seconds for r in results)
        if slowest > TIGHT * limit:
            findings.append(Finding("tight-limit", case.function,
                                    f"{case.call.text}: the reference took up to {slowest:.2g} s of its {limit:g} s "
                                    "limit here; on a busy grading machine right answers may time out"))
    return findings
