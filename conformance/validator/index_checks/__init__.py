"""Index rule bodies that need numpy or pyarrow, imported by a rule only for a version with its index."""
