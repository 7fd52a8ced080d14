"""The report's HTML comes from Jinja2 templates: escaping is a type, not a habit.

The templates are package data (``report/templates``: the page, the building blocks as
macros, the CSS), loaded with :class:`jinja2.PackageLoader`, with autoescaping on. Every
``{{ value }}`` goes through :func:`text` (the environment's ``finalize``): HTML-escaped
(``html.escape``, quotes too) after :func:`ccanalytics._visible.visible` has made
control and bidirectional characters visible as escapes, so a name cannot hide or
reorder the text around it. What a template returns is :class:`markupsafe.Markup`, and
only Markup passes into another template unescaped; the Python side never builds HTML
from strings (the one exception, a drawn figure, is :func:`figure_html`, whose values go
through :func:`text` too).
"""

from __future__ import annotations

import html
from functools import cache
from typing import Any

import jinja2
from markupsafe import Markup

from ccanalytics._visible import visible

__all__ = ["block", "figure_html", "no_figure_html", "page", "text"]


def text(value: object) -> Markup:
    """``value`` as HTML text: visible, then escaped (Markup is HTML already: kept)."""
    if hasattr(value, "__html__"):
        return Markup(value)
    return Markup(html.escape(visible(str(value)), quote=True))


@cache
def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("ccanalytics.report", "templates"),
        autoescape=True,  # every template, whatever its name ends in
        finalize=text,
        keep_trailing_newline=True,  # the page ends in a newline, as it always has
        undefined=jinja2.StrictUndefined,  # a misspelt name is an error, not ""
    )


@cache
def _blocks() -> Any:
    return _environment().get_template("blocks.html.j2").module


def block(name: str, *args: Any) -> Markup:
    """The HTML of the building block (macro) ``name`` of ``blocks.html.j2``."""
    return Markup(getattr(_blocks(), name)(*args))


def page(title: str, parts: list[Markup]) -> str:
    """The whole document (``page.html.j2``): head, CSS, ``parts`` one per line, footer."""
    return _environment().get_template("page.html.j2").render(title=title, parts=parts)


def figure_html(data: str, width: int, height: int, alt: str, caption: str) -> Markup:
    """A drawn figure: the PNG (base64, from our own encoder) with its alt text and caption.

    The image is in a scrolling box: on a phone it keeps a size its labels read at and
    scrolls sideways, as a wide table does.

    Built here rather than in a template because the workers that draw figures return it
    as one snippet; ``Markup.format`` escapes each value (each made :func:`text` first,
    the report's one escaping), so it is as safe as a template's output.
    """
    return Markup(
        '<figure><div class="scroll"><img src="data:image/png;base64,{}" width="{}" '
        'height="{}" alt="{}"></div><figcaption>{}</figcaption></figure>'
    ).format(text(data), width, height, text(alt), text(caption))


def no_figure_html(alt: str) -> Markup:
    """What stands for a figure with nothing to draw (as :func:`figure_html`, escaped)."""
    return Markup('<p class="empty">{}: no data to draw.</p>').format(text(alt))
