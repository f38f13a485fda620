"""The Spark harness (issue 14)."""
