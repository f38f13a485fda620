from . import encodings_v2_1_pb2 as _encodings_v2_1_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class PlanarLayout(_message.Message):
    __slots__ = ("structure", "values")
    STRUCTURE_FIELD_NUMBER: _ClassVar[int]
    VALUES_FIELD_NUMBER: _ClassVar[int]
    structure: StructuralPlane
    values: ValuePlane
    def __init__(self, structure: _Optional[_Union[StructuralPlane, _Mapping]] = ..., values: _Optional[_Union[ValuePlane, _Mapping]] = ...) -> None: ...

class StructuralPlane(_message.Message):
    __slots__ = ("dense", "sparse")
    DENSE_FIELD_NUMBER: _ClassVar[int]
    SPARSE_FIELD_NUMBER: _ClassVar[int]
    dense: DenseStructure
    sparse: SparseStructure
    def __init__(self, dense: _Optional[_Union[DenseStructure, _Mapping]] = ..., sparse: _Optional[_Union[SparseStructure, _Mapping]] = ...) -> None: ...

class DenseStructure(_message.Message):
    __slots__ = ("layers",)
    LAYERS_FIELD_NUMBER: _ClassVar[int]
    layers: _containers.RepeatedScalarFieldContainer[_encodings_v2_1_pb2.RepDefLayer]
    def __init__(self, layers: _Optional[_Iterable[_Union[_encodings_v2_1_pb2.RepDefLayer, str]]] = ...) -> None: ...

class SparseStructure(_message.Message):
    __slots__ = ("layers",)
    LAYERS_FIELD_NUMBER: _ClassVar[int]
    layers: _containers.RepeatedCompositeFieldContainer[SparseStructuralLayer]
    def __init__(self, layers: _Optional[_Iterable[_Union[SparseStructuralLayer, _Mapping]]] = ...) -> None: ...

class SparseStructuralLayer(_message.Message):
    __slots__ = ("validity", "list", "fixed_size_list")
    VALIDITY_FIELD_NUMBER: _ClassVar[int]
    LIST_FIELD_NUMBER: _ClassVar[int]
    FIXED_SIZE_LIST_FIELD_NUMBER: _ClassVar[int]
    validity: SparseValiditySet
    list: SparseListLayer
    fixed_size_list: SparseFixedSizeListLayer
    def __init__(self, validity: _Optional[_Union[SparseValiditySet, _Mapping]] = ..., list: _Optional[_Union[SparseListLayer, _Mapping]] = ..., fixed_size_list: _Optional[_Union[SparseFixedSizeListLayer, _Mapping]] = ...) -> None: ...

class SparseValiditySet(_message.Message):
    __slots__ = ("meaning", "positions", "num_positions")
    class Meaning(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        SPARSE_VALIDITY_UNSPECIFIED: _ClassVar[SparseValiditySet.Meaning]
        SPARSE_VALIDITY_NULL_POSITIONS: _ClassVar[SparseValiditySet.Meaning]
        SPARSE_VALIDITY_VALID_POSITIONS: _ClassVar[SparseValiditySet.Meaning]
    SPARSE_VALIDITY_UNSPECIFIED: SparseValiditySet.Meaning
    SPARSE_VALIDITY_NULL_POSITIONS: SparseValiditySet.Meaning
    SPARSE_VALIDITY_VALID_POSITIONS: SparseValiditySet.Meaning
    MEANING_FIELD_NUMBER: _ClassVar[int]
    POSITIONS_FIELD_NUMBER: _ClassVar[int]
    NUM_POSITIONS_FIELD_NUMBER: _ClassVar[int]
    meaning: SparseValiditySet.Meaning
    positions: _encodings_v2_1_pb2.CompressiveEncoding
    num_positions: int
    def __init__(self, meaning: _Optional[_Union[SparseValiditySet.Meaning, str]] = ..., positions: _Optional[_Union[_encodings_v2_1_pb2.CompressiveEncoding, _Mapping]] = ..., num_positions: _Optional[int] = ...) -> None: ...

class SparseListLayer(_message.Message):
    __slots__ = ("num_child_slots", "non_empty_positions", "num_non_empty", "counts", "validity")
    NUM_CHILD_SLOTS_FIELD_NUMBER: _ClassVar[int]
    NON_EMPTY_POSITIONS_FIELD_NUMBER: _ClassVar[int]
    NUM_NON_EMPTY_FIELD_NUMBER: _ClassVar[int]
    COUNTS_FIELD_NUMBER: _ClassVar[int]
    VALIDITY_FIELD_NUMBER: _ClassVar[int]
    num_child_slots: int
    non_empty_positions: _encodings_v2_1_pb2.CompressiveEncoding
    num_non_empty: int
    counts: _encodings_v2_1_pb2.CompressiveEncoding
    validity: SparseValiditySet
    def __init__(self, num_child_slots: _Optional[int] = ..., non_empty_positions: _Optional[_Union[_encodings_v2_1_pb2.CompressiveEncoding, _Mapping]] = ..., num_non_empty: _Optional[int] = ..., counts: _Optional[_Union[_encodings_v2_1_pb2.CompressiveEncoding, _Mapping]] = ..., validity: _Optional[_Union[SparseValiditySet, _Mapping]] = ...) -> None: ...

class SparseFixedSizeListLayer(_message.Message):
    __slots__ = ("dimension", "validity")
    DIMENSION_FIELD_NUMBER: _ClassVar[int]
    VALIDITY_FIELD_NUMBER: _ClassVar[int]
    dimension: int
    validity: SparseValiditySet
    def __init__(self, dimension: _Optional[int] = ..., validity: _Optional[_Union[SparseValiditySet, _Mapping]] = ...) -> None: ...

class ValuePlane(_message.Message):
    __slots__ = ("chunked", "zipped", "constant", "none")
    CHUNKED_FIELD_NUMBER: _ClassVar[int]
    ZIPPED_FIELD_NUMBER: _ClassVar[int]
    CONSTANT_FIELD_NUMBER: _ClassVar[int]
    NONE_FIELD_NUMBER: _ClassVar[int]
    chunked: ChunkedValues
    zipped: ZippedValues
    constant: ConstantValue
    none: NoValues
    def __init__(self, chunked: _Optional[_Union[ChunkedValues, _Mapping]] = ..., zipped: _Optional[_Union[ZippedValues, _Mapping]] = ..., constant: _Optional[_Union[ConstantValue, _Mapping]] = ..., none: _Optional[_Union[NoValues, _Mapping]] = ...) -> None: ...

class ChunkedValues(_message.Message):
    __slots__ = ("compression", "levels", "dictionary", "num_dictionary_items", "num_buffers", "num_items")
    COMPRESSION_FIELD_NUMBER: _ClassVar[int]
    LEVELS_FIELD_NUMBER: _ClassVar[int]
    DICTIONARY_FIELD_NUMBER: _ClassVar[int]
    NUM_DICTIONARY_ITEMS_FIELD_NUMBER: _ClassVar[int]
    NUM_BUFFERS_FIELD_NUMBER: _ClassVar[int]
    NUM_ITEMS_FIELD_NUMBER: _ClassVar[int]
    compression: _encodings_v2_1_pb2.CompressiveEncoding
    levels: DenseChunkLevels
    dictionary: _encodings_v2_1_pb2.CompressiveEncoding
    num_dictionary_items: int
    num_buffers: int
    num_items: int
    def __init__(self, compression: _Optional[_Union[_encodings_v2_1_pb2.CompressiveEncoding, _Mapping]] = ..., levels: _Optional[_Union[DenseChunkLevels, _Mapping]] = ..., dictionary: _Optional[_Union[_encodings_v2_1_pb2.CompressiveEncoding, _Mapping]] = ..., num_dictionary_items: _Optional[int] = ..., num_buffers: _Optional[int] = ..., num_items: _Optional[int] = ...) -> None: ...

class DenseChunkLevels(_message.Message):
    __slots__ = ("rep_compression", "def_compression", "repetition_index_depth")
    REP_COMPRESSION_FIELD_NUMBER: _ClassVar[int]
    DEF_COMPRESSION_FIELD_NUMBER: _ClassVar[int]
    REPETITION_INDEX_DEPTH_FIELD_NUMBER: _ClassVar[int]
    rep_compression: _encodings_v2_1_pb2.CompressiveEncoding
    def_compression: _encodings_v2_1_pb2.CompressiveEncoding
    repetition_index_depth: int
    def __init__(self, rep_compression: _Optional[_Union[_encodings_v2_1_pb2.CompressiveEncoding, _Mapping]] = ..., def_compression: _Optional[_Union[_encodings_v2_1_pb2.CompressiveEncoding, _Mapping]] = ..., repetition_index_depth: _Optional[int] = ...) -> None: ...

class ZippedValues(_message.Message):
    __slots__ = ("compression", "levels", "bits_per_value", "bits_per_offset", "num_items", "num_visible_items")
    COMPRESSION_FIELD_NUMBER: _ClassVar[int]
    LEVELS_FIELD_NUMBER: _ClassVar[int]
    BITS_PER_VALUE_FIELD_NUMBER: _ClassVar[int]
    BITS_PER_OFFSET_FIELD_NUMBER: _ClassVar[int]
    NUM_ITEMS_FIELD_NUMBER: _ClassVar[int]
    NUM_VISIBLE_ITEMS_FIELD_NUMBER: _ClassVar[int]
    compression: _encodings_v2_1_pb2.CompressiveEncoding
    levels: DenseZipLevels
    bits_per_value: int
    bits_per_offset: int
    num_items: int
    num_visible_items: int
    def __init__(self, compression: _Optional[_Union[_encodings_v2_1_pb2.CompressiveEncoding, _Mapping]] = ..., levels: _Optional[_Union[DenseZipLevels, _Mapping]] = ..., bits_per_value: _Optional[int] = ..., bits_per_offset: _Optional[int] = ..., num_items: _Optional[int] = ..., num_visible_items: _Optional[int] = ...) -> None: ...

class DenseZipLevels(_message.Message):
    __slots__ = ("bits_rep", "bits_def")
    BITS_REP_FIELD_NUMBER: _ClassVar[int]
    BITS_DEF_FIELD_NUMBER: _ClassVar[int]
    bits_rep: int
    bits_def: int
    def __init__(self, bits_rep: _Optional[int] = ..., bits_def: _Optional[int] = ...) -> None: ...

class ConstantValue(_message.Message):
    __slots__ = ("value",)
    VALUE_FIELD_NUMBER: _ClassVar[int]
    value: bytes
    def __init__(self, value: _Optional[bytes] = ...) -> None: ...

class NoValues(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...
