"""Each hand-in's code, kept in the gradebook, for `autograder similarity`.

A similarity run, now or semesters later (`--against` an old gradebook),
needs the code itself: downloads get deleted, and a path says nothing once
they are.  So grading keeps each hand-in's code cells (outputs and markdown
are never stored) and its helper .py files, keyed by the hand-in's sha256.
Texts are stored once however many hand-ins hold them (every notebook
carries the same check helpers).  Capped: a hand-in's code beyond
MAX_CHARACTERS is cut, and the cut is recorded.
"""

import hashlib

SCHEMA = """
CREATE TABLE IF NOT EXISTS code_texts (hash TEXT PRIMARY KEY, text TEXT NOT NULL);
-- One row per code cell (kind 'cell', name its number among the notebook's code cells) or helper file
-- (kind 'file', name its file name) of the hand-in whose sha256 it is.
CREATE TABLE IF NOT EXISTS handin_code (
    sha256 TEXT NOT NULL, position INTEGER NOT NULL, kind TEXT NOT NULL, name TEXT NOT NULL,
    hash TEXT NOT NULL REFERENCES code_texts(hash), cut INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (sha256, position));
"""
MAX_CHARACTERS = 1_000_000      # of one hand-in's code: a real one has a few thousand (plus the helpers)


def code_pieces(cells, files=None):
    """((kind, name, text, cut), ...) of a hand-in: its code cells by number, then its .py files by name."""
    pieces = [("cell", str(number), cell.source) for number, cell in enumerate(cells, 1)]
    for name, data in sorted((files or {}).items()):
        pieces.append(("file", name, data.decode("utf-8", "replace") if isinstance(data, bytes) else str(data)))
    out, left = [], MAX_CHARACTERS
    for kind, name, text in pieces:
        kept = text[:max(left, 0)]
        left -= len(kept)
        out.append((kind, name, kept, len(kept) < len(text)))
    return tuple(out)


def store_code(db, sha256, pieces, clean):
    """Keep `pieces` (code_pieces) for the hand-in `sha256`, unless they are kept already.

    `clean` makes a text storable (store.text: no lone surrogate or NUL).  Call inside a transaction."""
    if not pieces or db.execute("SELECT 1 FROM handin_code WHERE sha256 = ? LIMIT 1", (sha256,)).fetchone():
        return
    for position, (kind, name, text, cut) in enumerate(pieces):
        text = clean(text)
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        db.execute("INSERT OR IGNORE INTO code_texts VALUES (?, ?)", (digest, text))
        db.execute("INSERT INTO handin_code VALUES (?, ?, ?, ?, ?, ?)",
                   (sha256, position, kind, clean(name), digest, int(cut)))


def has_code(db, sha256):
    return db.execute("SELECT 1 FROM handin_code WHERE sha256 = ? LIMIT 1", (sha256,)).fetchone() is not None


def read_code(db, sha256):
    """The stored pieces of a hand-in, in order: ((kind, name, text, cut), ...); () when none were kept."""
    return tuple(db.execute(
        "SELECT h.kind, h.name, t.text, h.cut FROM handin_code h JOIN code_texts t ON t.hash = h.hash "
        "WHERE h.sha256 = ? ORDER BY h.position", (sha256,)).fetchall())
