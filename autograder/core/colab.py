"""What Colab has, and which of it the course offers a notebook, with the reason for each.

Students write their notebooks in Colab, which preinstalls hundreds of packages; a notebook that imports one of
them runs there, and must not lose points where it is graded.  The course cannot offer all of them (PyTorch,
TensorFlow and JAX alone are gigabytes), so it offers what a student of these assignments plausibly reaches for,
each pinned once in pyproject.toml (the grader's dependencies and the `student` group, which
requirements-student.txt and environment.yml mirror; tests/test_environment.py keeps them equal to OFFERED), and
installed beside the grader, so every worker can import them.  The otter and nbgrader exports ask for the same
(export/tools.py).  None is imported before a notebook asks for it: the sandbox starts as fast as before, and a
notebook pays for what it imports (docs/engines.md has the figures).

Colab's own list (colab_packages(), from colab_packages.txt) is a snapshot, dated: a missing module's feedback says
whether Colab has it, and what the course offers instead (feedback/explain.py).
"""

import functools
import re
from importlib import resources
from types import MappingProxyType

# The snapshot of Colab's list: its date and where it comes from (tests/colab_pip_freeze.txt has it whole).
COLAB_AS_OF = "2026-08-19"

# What the course offers besides Python's standard library: distribution name -> why.
OFFERED = MappingProxyType({
    "numpy": "arrays; the course's own checks compare numpy values",
    "sympy": "sympy.utilities.iterables (permutations, multiset partitions) in counting solutions",
    "matplotlib": "drawing a board",
    "pandas": "tables of counts and timings",
    "tqdm": "progress bars over a long search",
    "ipywidgets": "sliders for n in an interactive cell",
    "scipy": "scipy.special.comb and perm, to count placements (uninformed-search)",
    "numba": "@njit on a bitmask counter (bitwise-queens), the usual way to make Python loops fast",
    "networkx": "a board's squares as a graph (attacks, independent sets), and search helpers",
    "more-itertools": "distinct_permutations and other iterators for enumerating boards",
    "seaborn": "a board or a table of counts drawn as a heat map",
})

# What Colab has that the course leaves out, and why (the feedback names the reason when a notebook imports one).
LEFT_OUT = MappingProxyType({
    "joblib": "its default backend starts new Python processes that need /dev/shm by name; multiprocessing.Pool "
              "does the same work and runs in the grader",
    "torch": "gigabytes, and none of the assignments needs a neural network",
    "tensorflow": "gigabytes, and none of the assignments needs a neural network",
    "jax": "gigabytes, and none of the assignments needs a neural network",
    "pulp": "an integer-programming solver answers the puzzle instead of the search the assignments teach",
    "cvxpy": "an optimisation solver answers the puzzle instead of the search the assignments teach",
    "cython": "it compiles C at run time, which needs a compiler the grader's sandbox does not offer",
})

# Import names that are not their distribution's name, for the packages a notebook most often imports.
_IMPORT_NAMES = MappingProxyType({
    "more_itertools": "more-itertools", "sklearn": "scikit-learn", "skimage": "scikit-image", "cv2": "opencv-python",
    "PIL": "pillow", "yaml": "pyyaml", "bs4": "beautifulsoup4", "dateutil": "python-dateutil", "Bio": "biopython",
    "OpenGL": "pyopengl", "google.colab": "google-colab", "tensorflow_datasets": "tensorflow-datasets",
    "sentence_transformers": "sentence-transformers", "Crypto": "pycryptodome", "docx": "python-docx",
    "pptx": "python-pptx", "igraph": "igraph", "attr": "attrs", "jwt": "pyjwt", "serial": "pyserial",
})


def normalise(name):
    """A distribution's name as PyPI compares them (PEP 503): `More_Itertools` is `more-itertools`."""
    return re.sub(r"[-_.]+", "-", name).lower()


@functools.cache
def colab_packages():
    """The names Colab's snapshot lists, normalised."""
    text = resources.files(__package__).joinpath("colab_packages.txt").read_text(encoding="utf-8")
    return frozenset(normalise(line.strip()) for line in text.splitlines() if line.strip() and
                     not line.startswith("#"))


def distribution(module):
    """The distribution a top-level module (or `google.colab`) most likely comes from, normalised."""
    return normalise(_IMPORT_NAMES.get(module, module))


def offered_imports():
    """The offered packages as a notebook imports them: `import more_itertools`."""
    return tuple(name.replace("-", "_") for name in OFFERED)


def colab_has(module):
    """Does Colab's snapshot list the package `module` comes from?"""
    return distribution(module) in colab_packages()


def why_left_out(module):
    return LEFT_OUT.get(distribution(module), "")
