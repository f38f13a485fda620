"""Other Lance implementations the suite runs side by side with ours.

Each peer lives outside the project's own environment (an older pylance needs
an older pyarrow, ...), so it is driven through a subprocess and exchanges only
dataset directories and JSON with the test suite.
"""
