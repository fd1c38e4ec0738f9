"""File groups, file slices and the file-system view (docs/FORMAT.md §3).

* :mod:`engine.filegroup.naming` — base/log file names, file ids, write tokens (Hudi ``FSUtils``).
* :mod:`engine.filegroup.partition_metadata` — ``.hoodie_partition_metadata`` (``HoodiePartitionMetadata``).
* :mod:`engine.filegroup.slices` — :class:`BaseFile`, :class:`LogFile`, :class:`FileSlice`, :class:`FileGroup`.
* :mod:`engine.filegroup.view` — :class:`FileSystemView` (``HoodieTableFileSystemView``).
"""

from engine.filegroup.slices import BaseFile, FileGroup, FileSlice, LogFile

__all__ = ["BaseFile", "FileGroup", "FileSlice", "LogFile"]
