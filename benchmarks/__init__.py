"""Side-by-side benchmarks of lance-conformance against pylance (see README.md)."""
