"""Winnowed fingerprints of one piece of code, on copydetect's tokens and its winnowing.

copydetect (the MOSS algorithm: Schleimer, Wilkerson and Aiken, "Winnowing:
local algorithms for document fingerprinting", SIGMOD 2003) gives us the
three steps that matter:

* `filter_code`: Pygments' Python tokens, with every name a student chose
  written `V` (variables, attributes), `F` (functions) or `O` (classes),
  strings `S`, comments and whitespace dropped.  Renaming variables or
  reformatting changes nothing; builtins (`len`, `range`) and keywords stay.
* `winnow`: of every window of consecutive k-gram hashes, the smallest.
* `get_copied_slices`: matched k-grams back to spans of the original text.

What we do ourselves, and why.  copydetect hashes each k-gram with Python's
`hash()`, which is salted per process (PYTHONHASHSEED): the fingerprints it
keeps, and so every score, would change from one run to the next.  We hash
the same k-grams with BLAKE2b instead and hand the hashes to its `winnow`.
And copydetect compares two files at a time and weighs every fingerprint
the same; ranking.py weighs them by how many students share them, which
needs the whole class's fingerprints at once.
"""

import hashlib
import importlib
import importlib.util
import sys
from dataclasses import dataclass

import numpy as np


def _copydetect_utils():
    """copydetect.utils (its tokens, winnowing and slices) without running the package's __init__, which imports
    copydetect's own HTML report and with it matplotlib.pyplot: 0.8 s of CPU that every `autograder similarity`
    paid at start-up for a plot it never draws (issue 43 holds `--json` to 10% over the comparison).  The package
    stands in unexecuted while its submodules load, and they all leave sys.modules after (the functions keep
    what they need): a later `import copydetect` is the usual one."""
    if "copydetect" in sys.modules:
        return importlib.import_module("copydetect.utils")
    spec = importlib.util.find_spec("copydetect")
    sys.modules["copydetect"] = importlib.util.module_from_spec(spec)
    try:
        return importlib.import_module("copydetect.utils")
    finally:
        for name in [n for n in sys.modules if n == "copydetect" or n.startswith("copydetect.")]:
            del sys.modules[name]


_utils = _copydetect_utils()
filter_code, get_copied_slices, winnow = _utils.filter_code, _utils.get_copied_slices, _utils.winnow

NOISE = 20          # k: characters of filtered code in a fingerprint (a short statement, names folded)
GUARANTEE = 24      # any match this long is always found (window = GUARANTEE - NOISE + 1)
MAX_PIECE = 100_000  # characters of one cell or file given to the tokenizer; past it, the piece is cut


@dataclass(frozen=True)
class Piece:
    """One code cell or helper file of a hand-in, fingerprinted."""
    kind: str               # "cell" or "file"
    name: str               # the cell's number among the notebook's code cells, or the file's name
    text: str               # as the student wrote it (cut at MAX_PIECE)
    hashes: np.ndarray      # winnowed fingerprint hashes (int64)
    positions: np.ndarray   # where each starts in the filtered code
    offsets: np.ndarray     # copydetect's map from filtered positions back to `text`

    def spans(self, shared):
        """[(start, end)] of `text` covered by the fingerprints in the set `shared`."""
        index = np.array([p for h, p in zip(self.hashes, self.positions) if int(h) in shared], dtype=np.int64)
        if not len(index):
            return []
        slices = get_copied_slices(index, NOISE)
        if len(self.offsets):
            shift = self.offsets[:, 1][np.clip(np.searchsorted(self.offsets[:, 0], slices), 0,
                                               self.offsets.shape[0] - 1)]
            slices = slices + shift
        return [(int(a), int(b)) for a, b in zip(slices[0], slices[1])]


def fingerprint(kind, name, text):
    text = text[:MAX_PIECE]
    filtered, offsets = filter_code(text, "cell.py", "python")
    hashes = _kgram_hashes(filtered)
    if len(hashes):
        selected, positions = winnow(hashes, GUARANTEE - NOISE + 1, remove_duplicates=False)
    else:
        selected, positions = hashes, np.array([], dtype=np.int64)
    return Piece(kind, name, text, np.asarray(selected, dtype=np.int64), np.asarray(positions, dtype=np.int64),
                 offsets)


def _kgram_hashes(filtered):
    """A stable 63-bit hash of every k-gram of the filtered code (copydetect's hashed_kgrams, unsalted)."""
    grams = [filtered[i:i + NOISE] for i in range(len(filtered) - NOISE + 1)]
    return np.array([int.from_bytes(hashlib.blake2b(g.encode("utf-8", "replace"), digest_size=8).digest(),
                                    "little") >> 1 for g in grams], dtype=np.int64)
