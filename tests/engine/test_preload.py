"""What the zygote imports once for a class: the modules that pay for it (engine/sandbox.py, preload_for)."""

from autograder.engine.sandbox import DEFAULT_PRELOAD, preload_for


def test_a_module_is_preloaded_for_a_class_only_when_two_hand_ins_name_it():
    sympy_user = "import numpy as np\nfrom sympy.utilities.iterables import multiset_permutations\n"
    plain = "def get_n(pos):\n    return len(pos)\n"
    numpy_user = "import numpy\n"
    assert preload_for([sympy_user]) == ()                          # one hand-in imports in its own worker
    assert preload_for([sympy_user, plain, sympy_user]) == DEFAULT_PRELOAD
    assert preload_for([sympy_user, numpy_user]) == ("numpy",)
    assert preload_for([plain] * 30) == ()
    # A word, not a part of one: a hand-in's own `nsympy` or `numpyish` names no trusted module.
    assert preload_for(["nsympy = 1\nnumpyish = 2\n"] * 2) == ()
