"""Generated protobuf modules (see protos/generate.py)."""
