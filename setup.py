"""The build step pyproject.toml cannot express: ship the golden corpus.

Cases are authored in the repository's top-level ``fixtures/``; a wheel must
carry them so that ``pip install`` alone gives an implementer the whole
suite. ``build_py`` copies ``fixtures/cases`` (and the corpus README) into
the built package as ``conformance/fixtures/corpus/``, where
``conformance.fixtures.corpus_root`` finds it. Everything else is in
``pyproject.toml``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

SOURCE = Path(__file__).resolve().parent / "fixtures"
#: Inside the built ``conformance`` package (conformance.fixtures.PACKAGED_CORPUS).
TARGET = Path("conformance") / "fixtures" / "corpus"


class build_py_with_corpus(build_py):
    """``build_py`` plus a copy of the golden corpus into the package."""

    def run(self) -> None:
        super().run()
        if self.editable_mode:
            # An editable install reads the checkout's fixtures/ directly.
            return
        if not (SOURCE / "cases").is_dir():
            raise SystemExit(f"the golden corpus is missing: {SOURCE / 'cases'} (build from a checkout or an sdist)")
        target = Path(self.build_lib) / TARGET
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(SOURCE / "cases", target / "cases", ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copy2(SOURCE / "README.md", target / "README.md")


setup(cmdclass={"build_py": build_py_with_corpus})
