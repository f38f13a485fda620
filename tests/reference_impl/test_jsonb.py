"""JSON columns: the stored JSONB documents (upstream table/jsonb.md) read
as the text pylance 14 shows, written so that pylance reads them, and
malformed documents refused with a JsonbError, never a traceback or a hang."""

from __future__ import annotations

import json
import struct

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference_impl import jsonb, jsonb_batch
from reference_impl.dataset import Dataset
from reference_impl.errors import CorruptFileError

lance = pytest.importorskip("lance")

#: The page's conformance vectors: complete documents and their meaning.
VECTORS = [
    ("2000000000000000", "null"),
    ("200000002000000100", "0"),
    ("2000000020000009608000000000000000", "-0.0"),
    ("200000001000000161", '"a"'),
    ("80000003200000022000000220000002500150025003", "[1,2,3]"),
    ("4000000210000001100000012000000220000002616250025001", '{"a":2,"b":1}'),
    ("200000002000000a70ffffffffffffcfc702", "-123.45"),
    ("200000006000000a30000000000000000008", '"1970-01-01 08:00:00.000000 +0800"'),
]

#: JSON texts whose stored documents cover the number forms, escapes,
#: nesting and the float notations pylance switches between.
TEXTS = [
    '{"b": 1, "a": [1, 2.5, null, true, false, "x\\u00e9\\n\\"q"]}',
    "  [ ]",
    "{}",
    "null",
    None,
    "-7",
    "1e300",
    "0.1",
    '"\\ud83d\\ude00"',
    '{"z":{"y":[{}]}, "":-0.0}',
    "18446744073709551615",
    "-9223372036854775808",
    "123456789.125",
    "1e-7",
    "1e-5",
    "1.5e-5",
    "1e-6",
    "1e15",
    "1e16",
    "9999999999999998.0",
    "100.0",
    "0.0",
    "-1.5",
    "12345678901234567890123",
    "5e-324",
    "1.7976931348623157e308",
    '"\\u0001\\u001f\\u007f\\u2028/<>&\'"',
    '"\\t\\r\\b\\f"',
    '{"k\\"":1}',
    '[[[[[]]]],{"a":{"b":{"c":[1,-1,255,256,65535,65536,-129,-32769,4294967296]}}}]',
]


def _scalar(entry_type: int, payload: bytes) -> bytes:
    return struct.pack(">II", jsonb.SCALAR, entry_type | len(payload)) + payload


#: Documents pylance's text parser never writes (extensions, decimals, wide
#: integers, historical layouts), stored as they are through a lance.json
#: column, which pylance takes without re-encoding.
CRAFTED = [
    _scalar(jsonb.EXTENSION, b"\x00\xab\x01"),
    _scalar(jsonb.EXTENSION, b"\x00"),
    _scalar(jsonb.EXTENSION, b"\x10" + struct.pack(">i", 19000)),
    _scalar(jsonb.EXTENSION, b"\x10" + struct.pack(">i", -1)),
    _scalar(jsonb.EXTENSION, b"\x20" + struct.pack(">q", 1700000000123456)),
    _scalar(jsonb.EXTENSION, b"\x20" + struct.pack(">q", -1)),
    _scalar(jsonb.EXTENSION, b"\x30" + struct.pack(">qi", 1700000000123456, 5 * 3600 + 1800)),
    _scalar(jsonb.EXTENSION, b"\x30" + struct.pack(">qi", 0, -3600)),
    _scalar(jsonb.EXTENSION, b"\x30" + struct.pack(">qi", 0, 45)),
    _scalar(jsonb.EXTENSION, b"\x30" + struct.pack(">qb", 0, 8)),
    *(
        _scalar(jsonb.EXTENSION, b"\x40" + struct.pack(">iiq", *parts))
        for parts in [
            (14, 3, 3723000004),
            (-1, -2, -5),
            (0, 0, 0),
            (12, 0, 0),
            (1, 1, 0),
            (0, 0, 1000000),
            (-13, 0, 0),
            (25, 0, -3723000004),
            (0, 0, 90000000000),
            (2, -1, 5),
        ]
    ),
    _scalar(jsonb.NUMBER, b"\x70" + struct.pack(">qB", -12345, 2)),
    _scalar(jsonb.NUMBER, b"\x70" + struct.pack(">qB", 500, 0)),
    _scalar(jsonb.NUMBER, b"\x70" + (10**20).to_bytes(16, "big", signed=True) + b"\x03"),
    _scalar(jsonb.NUMBER, b"\x70" + (12345).to_bytes(16, "big", signed=True) + b"\x26\x02"),
    _scalar(jsonb.NUMBER, b"\x40\xff"),
    _scalar(jsonb.NUMBER, b"\x50" + struct.pack(">Q", 5)),
    _scalar(jsonb.NUMBER, b"\x60" + struct.pack(">d", 0.0)),
    _scalar(jsonb.NUMBER, b"\x60" + struct.pack(">d", float("nan"))),
    _scalar(jsonb.NUMBER, b"\x10"),
    _scalar(jsonb.NUMBER, b"\x30"),
    _scalar(jsonb.STRING, 'a\x00\x7f\u2028"\\'.encode()),
    # Keys out of order: shown in stored order, by pylance and here.
    struct.pack(">IIIII", 0x40000002, 0x10000001, 0x10000001, 0x00000000, 0x40000000) + b"ba",
]


@pytest.mark.parametrize("hex_document, text", VECTORS)
def test_the_pages_vectors_read_as_their_values(hex_document, text):
    assert jsonb.render(bytes.fromhex(hex_document)) == text


def _pylance_json_table(root, texts) -> tuple[pa.Table, pa.Table]:
    table = pa.table({"id": pa.array(range(len(texts)), pa.int32()), "doc": pa.array(texts, pa.json_())})
    lance.write_dataset(table, root)
    return lance.dataset(root).to_table(), Dataset.open(root).to_table()


def test_json_columns_read_as_pylance_shows_them(tmp_path):
    expected, actual = _pylance_json_table(tmp_path / "json", TEXTS)
    assert actual.schema == expected.schema
    assert actual.column("doc").type == pa.json_()
    assert actual.column("doc").to_pylist() == expected.column("doc").to_pylist()


def test_crafted_documents_read_as_pylance_shows_them(tmp_path):
    """pylance stores lance.json bytes as given: every layout the text
    parser never writes is compared with pylance's rendering of it."""
    schema = pa.schema([pa.field("doc", pa.large_binary(), metadata={b"ARROW:extension:name": b"lance.json"})])
    lance.write_dataset(pa.table({"doc": pa.array(CRAFTED, pa.large_binary())}, schema=schema), tmp_path / "crafted")
    expected = lance.dataset(tmp_path / "crafted").to_table().column("doc").to_pylist()
    actual = Dataset.open(tmp_path / "crafted").to_table().column("doc").to_pylist()
    assert actual == expected


def test_the_reference_writes_documents_pylance_reads(tmp_path):
    texts = [t for t in TEXTS if t is None or "e300" not in t]
    table = pa.table({"doc": pa.array(texts, pa.json_())})
    Dataset.create(tmp_path / "ref", table)
    expected = _pylance_json_table(tmp_path / "pylance", texts)[0].column("doc").to_pylist()
    assert lance.dataset(tmp_path / "ref").to_table().column("doc").to_pylist() == expected
    assert Dataset.open(tmp_path / "ref").to_table().column("doc").to_pylist() == expected


def test_json_nested_in_a_struct_and_a_list(tmp_path):
    docs = pa.array(['{"a":1}', None, "[1,2]"], pa.json_())
    struct = pa.StructArray.from_arrays([docs, pa.array([1, 2, 3])], names=["j", "n"])
    items = pa.array(['{"x":true}', None], pa.json_())
    lists = pa.ListArray.from_arrays(pa.array([0, 2, 2, 2]), items, mask=pa.array([False, True, False]))
    table = pa.table({"s": struct, "l": lists})
    Dataset.create(tmp_path / "nested", table)
    read = Dataset.open(tmp_path / "nested").to_table()
    assert read.column("s").to_pylist() == [{"j": '{"a":1}', "n": 1}, {"j": None, "n": 2}, {"j": "[1,2]", "n": 3}]
    assert read.column("l").to_pylist() == [['{"x":true}', None], None, []]
    assert lance.dataset(tmp_path / "nested").to_table().to_pylist() == read.to_pylist()


def test_a_malformed_document_in_a_file_is_a_corrupt_file(tmp_path):
    schema = pa.schema([pa.field("doc", pa.large_binary(), metadata={b"ARROW:extension:name": b"lance.json"})])
    bad = _scalar(jsonb.STRING, b"\xff\xfe")
    lance.write_dataset(pa.table({"doc": pa.array([bad], pa.large_binary())}, schema=schema), tmp_path / "bad")
    with pytest.raises(CorruptFileError, match="field 'doc': a JSON value: the string at byte 8 is not UTF-8"):
        Dataset.open(tmp_path / "bad").to_table()


@pytest.mark.parametrize(
    "document, problem",
    [
        (b"", "too short for its header"),
        (b"\x20\x00\x00\x01", "counts 1 elements"),
        (b"\x80\x00\x00\x05", "lists 5 entries"),
        (b"\x80\x00\x00\x01\x90\x00\x00\x00", "reserved bit"),
        (b"\x80\x00\x00\x01\x10\x00\x00\x05ab", "end at byte 13, not 10"),
        (b"\x60\x00\x00\x00", "undefined kind"),
        (_scalar(jsonb.NUMBER, b"\x40\x00\x00\x00"), "no layout has"),
        (_scalar(0x70000000, b""), "undefined type"),
        (_scalar(jsonb.TRUE, b"x"), "payload of 1 bytes"),
        (struct.pack(">III", 0x40000001, 0x00000000, 0x00000000), "key 0 of the object"),
        (_scalar(jsonb.EXTENSION, b"\x10" + struct.pack(">i", 3_000_000)), "outside the years"),
        (_scalar(jsonb.CONTAINER, b"\x80\x00\x00\x00"), "holds a container"),
    ],
)
def test_malformed_documents_are_named(document, problem):
    with pytest.raises(jsonb.JsonbError, match=problem):
        jsonb.render(document)


def test_check_refuses_what_render_refuses_but_a_value_the_text_cannot_show():
    """A date beyond the year 9999 is well formed (the page sets no range):
    render cannot print it, check lets it pass; a malformed document
    fails both."""
    far_date = _scalar(jsonb.EXTENSION, b"\x10" + struct.pack(">i", 3_000_000))
    with pytest.raises(jsonb.UnshowableValueError):
        jsonb.render(far_date)
    jsonb.check(far_date)
    jsonb.check(jsonb.encode('{"a":[1,"x",null]}'))
    with pytest.raises(jsonb.JsonbError, match="not UTF-8"):
        jsonb.check(_scalar(jsonb.STRING, b"\xff\xfe"))


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=64))
def test_check_agrees_with_render(document):
    """Property: check raises exactly when render raises something other
    than a value it cannot show."""
    try:
        jsonb.render(document)
        malformed = False
    except jsonb.UnshowableValueError:
        malformed = False
    except jsonb.JsonbError:
        malformed = True
    try:
        jsonb.check(document)
    except jsonb.JsonbError:
        assert malformed
    else:
        assert not malformed


def test_deep_nesting_is_refused_not_overflowed():
    depth = jsonb.MAX_DEPTH + 5
    document = b"\x80\x00\x00\x00"
    for _ in range(depth):
        document = struct.pack(">II", 0x80000001, jsonb.CONTAINER | len(document)) + document
    with pytest.raises(jsonb.JsonbError, match="nested deeper"):
        jsonb.render(document)
    with pytest.raises(jsonb.JsonbError, match="nested deeper"):
        jsonb.encode("[" * depth + "]" * depth)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=64))
def test_any_bytes_render_or_raise_a_jsonb_error(document):
    """Property: rendering never raises anything but JsonbError, and what
    it renders is JSON text."""
    try:
        text = jsonb.render(document)
    except jsonb.JsonbError:
        return
    json.loads(text)


_JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(1 << 63), (1 << 64) - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=4), children, max_size=4),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(_JSON_VALUES)
def test_encoding_then_rendering_keeps_the_value(value):
    """Property: a JSON value encoded and rendered back is the same value,
    its objects' keys in UTF-8 byte order."""
    text = jsonb.render(jsonb.encode(json.dumps(value)))
    assert json.loads(text) == value

    def keys_in_order(node) -> bool:
        if isinstance(node, dict):
            keys = [k.encode("utf-8") for k in node]
            return keys == sorted(keys) and all(keys_in_order(v) for v in node.values())
        if isinstance(node, list):
            return all(keys_in_order(v) for v in node)
        return True

    assert keys_in_order(json.loads(text, object_pairs_hook=dict))


_DOCUMENTS = _JSON_VALUES.map(lambda value: jsonb.encode(json.dumps(value)))


def _mutated_documents():
    """Documents of JSON values with a few bytes changed, and any bytes."""

    @st.composite
    def mutated(draw):
        document = bytearray(draw(_DOCUMENTS))
        for _ in range(draw(st.integers(0, 3))):
            if document:
                document[draw(st.integers(0, len(document) - 1))] = draw(st.integers(0, 255))
        if draw(st.booleans()) and document:
            del document[draw(st.integers(0, len(document) - 1)) :]
        return bytes(document)

    return mutated() | st.binary(max_size=48)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.none() | _DOCUMENTS | st.binary(max_size=48), max_size=6))
def test_the_batch_check_agrees_with_check_document_by_document(documents):
    """Property: jsonb_batch.malformed marks exactly the slots check refuses."""
    _agree(documents)


@settings(max_examples=400, deadline=None)
@given(st.lists(_mutated_documents(), min_size=1, max_size=4))
def test_the_batch_check_agrees_on_damaged_documents(documents):
    """Property: as above, on documents with a few bytes changed or cut."""
    _agree(documents)


def _agree(documents):
    def refused(document):
        try:
            jsonb.check(document)
        except jsonb.JsonbError:
            return True
        return False

    expected = [document is not None and refused(document) for document in documents]
    array = pa.array(documents, pa.large_binary())
    assert jsonb_batch.malformed(array).tolist() == expected
    assert jsonb_batch.malformed(array.slice(1)).tolist() == expected[1:]


def test_the_batch_check_bounds_nesting():
    document = b"\x80\x00\x00\x00"
    for _ in range(jsonb.MAX_DEPTH + 5):
        document = struct.pack(">II", 0x80000001, jsonb.CONTAINER | len(document)) + document
    assert jsonb_batch.malformed(pa.array([document, b"\x80\x00\x00\x00"], pa.large_binary())).tolist() == [
        True,
        False,
    ]
