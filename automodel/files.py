"""Files in and out: the one place that opens a user's input file as text and writes an output file.

Every failure the operating system can report (no such file, a directory, no permission, a read-only
or full disk, a path through a regular file, bytes that are not UTF-8) becomes one line naming the path
and the cause, as the error class the caller asks for; an output file is written to a temporary file
beside it and renamed into place, so a failed write leaves neither a partial file nor a stray one.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Callable

from automodel.errors import AutomodelError, OutputError

__all__ = ["read_text", "read_bytes", "decode", "write_atomic", "write_text", "os_reason", "check_input", "check_output"]


def os_reason(exc: OSError) -> str:
    """What an :class:`OSError` means, in a few words (``permission denied``, ``is a directory``, ...)."""
    if exc.errno is not None:
        return os.strerror(exc.errno).lower()
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def check_input(path: str | Path, what: str, error: type[AutomodelError]) -> Path:
    """``path`` as a Path when it names an existing regular file; else ``error`` in one line.

    ``what`` says what the file should be (``"a CSV file"``, ``"a model JSON file"``).
    """
    path = Path(path)
    if path.is_dir():
        raise error(f"{path}: is a directory, expected {what}")
    if not path.exists():
        raise error(f"{path}: no such file, expected {what}")
    return path


def read_bytes(path: str | Path, what: str, error: type[AutomodelError], limit: int | None = None) -> bytes:
    """The bytes of the file ``path`` (its first ``limit`` bytes when given); every failure is ``error``."""
    path = check_input(path, what, error)
    try:
        with path.open("rb") as fh:
            return fh.read(-1 if limit is None else limit)
    except OSError as exc:
        raise error(f"{path}: cannot be read ({os_reason(exc)})") from None


def decode(data: bytes, path: str | Path, what: str, error: type[AutomodelError]) -> str:
    """``data`` read from ``path`` as UTF-8 text (a leading byte-order mark dropped); else ``error``."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise error(f"{path}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}), "
                    f"expected {what}") from None


def read_text(path: str | Path, what: str, error: type[AutomodelError]) -> str:
    """The UTF-8 text of the file ``path`` (a leading byte-order mark dropped); every failure is ``error``.

    Examples
    --------
    >>> from automodel.errors import ModelFileError
    >>> read_text("/nonexistent.json", "a model JSON file", ModelFileError)
    Traceback (most recent call last):
    ...
    automodel.errors.ModelFileError: /nonexistent.json: no such file, expected a model JSON file
    """
    return decode(read_bytes(path, what, error), path, what, error)


def check_output(path: str | Path) -> Path:
    """``path`` as a Path when a file can be written there (its folder exists, it is not a directory):
    checked before the work whose result it will hold, so a typo costs no fit; else an
    :class:`OutputError` in one line."""
    path = Path(path)
    folder = path.parent
    if path.is_dir():
        raise OutputError(f"{path}: is a directory, expected a file name to write")
    if not folder.exists():
        raise OutputError(f"{path}: the folder {folder} does not exist")
    if not folder.is_dir():
        raise OutputError(f"{path}: {folder} is not a folder")
    return path


def _umask() -> int:
    """The process's file-mode creation mask (read by setting it and putting it back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_atomic(path: str | Path, write: Callable[[Path], None]) -> Path:
    """Call ``write(tmp)`` on a temporary file beside ``path`` and rename it into place on success.

    Raises
    ------
    OutputError
        One line naming ``path`` when its folder does not exist, is not a folder or cannot be written,
        or ``path`` is a directory; nothing is left behind.
    """
    path = check_output(path)
    folder = path.parent
    try:
        fd, tmp = tempfile.mkstemp(prefix=".automodel-", suffix=path.suffix, dir=folder)
    except OSError as exc:
        raise OutputError(f"{path}: cannot write in {folder} ({os_reason(exc)})") from None
    os.close(fd)
    try:
        write(Path(tmp))
        os.chmod(tmp, 0o666 & ~_umask())  # the mode a plain open() would give, not mkstemp's 0600
        os.replace(tmp, path)
    except OSError as exc:
        raise OutputError(f"{path}: cannot be written ({os_reason(exc)})") from None
    finally:
        Path(tmp).unlink(missing_ok=True)
    return path


def write_text(path: str | Path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically (:func:`write_atomic`)."""
    return write_atomic(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))
