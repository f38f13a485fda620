"""Dispatch on a page's structural encoding (encoding.md, "Structural
Encoding"; ``PageLayout`` in ``protos/encodings_v2_1.proto``).

A 2.1+ page's encoding is a ``lance.encodings21.PageLayout``; each of its
layouts has a module that decodes the page into levels and values
(:class:`.page.DecodedPage`). The pages of 2.3 files are a
``lance.encodings23.PlanarLayout`` instead (:mod:`.planar`). A layout this
reader does not know raises
:class:`~reference_impl.errors.UnsupportedFeatureError` naming it.
"""

from __future__ import annotations

from google.protobuf.unknown_fields import UnknownFieldSet

from ...wire import encodings_v2_1_pb2 as enc
from ...wire import encodings_v2_3_pb2 as enc23
from ..footer import PAGE_LAYOUT_TYPE
from . import all_null, blob, full_zip, mini_block, planar
from .page import DecodedPage, PageContext

__all__ = ["PAGE_LAYOUT_TYPE", "decode_page"]


def decode_page(layout: enc.PageLayout | enc23.PlanarLayout, page: PageContext) -> DecodedPage:
    """The levels and values of one page."""
    if isinstance(layout, enc23.PlanarLayout):
        return planar.decode(layout, page)
    kind = layout.WhichOneof("layout")
    if kind == "mini_block_layout":
        return mini_block.decode(layout.mini_block_layout, page)
    if kind == "full_zip_layout":
        return full_zip.decode(layout.full_zip_layout, page)
    if kind == "constant_layout":
        return all_null.decode(layout.constant_layout, page)
    if kind == "blob_layout":
        return blob.decode(layout.blob_layout, page, decode_page)
    if kind is None:
        unknown = sorted(field.field_number for field in UnknownFieldSet(layout))
        if unknown:
            raise page.unsupported(f"page layout field {unknown[0]} (a layout this reader does not know)")
        raise page.corrupt("a page layout without a layout")
    raise page.unsupported(f"page layout {kind} is not supported")
