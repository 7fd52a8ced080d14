"""History: snapshots over time in an append-only Parquet store, and answers over windows.

(Interim: the store and ``History`` arrive from the history-store branch.)
"""
