"""Files in and out: the one place that opens a user's input file as text and writes an output file.

Every failure the operating system can report (no such file, a directory, no permission, a read-only
or full disk, a path through a regular file, bytes that are not UTF-8) becomes one line naming the path
and the cause, as the error class the caller asks for; an output file is written to a temporary file
beside it and renamed into place, so a failed write leaves neither a partial file nor a stray one.

No read is unbounded: an input is a regular file (a FIFO or a device, whose read may never end, is
refused before it is opened) of at most :func:`input_limit` bytes, and standard input and the members of
an archive are read to that limit and no further. The limit is :data:`MAX_INPUT_BYTES` unless the
environment variable :data:`LIMIT_VARIABLE` says otherwise.
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Any, Callable, Sequence

from automodel.errors import AutomodelError, OutputError

__all__ = ["read_text", "read_bytes", "decode", "write_atomic", "write_text", "os_reason", "check_input", "check_output",
           "input_limit", "read_bounded", "too_large", "unique_keys", "DuplicateKey", "MAX_INPUT_BYTES", "LIMIT_VARIABLE",
           "TEXT_ENCODING"]

#: how a user's text file is read: UTF-8, a leading byte-order mark dropped (Excel writes one before a CSV)
TEXT_ENCODING = "utf-8-sig"

#: bytes an input may have (a file, standard input, a member of an archive once unpacked)
MAX_INPUT_BYTES = 1 << 28
#: the environment variable that sets another limit (a number of bytes, or with a suffix K, M or G)
LIMIT_VARIABLE = "AUTOMODEL_MAX_INPUT_BYTES"
_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def input_limit() -> int:
    """The bytes an input may have: :data:`LIMIT_VARIABLE` when set (``500M``, ``2G``, ``1000000``),
    else :data:`MAX_INPUT_BYTES`.

    Raises
    ------
    AutomodelError
        The variable is set to something that is not a positive number of bytes.
    """
    text = os.environ.get(LIMIT_VARIABLE, "").strip()
    if not text:
        return MAX_INPUT_BYTES
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:].upper(), 1)
    digits = text[:-1] if scale > 1 else text
    # ASCII digits: str.isdigit takes '²' (then int's ValueError, a traceback) and '٣' (read as 3)
    if not (digits.isascii() and digits.isdigit()) or len(digits) > 15 or int(digits) == 0:
        raise AutomodelError(f"{LIMIT_VARIABLE}={text[:40]!r}: expected a number of bytes > 0, optionally with "
                             "K, M or G")
    return int(digits) * scale


def too_large(source: str, size: int | None, what: str, unpacked: bool = False) -> str:
    """The message for an input of ``size`` bytes (None: not known, only that it is more) over
    :func:`input_limit`; ``unpacked``: the size is that of an archive member once unpacked."""
    got = "" if size is None else f"{size:,} bytes{' unpacked' if unpacked else ''}, "
    return (f"{source}: {got}more than the {input_limit():,} bytes {what} may have; set {LIMIT_VARIABLE} to "
            "raise the limit")


def read_bounded(stream, source: str, what: str, error: type[AutomodelError]) -> bytes:
    """The bytes of an open binary ``stream`` (standard input, an archive member) up to
    :func:`input_limit`; one byte more is ``error``, and the rest is not read."""
    limit = input_limit()
    data = stream.read(limit + 1)
    if len(data) > limit:
        raise error(too_large(source, None, what))
    return data


def os_reason(exc: OSError) -> str:
    """What an :class:`OSError` means, in a few words (``permission denied``, ``is a directory``, ...)."""
    if exc.errno is not None:
        return os.strerror(exc.errno).lower()
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def check_input(path: str | Path, what: str, error: type[AutomodelError]) -> Path:
    """``path`` as a Path when it names an existing regular file of at most :func:`input_limit` bytes;
    else ``error`` in one line (a FIFO or a device is refused before anything opens it).

    ``what`` says what the file should be (``"a CSV file"``, ``"a model JSON file"``).
    """
    path = Path(path)
    if path.is_dir():
        raise error(f"{path}: is a directory, expected {what}")
    try:
        info = path.stat()
    except FileNotFoundError:
        raise error(f"{path}: no such file, expected {what}") from None
    except OSError as exc:
        raise error(f"{path}: cannot be read ({os_reason(exc)})") from None
    kind = next((name for test, name in _KINDS if test(info.st_mode)), None)
    if kind is not None or not stat.S_ISREG(info.st_mode):
        raise error(f"{path}: is {kind or 'not a regular file'}, expected {what} in a regular file")
    if info.st_size > input_limit():
        raise error(too_large(str(path), info.st_size, what))
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
    """``data`` read from ``path`` as UTF-8 text (a leading byte-order mark dropped,
    :data:`TEXT_ENCODING`); else ``error``."""
    try:
        return data.decode(TEXT_ENCODING)
    except UnicodeDecodeError as exc:
        raise error(f"{path}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}), "
                    f"expected {what}") from None


class DuplicateKey(ValueError):
    """A key given twice in one JSON object: json keeps the last and drops the other's value."""

    def __init__(self, key: str) -> None:
        super().__init__(f"the key {json.dumps(key)[:80]} is given twice in one object")
        self.key = key


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """The object of ``pairs``, json's ``object_pairs_hook`` for every JSON document automodel reads (data,
    model files, request bodies); :class:`DuplicateKey` when a key is given twice.

    Examples
    --------
    >>> json.loads('{"a": 1, "a": 2}', object_pairs_hook=unique_keys)
    Traceback (most recent call last):
    ...
    automodel.files.DuplicateKey: the key "a" is given twice in one object
    """
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        raise DuplicateKey(next(key for key, _ in pairs if key in seen or seen.add(key)))  # type: ignore[func-returns-value]
    return obj


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


def check_output(path: str | Path, inputs: Sequence[str | Path | None] = (),
                 others: Sequence[str | Path | None] = ()) -> Path:
    """``path`` as a Path when a file can be written there (its folder exists, it is not a directory):
    checked before the work whose result it will hold, so a typo costs no fit; else an
    :class:`OutputError` in one line. A FIFO or a device is refused too: renaming the finished file
    into place replaced ``-o /dev/null`` (as root) by a regular file, and appending to a FIFO (``run
    -o``) waited for a reader for ever. So is one of the command's ``inputs`` (``fit runs.csv -o
    runs.csv`` replaced the measured runs by the model), or one of its ``others`` outputs, written or
    not yet (``kernels --out x.json --report x.json`` replaced the models by the report)."""
    path = Path(path)
    for source in inputs:
        if source is not None and str(source) != "-" and _same_file(path, Path(source)):
            raise OutputError(f"{path}: is the input file {source}; expected another file to write (writing it "
                              "would replace what was read)")
    for other in others:
        if other is not None and str(other) != "-" and (
                _same_file(path, Path(other)) or os.path.realpath(path) == os.path.realpath(other)):
            raise OutputError(f"{path}: is the command's other output {other} too; expected another file to write "
                              "(one would replace the other)")
    folder = path.parent
    if path.is_dir():
        raise OutputError(f"{path}: is a directory, expected a file name to write")
    try:
        mode = path.stat().st_mode
    except OSError:  # absent (or unreadable: the write says why)
        mode = stat.S_IFREG
    kind = next((name for test, name in _KINDS if test(mode)), None)
    if kind is not None:
        raise OutputError(f"{path}: is {kind}, expected a file name to write (a regular file)")
    if not folder.exists():
        raise OutputError(f"{path}: the folder {folder} does not exist")
    if not folder.is_dir():
        raise OutputError(f"{path}: {folder} is not a folder")
    return path


def _same_file(a: Path, b: Path) -> bool:
    """Whether ``a`` and ``b`` are one existing file (through links too)."""
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


def _umask() -> int:
    """The process's file-mode creation mask (read by setting it and putting it back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _plain_mode(path: Path) -> int:
    """The permission bits a plain ``open(path, "w")`` leaves ``path`` with (not mkstemp's 0600): those of
    the file it replaces, else ``0666`` under the umask. A model or predictions kept private with
    ``chmod 600`` came out ``0644``, readable by every user, when a command wrote them again."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode) & 0o777
    except OSError:  # none yet (check_output refused a directory, a FIFO, a device)
        return 0o666 & ~_umask()


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
        os.chmod(tmp, _plain_mode(path))
        os.replace(tmp, path)
    except OSError as exc:
        raise OutputError(f"{path}: cannot be written ({os_reason(exc)})") from None
    finally:
        Path(tmp).unlink(missing_ok=True)
    return path


def write_text(path: str | Path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically (:func:`write_atomic`)."""
    return write_atomic(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))
