"""What each verb loads when it starts: every test and every instructor's command pays it (CI starts the grader's
CLI some 330 times).  canvasapi and requests are for Canvas's API, dulwich for Classroom clones and matplotlib for
charts: loaded where those are used, not at the start of every verb.  numpy too: only a case that builds an array
and an oversized notebook's bracket count need it, and it was a third of `autograder roster`'s start."""

import json
import subprocess
import sys

import pytest

HEAVY = ("canvasapi", "requests", "dulwich", "matplotlib", "numpy")

# The verbs' modules (cli/main.py's VERBS) and the heavy libraries each may load as it starts.
MAY_LOAD = {"grade": set(), "release": {"numpy"}, "roster": set(), "gradebook": set(), "feedback": set(),
            "report": {"numpy"}, "canvas": {"canvasapi", "requests"}}


@pytest.mark.parametrize("verb", sorted(MAY_LOAD))
def test_a_verb_loads_no_heavy_library_it_does_not_use_at_its_start(verb):
    script = (f"import importlib, json, sys\n"
              f"from autograder.cli.main import VERBS\n"
              f"module, _ = VERBS[{verb!r}].split(':')\n"
              f"importlib.import_module('autograder.cli.' + module)\n"
              f"print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))\n")
    loaded = json.loads(subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                                       check=True).stdout)
    assert set(loaded) <= MAY_LOAD[verb], f"`autograder {verb}` loads {loaded} as it starts"
