"""``judge pool-bias``: simulated pooling bias (Yilmaz et al.): is a test collection built from
the runs of one type fair to runs of another type?

- `simulation` (pure): depth pools, qrels restricted to a pool, the seeded half-splits with
  group closure, τ and signed errors per test type, the relevant documents found by depth;
- `pipeline`: from a qrels file, the runs and a run-type file to the report;
- `files`: the report's JSON and CSV files (and its figures) written;
- `plots`: the two figures; `command`: ``judge pool-bias`` and its console table.

Nothing is imported here: import the module that holds the name.
"""
