"""Which of a manifest's two feature flag words lack a bit (versioning:
feature flags): shared by the rules that require a flag for a feature they
see in use (feature-flags/*, row-id/column-flag)."""

from __future__ import annotations

from reference_impl.manifest import Manifest


def missing_flag_words(manifest: Manifest, bit: int, *, reader: bool = True, writer: bool = True) -> list[str]:
    """``"reader"`` and/or ``"writer"``: the asked-for words that do not set ``bit``."""
    missing = []
    if reader and not manifest.reader_feature_flags & bit:
        missing.append("reader")
    if writer and not manifest.writer_feature_flags & bit:
        missing.append("writer")
    return missing


def flag_word_location(missing: list[str]) -> str:
    """The manifest field a finding about ``missing`` words points at: the reader word when it is one of them."""
    return "reader_feature_flags" if "reader" in missing else "writer_feature_flags"
