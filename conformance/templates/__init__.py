"""The templates of the project's HTML pages (Jinja2), shipped as package data.

:func:`render` fills one template with its context. Every value a template
prints is escaped (``autoescape``): a page is built from text that came from
elsewhere (operation ids, error messages of the implementations under test),
and none of it may become markup. A context value that is missing is an
error, not an empty string (``StrictUndefined``).

``base.html`` is the page every template extends: a self-contained document
(the project's one stylesheet, ``page.css``, inline; a page's script, when it
has one, inline in its ``scripts`` block; nothing fetched from elsewhere), so
that a page opens from a CI artifact or an e-mail as it is. The pages:
``harness-run.html`` (:mod:`conformance.harness.html`),
``ecosystem-matrix.html`` (:mod:`conformance.report.html`), and the
dashboard's ``dashboard-index.html`` and ``dashboard-implementation.html``
with the pieces they share in ``dashboard-macros.html``
(:mod:`conformance.dashboard.site`).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import jinja2


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("conformance", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def render(name: str, **context: Any) -> str:
    """The template ``name`` (``"harness-run.html"``) filled with ``context``."""
    return environment().get_template(name).render(**context)
