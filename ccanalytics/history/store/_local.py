"""A store in a local folder: ``os.scandir``, a hidden temporary file renamed over its
final name (:mod:`ccanalytics._files`), ``flock`` (see :mod:`._location`)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any

from ccanalytics._files import fsync_dir, write_atomic, write_new
from ccanalytics.errors import StoreError
from ccanalytics.history.store._location import FileKey, Fill, Location, Staged, temp_path

if TYPE_CHECKING:
    import pyarrow.fs as pafs  # type: ignore[import-untyped]

__all__ = ["LocalLocation"]


class LocalLocation(Location):
    """A store in a local folder (or one mounted from a shared file system)."""

    local = True

    def __init__(self, root: Path) -> None:
        self.root = root
        self._real = os.path.realpath(root)

    def __repr__(self) -> str:
        return f"LocalLocation({str(self.root)!r})"

    def show(self, path: PurePath) -> str:
        return str(path)

    def at(self, path: PurePath) -> PurePath | str:
        return path

    def check(self) -> None:
        root = Path(self.root)
        if root.exists() and not root.is_dir():
            raise StoreError(f"the store {root} is not a folder", root)

    def exists(self) -> bool:
        return Path(self.root).is_dir()

    def outside(self, path: PurePath) -> bool:
        local = Path(path)
        if not local.is_symlink():
            return False
        real = os.path.realpath(local)
        return real != self._real and not real.startswith(self._real + os.sep)

    def partitions(self, table_dir: PurePath) -> list[tuple[PurePath, bool]]:
        try:
            found = list(os.scandir(table_dir))
        except FileNotFoundError:
            return []
        except OSError as err:
            raise _listing_error(table_dir, err) from None
        folders = sorted(Path(e.path) for e in found if e.name.startswith("date=") and e.is_dir())
        return [(part, self.outside(part)) for part in folders]

    def entries(self, folder: PurePath) -> list[tuple[str, bool]]:
        try:
            found = sorted(os.scandir(folder), key=lambda e: e.name)
        except FileNotFoundError:
            return []
        except OSError as err:
            raise _listing_error(folder, err) from None
        return [(e.name, e.is_symlink() and self.outside(Path(e.path))) for e in found]

    def read_bytes(self, path: PurePath) -> bytes:
        return Path(path).read_bytes()

    def key(self, path: PurePath) -> FileKey:
        st = os.stat(path)
        return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)

    def source(self, path: PurePath) -> Any:
        return path

    def create(self, path: PurePath, write: Fill) -> None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        write_atomic(Path(path), write)

    def replace(self, path: PurePath, write: Fill) -> None:
        write_atomic(Path(path), write)

    def create_durably(self, path: PurePath, write: Fill) -> None:
        write_atomic(Path(path), write, durable_rename=True)

    def sync_folder(self, folder: PurePath) -> None:
        fsync_dir(Path(folder))

    def stage(self, final: PurePath, write: Fill) -> Staged:
        temp = temp_path(Path(final))
        try:
            write_new(temp, write)
        except BaseException:
            temp.unlink(missing_ok=True)
            raise
        return Staged(final, temp)

    def publish(self, staged: Staged) -> None:
        assert staged.temp is not None
        os.replace(staged.temp, staged.final)
        fsync_dir(staged.temp.parent)

    def discard(self, staged: Staged) -> None:
        if staged.temp is not None:
            staged.temp.unlink(missing_ok=True)

    def delete(self, path: PurePath) -> None:
        Path(path).unlink(missing_ok=True)

    def delete_folder(self, folder: PurePath) -> None:
        with contextlib.suppress(OSError):
            Path(folder).rmdir()

    def walk(self, folder: PurePath, pattern: str) -> list[PurePath]:
        return list(Path(folder).glob(pattern))

    def make_dirs(self, folder: PurePath) -> None:
        Path(folder).mkdir(parents=True, exist_ok=True)

    @contextlib.contextmanager
    def lock(self, name: str) -> Iterator[None]:
        import fcntl

        fd = os.open(Path(self.root) / name, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing releases the lock

    def filesystem(self) -> pafs.FileSystem:
        import pyarrow.fs as pafs

        return pafs.LocalFileSystem()


def _listing_error(folder: PurePath, err: OSError) -> StoreError:
    return StoreError(f"cannot list the store folder {folder}: {err.strerror or err}", folder)
