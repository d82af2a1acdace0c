"""Every HTML page fabricplan writes, rendered from one set of Jinja2 templates.

The templates live in ``report/templates/`` (package data): ``base.html.j2`` is the layout every
page extends (head, the one stylesheet inlined, plotly.js inlined once when the page has charts, the
header, the footer); each page has its own template that fills the base's ``content`` block;
``macros.html.j2`` holds the shared pieces (a table of plain-text cells, a bullet list, a chart).
``report.css`` is the one stylesheet, inlined into every page so each report stays one offline file.

Autoescaping is on for every template: any text from a spec, a log or a catalog is escaped; only
plotly's own figure markup (``figure_div``) and the stylesheet are marked safe. jinja2 and plotly
load only here, when a page is rendered (``--html`` / ``--plot``).
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

#: The stylesheet's first line: every page carries it (tests check that each page uses the one stylesheet).
STYLESHEET_MARKER = "/* fabricplan report stylesheet */"
#: plotly's options for every chart on every page.
PLOTLY_CONFIG = {"responsive": True, "displaylogo": False}


def _templates():
    return resources.files("fabricplan.report").joinpath("templates")


@cache
def stylesheet() -> str:
    """The one stylesheet (``templates/report.css``), as inlined into every page."""
    return _templates().joinpath("report.css").read_text(encoding="utf-8")


@cache
def environment():
    """The Jinja2 environment: package templates, autoescaping on, undefined names an error."""
    import jinja2

    from fabricplan.report.quotes import cjk_runs

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("fabricplan.report", "templates"),
        autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
        keep_trailing_newline=True)
    env.filters["cjk"] = _cjk_filter(cjk_runs)
    return env


def _cjk_filter(cjk_runs):
    """A filter: the text escaped, each run of Chinese text inside ``<span lang="zh">`` so the browser
    picks a CJK font for it (the stylesheet's ``:lang(zh)`` stack)."""
    from markupsafe import Markup, escape

    def cjk(text: object) -> Markup:
        out = []
        for run, is_cjk in cjk_runs(str(text)):
            out.append(Markup('<span lang="zh">{}</span>').format(run) if is_cjk else escape(run))
        return Markup("").join(out)

    return cjk


def plotly_js() -> str:
    """plotly.js, to inline once in a page's head (offline: no CDN)."""
    from plotly.offline import get_plotlyjs

    return get_plotlyjs()


def figure_div(figure: Any, div_id: str):
    """A plotly figure as a div and its drawing script (plotly's own markup, safe to insert); expects
    plotly.js on the page (a page with ``charts=True``)."""
    import plotly.io as pio
    from markupsafe import Markup

    return Markup(pio.to_html(figure, include_plotlyjs=False, full_html=False, div_id=div_id,
                              config=PLOTLY_CONFIG))


def render(template: str, *, title: str, command: str, charts: bool = False, **context: Any) -> str:
    """One page: ``template`` (which extends the base layout) with ``context``. ``title`` is the
    page's title and heading, ``command`` the fabricplan command that wrote it (header and footer),
    ``charts`` inlines plotly.js once in the head."""
    from markupsafe import Markup

    page = environment().get_template(template)
    return page.render(title=title, command=command, stylesheet=Markup(stylesheet()),
                       plotly_js=Markup(plotly_js()) if charts else None, **context)
