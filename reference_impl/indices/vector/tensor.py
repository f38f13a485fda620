"""The ``Tensor`` message (upstream index.proto; format/index/vector/index.md,
"Quantization Codebook", "Rotation Matrix", and the IVF centroids) and the
global buffers vector index metadata points at by number.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from google.protobuf.message import DecodeError

from ...wire import index_pb2
from ..files import IndexFileContents, IndexFormatError

#: The most values of a tensor believed before allocating.
MAX_TENSOR_VALUES = 1 << 28

_TENSOR_DTYPES: dict[int, np.dtype] = {
    index_pb2.Tensor.FLOAT16: np.dtype("<f2"),
    index_pb2.Tensor.FLOAT32: np.dtype("<f4"),
    index_pb2.Tensor.FLOAT64: np.dtype("<f8"),
    index_pb2.Tensor.UINT8: np.dtype("u1"),
    index_pb2.Tensor.UINT16: np.dtype("<u2"),
    index_pb2.Tensor.UINT32: np.dtype("<u4"),
    index_pb2.Tensor.UINT64: np.dtype("<u8"),
}


def decode_tensor(path: str, raw: bytes, what: str) -> np.ndarray:
    """A ``Tensor`` message as an array of its shape (bfloat16 is refused:
    numpy has no such type and no pylance-14 index stores one)."""
    try:
        message = index_pb2.Tensor.FromString(raw)
    except DecodeError as exc:
        raise IndexFormatError(path, f"{what} is not a Tensor message: {exc}") from None
    return tensor_array(path, message, what)


def tensor_array(path: str, message: index_pb2.Tensor, what: str) -> np.ndarray:
    dtype = _TENSOR_DTYPES.get(message.data_type)
    if dtype is None:
        raise IndexFormatError(path, f"{what} has data type {message.data_type}, which the reference does not read")
    shape = [int(n) for n in message.shape]
    count = math.prod(shape) if shape else 0  # Python ints: a hostile shape cannot wrap around
    if count > MAX_TENSOR_VALUES or count * dtype.itemsize != len(message.data):
        raise IndexFormatError(path, f"{what} has shape {shape} of {dtype} but {len(message.data)} bytes of data")
    return np.frombuffer(message.data, dtype=dtype).reshape(shape)


def buffer_of(contents: IndexFileContents, number_text: Any, what: str) -> bytes:
    """The global buffer a metadata value names (a number, as text or not)."""
    try:
        number = int(number_text)
    except (TypeError, ValueError):
        raise IndexFormatError(contents.path, f"{what} names buffer {number_text!r}, not a number") from None
    if not 0 < number < len(contents.global_buffers):
        raise IndexFormatError(
            contents.path, f"{what} names global buffer {number}; the file has {len(contents.global_buffers)}"
        )
    return contents.global_buffers[number]
