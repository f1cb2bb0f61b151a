"""Writing files whole or not at all: a temporary file, then a rename.

Every writer of the package (model files, CRFsuite files, CoNLL files, the
corpus store's files and the command line's outputs) writes through
:func:`atomic_write`: the bytes go to a temporary file in the destination's
folder, which replaces the destination (:func:`os.replace`, atomic on POSIX
and Windows) only after the last byte is written and flushed to disk. A
failure at any point, an interrupt included, removes the temporary file and
leaves an existing destination byte for byte as it was.

A destination that is not a regular file (``/dev/null``, a pipe, a
terminal) cannot be replaced; it is written directly.
"""

import contextlib
import os
import secrets
import stat

__all__ = ["atomic_write", "temporary_path", "write_bytes"]


def temporary_path(path):
    """A fresh name for a temporary file next to ``path`` (same folder, so that
    the rename does not cross file systems), hidden and marked ``.tmp``."""
    folder, name = os.path.split(os.path.abspath(path))
    return os.path.join(folder, f".{name}.{secrets.token_hex(6)}.tmp")


def _replaceable(path):
    """Whether ``path`` is a regular file or absent (then it can be replaced by a
    rename); a device, pipe or socket is written in place."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except FileNotFoundError:
        return True


@contextlib.contextmanager
def atomic_write(path, mode="wb", *, encoding=None, newline=None):
    """Open a temporary file that replaces ``path`` when the block ends without error.

    Parameters
    ----------
    path : str, path-like or file object
        The destination (a file object is written as it is). A symbolic link is followed (its target is
        replaced, the link kept). The temporary file is created in its
        folder with the permissions a new file would get (``0o666`` less the
        umask), or the destination's when it exists.
    mode : {"wb", "w"}, default="wb"
        Binary or text.
    encoding, newline : str, default=None
        As for :func:`open` in text mode.

    Yields
    ------
    file : file object
        Write to it; do not close it.

    Raises
    ------
    OSError
        When the folder cannot hold a new file (missing, not writable), or
        the writing or the rename fails; the destination is then unchanged.

    Examples
    --------
    >>> import os, tempfile
    >>> from sklearn_crf._io.atomic import atomic_write
    >>> path = os.path.join(tempfile.mkdtemp(), "out.txt")
    >>> with atomic_write(path, "w", encoding="utf-8") as f:
    ...     _ = f.write("new")
    >>> try:
    ...     with atomic_write(path, "w", encoding="utf-8") as f:
    ...         _ = f.write("half")
    ...         raise RuntimeError("failed midway")
    ... except RuntimeError:
    ...     pass
    >>> open(path).read(), os.listdir(os.path.dirname(path))
    ('new', ['out.txt'])
    """
    if mode not in ("wb", "w"):
        raise ValueError(f"mode must be 'wb' or 'w', got {mode!r}")
    if hasattr(path, "write"):
        yield path
        return
    path = os.fspath(path)
    if os.path.islink(path):
        path = os.path.realpath(path)
    if not _replaceable(path):
        with open(path, mode, encoding=encoding, newline=newline) as f:
            yield f
        return
    tmp = temporary_path(path)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        try:
            os.chmod(tmp, stat.S_IMODE(os.stat(path).st_mode))
        except FileNotFoundError:
            pass
        with open(fd, mode, encoding=encoding, newline=newline) as f:
            fd = None  # the file object owns it now
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        tmp = None
    finally:  # BaseException included: an interrupt leaves no temporary file
        if fd is not None:
            os.close(fd)
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.remove(tmp)


def write_bytes(path, data):
    """Write ``data`` (bytes) to ``path`` through :func:`atomic_write`."""
    with atomic_write(path, "wb") as f:
        f.write(data)
