"""Taking snapshots from the API into the store, once or on a schedule.

- ``_collect``: :func:`~ccanalytics.history.collect` takes one snapshot of some clusters
  and appends it;
- ``_collector``: :func:`~ccanalytics.history.collect_every`, the scheduled loop, which
  compacts each closed day;
- ``_schedule``: whether a schedule fits the API's rate limits (its budget).

It may import :mod:`ccanalytics.history.store`, :mod:`ccanalytics.api`,
:mod:`ccanalytics.frames` and the base modules; never the queries or the alerts (the
store is the only thing the two sides share).
"""
