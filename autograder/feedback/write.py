"""Write files only when their bytes change, and zips that are the same bytes for the same files.

So running a command twice leaves every file (and its modification time) as it was.
"""

import hashlib
import io
import os
import zipfile
from pathlib import Path

# Zip entries carry this fixed time (the earliest a zip can hold) and fixed permissions.
ZIP_TIME = (1980, 1, 1, 0, 0, 0)


def write_if_changed(path, data):
    """Write `data` (bytes or str) to `path` unless it already holds exactly that; True when written."""
    path = Path(path)
    if isinstance(data, str):
        data = data.encode("utf-8")
    try:
        if path.read_bytes() == data:
            return False
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    temporary.write_bytes(data)
    os.replace(temporary, path)
    return True


def zip_bytes(files):
    """A zip of {name: bytes} with sorted entries, fixed times and permissions: same files, same bytes."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as bundle:
        for name in sorted(files):
            info = zipfile.ZipInfo(name, date_time=ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            info.create_system = 3  # unix, so the permissions above mean what they say
            data = files[name]
            bundle.writestr(info, data.encode("utf-8") if isinstance(data, str) else data)
    return buffer.getvalue()


def digest(*parts):
    hasher = hashlib.sha256()
    for part in parts:
        hasher.update(part.encode("utf-8") if isinstance(part, str) else part)
        hasher.update(b"\0")
    return hasher.hexdigest()
