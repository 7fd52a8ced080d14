"""Plots of pods and GPU frames, drawn the way seaborn draws.

Every function takes the frame first (``pods`` from :func:`ccanalytics.pods_frame` or
:func:`ccanalytics.load_cluster_pods`, ``gpus`` from :func:`ccanalytics.gpus_frame`),
then keyword-only options, draws on ``ax`` (``plt.gca()`` when none is given) and
returns that :class:`~matplotlib.axes.Axes`. Nothing here calls ``plt.show()``,
creates a figure when given an axes, or touches ``rcParams``: a plot is a function
of its arguments, so notebooks, scripts and :mod:`ccanalytics.report` share it.

- :func:`utilization_by_rank`: one cluster's ranks, GPU mean with min-max range,
  CPU and memory, stragglers highlighted and annotated;
- :func:`gpu_heatmap`: per-GPU utilization, rank x GPU index;
- :func:`cost_vs_utilization`: each pod's price against its GPU utilization, with
  the idle region and the idle spend marked;
- :func:`cost_breakdown`: cost per hour by GPU type or cluster, split into spend on
  GPUs in use, on idle GPUs, and on pods reporting no metrics;
- :func:`waste_breakdown`: idle and unused-capacity cost per cluster or GPU type,
  ranked by waste, from a live summary or ``History.idle_cost(by="cluster")``.

Over time, from the frames :class:`ccanalytics.History` returns (``util`` from
``History.utilization``, ``costs`` from ``History.idle_cost(by="day")``):

- :func:`utilization_over_time`: each cluster's GPU utilization, one line each,
  unobserved buckets left as gaps;
- :func:`rank_time_heatmap`: one cluster's ranks x time, a chronic straggler a
  dark row, unobserved cells hatched;
- :func:`idle_cost_by_day`: each day's spend stacked into idle pods, unused
  capacity of the pods in use, and the rest;
- :func:`backtest_tradeoff`: idle rules from ``History.backtest``, each one's saving
  against its false stops;
- :func:`spend_outlook`: each budget period from ``History.spend``, spent so far
  and the forecast of the rest with its P10-P90 interval, the burn-rate line marked.

Nothing to draw (an empty frame, a cluster without GPU metrics, no pod with a cost)
raises :class:`NoDataError`, a :class:`ValueError`: an empty axes would read as
"zero utilization" or "costs nothing", which is a different and wrong statement.

Colours are the Okabe-Ito palette (distinguishable with the common colour-vision
deficiencies), and the highlighted categories also differ by hatch or marker, so
the plots survive greyscale printing. Units are the service's: utilization in
integer percent (0-100) and cost in USD per hour. Every string that comes from the
API (cluster ids, GPU types, statuses) is drawn literally: a ``$`` never starts
matplotlib's mathtext. Legends sit beside or below the data, never on it; draw on a
figure with ``layout="constrained"`` (or save with ``bbox_inches="tight"``, as
Jupyter does) so they get their room, down to a 4 x 3 in axes.

One module per kind of plot (``_rank``, ``_heatmap``, ``_cost``, ``_time``); ``_style`` holds what
they share (palette, labels, docstring parts, checks), ``_layout`` where legends,
titles and rank ticks go, and ``reads`` the columns each plot of a pods frame reads. Plots may import :mod:`ccanalytics.analysis` and the
frames; the report and the CLI import them.
"""

from __future__ import annotations

import lazy_loader

# Every public name imported on first use, listed once in ``__init__.pyi``: a module
# that only needs to know what a plot reads (``reads``: the report, before it draws
# in its workers) imports no matplotlib.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
