"""An assignment's submissions read from Canvas's API into a folder `grade` reads (`autograder canvas pull`).

The folder is what Canvas's *Download Submissions* zip holds, unpacked, with what the zip leaves out kept
beside it:

  <name>[_LATE]_<user id>_<attachment id>_<file>   each attachment of each student's latest attempt, whatever
                                                    its type, named as lib/content_zipper.rb names it (<name>
                                                    the sortable name as Canvas writes it there; _LATE when
                                                    Canvas says late), so intake reads it as it reads the zip
  <name>[_LATE]_<user id>_text.html, _link.html     a text or URL entry
  .canvas_pull.json                                 Canvas's own record of every submission: submitted_at,
                                                    attempt, late, seconds_late, missing, excused, its state,
                                                    and each attachment (its id, name, size, what was done)

What is Canvas's, from its Submissions API (`GET /api/v1/courses/:course_id/assignments/:id/submissions`,
100 to a page): a student's submission carries its latest attempt's attachments, each with an `id`, a
`display_name`, a `size` and a `url` to download it.  What limits a pull, as intake limits a zip
(intake/zips.py, budget.py): each file at most MAX_ENTRY_BYTES, the class at most budget.CLASS's bytes and
files.  Every attachment is downloaded, whatever its name says: a file is read by what it holds, the same whichever
path it came by (Safari's `n-queens.ipynb.txt` is a notebook, a UTF-16 one is read as UTF-16, a PDF or a
Quarto document gets the row it gets from the zip), and only its bytes can say so.

A pull is resumable and incremental: a file is downloaded to a hidden part-file and renamed when whole, the
record rewritten after each; a later pull downloads only attachments it does not have whole (an attachment
id never changes its bytes; the record says which were fetched, so an earlier version's empty stand-in of a
PDF is fetched now), and removes the files of an attempt a newer one replaced.

`apply_pulled_times` (called by collect.py) gives each hand-in from such a folder Canvas's `submitted_at` as
its time, and a note saying so and which attempt it is.
"""

import json
import os
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path, PurePosixPath

from . import files, identity, zips
from .assemble import NOTE
from .budget import CLASS, UPLOAD
from .canvas_errors import CanvasError

MANIFEST = ".canvas_pull.json"
FORMAT = 1
TIME_SOURCE = "Canvas's submitted_at (canvas pull)"
MAX_MANIFEST_BYTES = 64 * 1024 * 1024
_PART = ".download-{}.part"


class PullError(CanvasError):
    """The pull cannot go on (its folder, its record)."""


@dataclass
class Pulled:
    """What a pull did, for people."""
    folder: Path
    assignment: dict                                  # Canvas's: id, name, due_at, points_possible, post_manually
    submissions: dict                                 # {user id: Canvas's record of their submission}
    downloaded: list = field(default_factory=list)   # file names fetched by this pull
    kept: list = field(default_factory=list)         # file names a pull had fetched before
    removed: list = field(default_factory=list)      # files of replaced attempts
    refused: list = field(default_factory=list)      # (user id, why): a file not fetched, by the limits
    requests: int = 0


class PullEvents:
    """What a pull tells a person as it goes (a progress bar); every method may stay as it is."""

    def downloading(self, total):
        """`total` files are to be fetched; returns a context manager."""
        return _Nothing()

    def fetched(self, name):
        """One file is in (or refused)."""


class _Nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def pull_submissions(connection, canvas_assignment, folder, names, events=None):
    """Bring the latest attempt of every submission of `canvas_assignment` (a canvasapi Assignment) into
    `folder`; `names`: {user id: sortable name} (the roster's), for the files' names.  Returns Pulled."""
    events = events or PullEvents()
    folder = Path(folder)
    old = _prepare(folder)
    found = connection.pages("listing the assignment's submissions", canvas_assignment.get_submissions())
    record = {"format": FORMAT, "pulled_at": datetime.now(timezone.utc).replace(microsecond=0).isoformat(),
              "canvas": {"url": connection.url, "course": connection.course_id,
                         "assignment": _assignment_record(canvas_assignment)},
              "submissions": {}}
    pulled = Pulled(folder, record["canvas"]["assignment"], record["submissions"])
    wanted, total_bytes = {}, 0
    for submission in sorted(found, key=lambda s: int(getattr(s, "user_id", 0) or 0)):
        entry = _submission_record(submission)
        if entry is None:
            continue
        record["submissions"][entry["user_id"]] = entry
        stem = identity.canvas_name(names.get(entry["user_id"], "")) + ("_LATE" if entry["late"] else "")
        upload_files, upload_bytes = 0, 0            # one student's attachments: an upload's limits (budget.py)
        for attachment in entry["attachments"]:
            name = file_name(stem, entry["user_id"], attachment["id"], attachment["name"])
            attachment["file"] = name
            why = (_refusal(attachment, len(wanted), total_bytes)
                   or _upload_refusal(attachment, upload_files, upload_bytes))
            if why:
                attachment["file"], attachment["why"], attachment["status"] = "", why, "too-large"
                pulled.refused.append((entry["user_id"], f"{attachment['name']}: {why}"))
                continue
            total_bytes += attachment["size"] or 0
            upload_files, upload_bytes = upload_files + 1, upload_bytes + (attachment["size"] or 0)
            wanted[name] = (attachment, getattr(submission, "attachments", [])[attachment["index"]], entry)
        if entry["body"] is not None:
            wanted[f"{stem}_{entry['user_id']}_{entry['body']}.html"] = (None, None, entry)
    _remove_replaced(folder, wanted, old, pulled)
    todo = [name for name, (attachment, _, _) in wanted.items() if not _have(folder / name, attachment, old)]
    for name in set(wanted) - set(todo):
        if wanted[name][0] is not None:
            wanted[name][0]["fetched"] = old[name]         # the record keeps saying it is whole
    pulled.kept = sorted(set(wanted) - set(todo))
    _write(folder, record)
    with events.downloading(len(todo)):
        for name in todo:
            _fetch(connection, folder, name, *wanted[name], pulled)
            _write(folder, record)
            events.fetched(name)
    pulled.requests = connection.pacing.requests
    return pulled


def _assignment_record(assignment):
    return {"id": str(assignment.id), "name": str(getattr(assignment, "name", "") or ""),
            "due_at": getattr(assignment, "due_at", None), "points_possible": getattr(assignment, "points_possible", None),
            "post_manually": bool(getattr(assignment, "post_manually", False))}


def _submission_record(submission):
    """Canvas's record of one submission, as kept in the manifest (None: no user to name)."""
    user_id = str(getattr(submission, "user_id", "") or "")
    if not user_id.isdigit():
        return None
    attachments = []
    for index, item in enumerate(getattr(submission, "attachments", None) or []):
        item = item if isinstance(item, dict) else vars(item)
        if str(item.get("id", "")).isdigit():
            size = item.get("size")
            attachments.append({"id": str(item["id"]), "index": index,
                                "name": str(item.get("display_name") or item.get("filename") or "file"),
                                "size": size if isinstance(size, int) and size >= 0 else None})
    kind = getattr(submission, "submission_type", None)
    body = {"online_text_entry": "text", "online_url": "link"}.get(kind) if not attachments else None
    return {"user_id": user_id, "submission_id": str(getattr(submission, "id", "")),
            "attempt": getattr(submission, "attempt", None), "submitted_at": getattr(submission, "submitted_at", None),
            "late": bool(getattr(submission, "late", False)), "seconds_late": getattr(submission, "seconds_late", 0),
            "missing": bool(getattr(submission, "missing", False)),
            "excused": bool(getattr(submission, "excused", False)),
            "workflow_state": getattr(submission, "workflow_state", None), "submission_type": kind,
            "cached_due_date": getattr(submission, "cached_due_date", None), "body": body,
            "attachments": attachments}


def file_name(stem, user_id, attachment_id, original):
    """The attachment's name in the folder: Canvas's zip name, its file part made safe for a file system
    (no `/`, NUL or control character; at most zips.MAX_COMPONENT_BYTES bytes, its suffix kept)."""
    head = f"{stem}_{user_id}_{attachment_id}_"
    clean = "".join("_" if c in "/\\\0" or ord(c) < 32 or ord(c) == 127 else c for c in original).strip() or "file"
    if clean.startswith("."):
        clean = "_" + clean[1:]
    suffix = PurePosixPath(clean).suffix if len(PurePosixPath(clean).suffix) <= 16 else ""
    room = zips.MAX_COMPONENT_BYTES - len(head.encode()) - len(suffix.encode())
    stem_part = clean[:len(clean) - len(suffix)] if suffix else clean
    while len(stem_part.encode()) > max(room, 1):
        stem_part = stem_part[:-1]
    return head + (stem_part or "file") + suffix


def _refusal(attachment, count, total_bytes):
    if count >= CLASS.files:
        return f"more than {CLASS.files:,} files in the class, the most one class run may unpack"
    size = attachment["size"]
    if size is not None and size > zips.MAX_ENTRY_BYTES:
        return f"{size // (1024 * 1024)} MB, over the {zips.MAX_ENTRY_BYTES // (1024 * 1024)} MB a hand-in's file may be"
    if size is not None and total_bytes + size > CLASS.bytes:
        return f"the class's files pass {CLASS.bytes // (1024 ** 3)} GB, the most one class run may unpack"
    return ""


def _upload_refusal(attachment, count, total_bytes):
    # Canvas lets a student attach many files to one attempt: together they are one upload, as a zip's are.
    if count >= UPLOAD.files:
        return f"more than {UPLOAD.files:,} files in one submission, the most one upload may unpack"
    size = attachment["size"]
    if size is not None and total_bytes + size > UPLOAD.bytes:
        return f"this submission's files pass {UPLOAD.bytes // (1024 * 1024)} MB, the most one upload may unpack"
    return ""


def _have(path, attachment, old):
    """Fetched by an earlier pull, whole: the same attachment (its id is in the name), recorded as fetched,
    of the size Canvas gives (or, when it gives none, of the size that pull wrote)."""
    if attachment is None:
        return False               # a text or URL entry's stand-in is cheap: written again
    fetched = old.get(path.name)
    if not isinstance(fetched, int) or isinstance(fetched, bool) or not files.regular(path):
        return False
    return path.stat().st_size == (fetched if attachment["size"] is None else attachment["size"]) == fetched


def _fetch(connection, folder, name, attachment, canvas_file, entry, pulled):
    target = folder / name
    if attachment is None:                      # a text or URL entry: its name says what it was
        target.write_bytes(b"")
        return
    item = canvas_file if isinstance(canvas_file, dict) else vars(canvas_file)
    url = str(item.get("url") or "")
    if not url.startswith(("https://", "http://")):
        attachment["file"], attachment["why"] = "", "Canvas gave no link to download it"
        pulled.refused.append((entry["user_id"], f"{attachment['name']}: {attachment['why']}"))
        return
    part = folder / _PART.format(attachment["id"])
    try:
        size = connection.download(url, part, zips.MAX_ENTRY_BYTES,
                                   f"downloading {attachment['name'][:60]!r} of Canvas user {entry['user_id']}")
    except CanvasError as error:
        if error.status in (401, 0) or error.status >= 500:
            raise                                # the token, or Canvas's trouble: a later pull goes on from here
        attachment["file"], attachment["why"] = "", str(error)
        attachment["status"] = "too-large" if error.status == 413 else "unreadable"
        pulled.refused.append((entry["user_id"], str(error)))
        return
    os.replace(part, target)
    attachment["fetched"] = size
    pulled.downloaded.append(name)


def _prepare(folder):
    """The folder made (private, as grades are) or checked; {name: bytes} of the files an earlier pull wrote
    there whole (None: a name it wrote without fetching, as versions before every file was fetched did)."""
    if folder.exists() and not folder.is_dir():
        raise PullError(f"{folder} is not a folder")
    if folder.is_dir() and any(folder.iterdir()) and not files.regular(folder / MANIFEST):
        raise PullError(f"{folder} holds files a Canvas pull did not write: give an empty folder, or the folder "
                        "of an earlier pull of this assignment")
    folder.mkdir(parents=True, exist_ok=True)
    for part in folder.glob(".download-*.part"):           # a pull stopped half way through a file
        part.unlink()
    old = read_manifest(folder) if files.regular(folder / MANIFEST) else {}
    return {a["file"]: a.get("fetched") for s in old.get("submissions", {}).values() if isinstance(s, dict)
            for a in s.get("attachments", []) if isinstance(a, dict) and a.get("file") and isinstance(a["file"], str)}


def _remove_replaced(folder, wanted, old, pulled):
    """Files of attempts Canvas no longer holds as the latest (the zip would not have them either)."""
    for path in sorted(folder.iterdir()):
        if path.name.startswith(".") or path.name in wanted or not path.is_file():
            continue
        path.unlink()
        pulled.removed.append(path.name)


def _write(folder, record):
    temporary = folder / f"{MANIFEST}.tmp"
    temporary.write_text(json.dumps(record, indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(temporary, folder / MANIFEST)


def read_manifest(folder):
    """A pull's record, checked to be one; PullError when it is not."""
    path = Path(folder) / MANIFEST
    try:
        data = json.loads(files.read_capped(path, limit=MAX_MANIFEST_BYTES).decode("utf-8"))
    except (files.UnsafeFile, UnicodeDecodeError, ValueError, RecursionError) as error:
        raise PullError(f"{path}: not a Canvas pull's record ({str(error)[:100]}): pull again into an empty "
                        "folder") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("submissions"), dict):
        raise PullError(f"{path}: not a Canvas pull's record of this version: pull again into an empty folder")
    return data


# --- read by intake ---------------------------------------------------------------------------------

def apply_pulled_times(paths, intake, make_handin):
    """Each hand-in from a pull folder among `paths` gets Canvas's submitted_at as its time and a note naming
    the attempt; a student whose files the pull did not fetch (over a limit) gets a row saying why
    (`make_handin`: collect.Handin).  Warnings go to the intake's notes."""
    notes, records = intake.notes, {}
    for raw in paths:
        folder = Path(raw)
        if not (folder.is_dir() and files.regular(folder / MANIFEST)):
            continue
        try:
            data = read_manifest(folder)
        except PullError as error:
            notes.append(f"warning: {error}; the hand-ins there have no time")
            continue
        for user_id, entry in data["submissions"].items():
            if isinstance(entry, dict):
                records[str(user_id)] = (entry, data.get("pulled_at", ""))
    for handin in intake.handins:
        if handin.lms != "canvas" or handin.lms_id not in records:
            continue
        entry, pulled_at = records[handin.lms_id]
        ids = {str(a.get("id")) for a in entry.get("attachments", []) if isinstance(a, dict)}
        if handin.upload and handin.upload not in ids:
            continue                     # another download's file of the same student
        submitted_at = _iso(entry.get("submitted_at"))
        if submitted_at is None:
            continue
        handin.submitted_at, handin.time_source = submitted_at, TIME_SOURCE
        attempt = entry.get("attempt")
        handin.notes = (*handin.notes, f"{NOTE}Canvas attempt {attempt if isinstance(attempt, int) else '?'}, "
                                       f"submitted {submitted_at} (Canvas's own record, pulled {str(pulled_at)[:10]})")
    have = {handin.student for handin in intake.handins}
    for user_id, (entry, _) in sorted(records.items()):
        refused = [a for a in entry.get("attachments", []) if isinstance(a, dict) and a.get("why")]
        if refused and f"canvas:{user_id}" not in have:
            intake.handins.append(make_handin(
                f"canvas:{user_id}", f"Canvas submission of user {user_id}", None, _iso(entry.get("submitted_at")),
                "too-large" if any(a.get("status") == "too-large" for a in refused) else "unreadable",
                "not fetched from Canvas: " + "; ".join(
                    f"{str(a.get('name'))[:80]}: {str(a['why'])[:200]}" for a in refused[:4]),
                lms="canvas", lms_id=user_id, time_source=TIME_SOURCE))


def _iso(text):
    if not isinstance(text, str) or not re.fullmatch(r"[0-9T:.+\-Z ]{10,40}", text):
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment.isoformat() if moment.tzinfo is not None else None
