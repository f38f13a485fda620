"""Access to the files of one dataset (layout: dataset directory, base paths).

Every read and write of the reference implementation goes through a
:class:`Storage` (:mod:`.base`): the local directory store (:mod:`.local`,
what ``LocalStorage(path)`` builds) or an object store speaking the S3 API
(:mod:`.object_store`); files carried inside other files are read from memory
(:mod:`.memory`). :mod:`.uri` turns what a user typed (a path,
``s3://...``, ``s3+ddb://...?ddbTableName=T``) and pylance-style storage
options into the right one.
"""

from .base import Storage, is_object_store_uri
from .local import LocalStorage, local_path
from .memory import MemoryStorage
from .object_store import S3_OPTION_KEYS, S3Options, S3Storage
from .uri import DatasetUri, absolute_uri, open_storage, parse_dataset_uri

__all__ = [
    "S3_OPTION_KEYS",
    "DatasetUri",
    "LocalStorage",
    "MemoryStorage",
    "S3Options",
    "S3Storage",
    "Storage",
    "absolute_uri",
    "is_object_store_uri",
    "local_path",
    "open_storage",
    "parse_dataset_uri",
]
