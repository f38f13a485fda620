"""A minimal, readable reference implementation of the Lance table format.

One module per topic of the specification; each cites the section it
implements. See README.md for the map.
"""
