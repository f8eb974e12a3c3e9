"""What the zygote imports once for a run: the trusted modules a hand-in names (engine/sandbox.py, preload_for)."""

from autograder.engine.sandbox import DEFAULT_PRELOAD, preload_for


def test_a_module_is_preloaded_when_any_hand_in_names_it_and_only_then():
    sympy_user = "import numpy as np\nfrom sympy.utilities.iterables import multiset_permutations\n"
    plain = "def get_n(pos):\n    return len(pos)\n"
    numpy_user = "import numpy\n"
    # One hand-in alone (as Gradescope grades): imported in its worker, the import would be charged to a case.
    assert preload_for([sympy_user]) == DEFAULT_PRELOAD
    assert preload_for([plain, sympy_user, plain]) == DEFAULT_PRELOAD
    assert preload_for([plain, numpy_user]) == ("numpy",)
    assert preload_for([plain] * 30) == ()
    assert preload_for([]) == ()
    # A word, not a part of one: a hand-in's own `nsympy` or `numpyish` names no trusted module.
    assert preload_for(["nsympy = 1\nnumpyish = 2\n"]) == ()
