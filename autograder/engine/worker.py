"""The sandboxed side: run a notebook's cells, then answer calls.

Runs in a process forked by zygote.py and shut into its sandbox by
isolation.py.  The student's stdout and stderr go nowhere; requests and
replies use their own pipes, one JSON object per line.  Every reply carries
plain values only (runtime.to_plain): the grader, in another process, decides
what they are worth.
"""

import json
import os
import time
import traceback

try:  # in the sandbox, runtime.py sits beside this file
    import runtime
except ImportError:  # imported from the package (the grader's own tests)
    from .. import runtime


def serve(shell, request_fd, reply_fd):
    requests = os.fdopen(request_fd, "r", encoding="utf-8")
    replies = os.fdopen(reply_fd, "w", encoding="utf-8")
    while True:
        try:
            line = requests.readline()
        except KeyboardInterrupt:
            continue  # a time-limit interrupt that arrived just after its reply
        if not line:
            return
        request = json.loads(line)
        if request["op"] == "cell":
            reply = run_cell(shell, request["code"])
        else:
            reply = call(shell, request)
        reply["id"] = request["id"]
        replies.write(json.dumps(reply) + "\n")
        replies.flush()


def make_shell():
    # IPython, not exec(): magics, `!` lines and display behave as in Jupyter.
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    config = Config()
    config.HistoryManager.enabled = False
    config.InteractiveShell.colors = "nocolor"
    config.InteractiveShell.xmode = "Plain"
    return InteractiveShell.instance(config=config)


def runtime_names():
    """What a notebook's check-helper cell defines, so a grader may skip that cell."""
    return {name: value for name, value in vars(runtime).items() if not name.startswith("_")}


def run_cell(shell, code):
    started = time.perf_counter()
    result = shell.run_cell(code, store_history=False)
    error = result.error_before_exec or result.error_in_exec
    return {
        "ok": error is None,
        "error": _describe(error) if error is not None else None,
        "interrupted": isinstance(error, KeyboardInterrupt),
        "seconds": time.perf_counter() - started,
    }


def call(shell, request):
    started = time.perf_counter()
    function = shell.user_ns.get(request["function"])
    if function is None:
        return {"ok": False, "seconds": 0.0,
                "error": f"NameError: {request['function']} is not defined in the notebook"}
    try:
        args = [decode(a) for a in request["args"]]
        kwargs = {k: decode(v) for k, v in request["kwargs"].items()}
        value = function(*args, **kwargs)
        plain = runtime.to_plain(value)
    except KeyboardInterrupt:
        return {"ok": False, "interrupted": True, "seconds": time.perf_counter() - started,
                "error": "interrupted: the time limit ran out"}
    except BaseException as error:  # noqa: BLE001 - SystemExit too: the student's bug, not ours
        return {"ok": False, "seconds": time.perf_counter() - started,
                "error": _describe(error), "traceback": _student_frames(error)}
    return {"ok": True, "value": plain, "seconds": time.perf_counter() - started}


def decode(value):
    """Inverse of calls.encode: tagged JSON back to arguments."""
    if type(value) is list:
        return [decode(v) for v in value]
    if type(value) is not dict:
        return value
    if "__tuple__" in value:
        return tuple(decode(v) for v in value["__tuple__"])
    if "__dict__" in value:
        return {_hashable(decode(k)): decode(v) for k, v in value["__dict__"]}
    if "__set__" in value:
        items = {_hashable(decode(v)) for v in value["__set__"]}
        return frozenset(items) if value["frozen"] else items
    if "__range__" in value:
        return range(*value["__range__"])
    if "__ndarray__" in value:
        import numpy

        return numpy.array(value["__ndarray__"], dtype=value["dtype"])
    raise ValueError(f"unknown argument encoding: {sorted(value)}")


def _hashable(value):
    return tuple(value) if type(value) is list else value


def _describe(error):
    try:
        text = str(error)
    except BaseException:  # noqa: BLE001 - a hostile __str__
        text = "<unprintable>"
    return f"{type(error).__name__}: {text}"[:2000]


def _student_frames(error):
    """Traceback lines from the student's cells only, not from this file."""
    here = os.path.abspath(__file__)
    frames = [f for f in traceback.extract_tb(error.__traceback__)
              if os.path.abspath(f.filename) != here]
    return "".join(traceback.format_list(frames[-5:]))[:4000]

