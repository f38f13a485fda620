"""The version of the lance-conformance distribution (both packages); the
reference writer records it in every manifest it writes."""

__version__ = "0.1.0"
