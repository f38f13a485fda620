"""Index checks that need numpy and pyarrow, imported by their rules only when a version has such a segment."""
