"""Unpack an LMS zip inside the output folder, refusing what is unsafe.

An entry whose name is absolute, climbs out with `..`, is a symbolic link or
is larger than the limits is not written; it is reported, so its student
still gets a row.
"""

import stat
import zipfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import PurePosixPath

MAX_ENTRY_BYTES = 50 * 1024 * 1024
MAX_TOTAL_BYTES = 2 * 1024 * 1024 * 1024
MAX_ENTRIES = 20_000


@dataclass
class Refused:
    name: str
    status: str
    message: str


def unpack(archive, target):
    """Extract `archive` into `target`; returns (extracted {relative path: time}, refused entries)."""
    extracted, refused, total = {}, [], 0
    with zipfile.ZipFile(archive) as bundle:
        entries = bundle.infolist()
        if len(entries) > MAX_ENTRIES:
            raise zipfile.BadZipFile(f"it has {len(entries)} entries; the limit is {MAX_ENTRIES}")
        for entry in entries:
            name = entry.filename
            if entry.is_dir():
                continue
            problem = _problem(entry)
            if problem is None and total + entry.file_size > MAX_TOTAL_BYTES:
                problem = ("too-large", "the archive unpacks to more than the limit; this entry was not unpacked")
            if problem:
                refused.append(Refused(name, *problem))
                continue
            destination = target.joinpath(*PurePosixPath(name).parts)
            destination.parent.mkdir(parents=True, exist_ok=True)
            try:
                written = _copy_capped(bundle, entry, destination)
            except zipfile.BadZipFile as error:
                refused.append(Refused(name, "invalid-zip", f"this entry is damaged: {error}"))
                destination.unlink(missing_ok=True)
                continue
            total += written
            extracted[str(PurePosixPath(name))] = _entry_time(entry)
    return extracted, refused


def _problem(entry):
    path = PurePosixPath(entry.filename.replace("\\", "/"))
    if path.is_absolute() or ".." in path.parts or (path.parts and ":" in path.parts[0]):
        return ("unsafe-path", f"the zip entry {entry.filename!r} points outside the archive; it was not unpacked")
    if stat.S_ISLNK(entry.external_attr >> 16):
        return ("unsafe-path", f"the zip entry {entry.filename!r} is a symbolic link; it was not unpacked")
    if entry.file_size > MAX_ENTRY_BYTES:
        return ("too-large", f"{entry.filename!r} is {entry.file_size // 2**20} MB; the limit is "
                             f"{MAX_ENTRY_BYTES // 2**20} MB")
    return None


def _copy_capped(bundle, entry, destination):
    # The header's size can lie (a zip bomb); count what really comes out.
    written = 0
    with bundle.open(entry) as source, open(destination, "wb") as sink:
        while chunk := source.read(1 << 20):
            written += len(chunk)
            if written > MAX_ENTRY_BYTES:
                raise zipfile.BadZipFile("it unpacks to more than its stated size")
            sink.write(chunk)
    return written


def _entry_time(entry):
    try:
        return datetime(*entry.date_time).isoformat()
    except ValueError:
        return None


def safe_name(text):
    """A folder name for an archive's contents."""
    keep = "".join(c if c.isalnum() or c in "-_." else "_" for c in text)
    return keep.strip("._") or "archive"

