"""The sandboxed runner against code that misbehaves."""

import time

import pytest

from autograder import runner
from autograder.calls import parse_call
from autograder.sandbox import Limits, Worker


def run(cells, *calls, timeout=2.0, cell_timeout=3.0, **kwargs):
    encoded = [parse_call(c).encoded() for c in calls]
    return runner.run(cells, encoded, [timeout] * len(encoded), cell_timeout, **kwargs)


def test_values_come_back_plain():
    outcome = run(["import numpy as np\ndef f(x):\n    return np.int64(len(x)), (1, 2)"], "f([1, 2, 3])")
    assert outcome.calls[0].status == "ok"
    assert outcome.calls[0].value == [3, [1, 2]]


def test_ipython_semantics_magics_shell_lines_and_display():
    cells = ["%time x = 1", "!true", "from IPython.display import display\ndisplay('hi')\nx + 1",
             "def f():\n    return x"]
    outcome = run(cells, "f()")
    assert outcome.cell_errors == []
    assert outcome.calls[0].value == 1


def test_failing_cells_do_not_stop_the_notebook():
    outcome = run(["1 / 0", "def f():\n    return 'still here'", "undefined_name"], "f()")
    assert [i for i, _ in outcome.cell_errors] == [0, 2]
    assert "ZeroDivisionError" in outcome.cell_errors[0][1]
    assert outcome.calls[0].value == "still here"


def test_printing_and_stdin_do_not_matter():
    cells = ["import sys\nprint('x' * 100000)\nprint('noise', file=sys.stderr)",
             "try:\n    input('name? ')\nexcept EOFError:\n    pass",
             "def f():\n    print('chatty')\n    return 5"]
    outcome = run(cells, "f()")
    assert outcome.calls[0].value == 5


def test_an_infinite_loop_is_interrupted_and_grading_goes_on():
    cells = ["def slow():\n    while True:\n        pass", "def fast():\n    return 1"]
    outcome = run(cells, "slow()", "fast()", timeout=0.5)
    assert [c.status for c in outcome.calls] == ["timeout", "ok"]
    assert outcome.restarts == 0


def test_code_that_ignores_interrupts_is_killed_and_the_worker_restarted():
    cells = ["import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)",
             "def stubborn():\n    while True:\n        pass",
             "def fine():\n    return 2"]
    outcome = run(cells, "stubborn()", "fine()", timeout=0.5)
    assert [c.status for c in outcome.calls] == ["timeout", "ok"]
    assert outcome.restarts == 1


def test_a_top_level_loop_is_stopped_and_later_cells_still_run():
    outcome = run(["while True:\n    pass", "def f():\n    return 3"], "f()", cell_timeout=0.5)
    assert outcome.calls[0].value == 3
    assert outcome.cell_errors[0][0] == 0


def test_a_cell_that_kills_the_interpreter_is_skipped_on_restart():
    outcome = run(["def f():\n    return 4", "import os\nos._exit(3)", "def g():\n    return 5"],
                  "f()", "g()")
    assert [c.value for c in outcome.calls] == [4, 5]
    assert outcome.cells_skipped == [1]


def test_exiting_from_a_call_is_that_case_failing():
    cells = ["import os, sys\ndef bye():\n    sys.exit(0)\ndef gone():\n    os._exit(0)\ndef ok():\n    return 1"]
    outcome = run(cells, "bye()", "gone()", "ok()")
    assert [c.status for c in outcome.calls] == ["error", "crashed", "ok"]


def test_memory_is_limited():
    cells = ["def hog():\n    return len(bytearray(4 * 1024 ** 3))"]
    outcome = run(cells, "hog()", limits=Limits(memory_mb=1024))
    assert outcome.calls[0].status in ("error", "crashed")
    assert "MemoryError" in outcome.calls[0].message or outcome.calls[0].status == "crashed"


def test_custom_objects_come_back_opaque():
    cells = ["class Liar:\n    def __eq__(self, other):\n        return True\ndef f():\n    return Liar()"]
    outcome = run(cells, "f()")
    assert outcome.calls[0].value == {"__opaque__": "__main__.Liar"}


def test_the_worker_starts_in_a_private_folder_with_only_its_own_files():
    with Worker() as worker:
        reply = worker.request({"op": "cell", "code": (
            "import os, sys\n"
            "assert os.getcwd().endswith('/home'), os.getcwd()\n"
            "assert sorted(os.listdir('..')) == ['home', 'runtime.py', 'worker.py'], os.listdir('..')\n"
            "assert 'PYTHONPATH' not in os.environ and sys.flags.isolated")}, 10)
        assert reply["ok"], reply


def test_children_of_the_worker_die_with_it(tmp_path):
    marker = tmp_path / "alive"
    code = ("import subprocess, sys\n"
            f"subprocess.Popen([sys.executable, '-c', 'import time, pathlib\\nwhile True:\\n"
            f"    pathlib.Path(r\"{marker}\").touch(); time.sleep(0.05)'])")
    with Worker() as worker:
        assert worker.request({"op": "cell", "code": code}, 10)["ok"]
        for _ in range(100):
            if marker.exists():
                break
            time.sleep(0.05)
        assert marker.exists(), "the child process never started"
    marker.unlink()
    time.sleep(0.5)
    assert not marker.exists(), "a process started by the notebook outlived its worker"
