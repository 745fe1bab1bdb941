"""``judge histogram``: Distributional Overlap (DO) and Histogram Slope Analysis (HSA) of
Krstovski et al. per run, correlated with standard measures.

- `do_hsa` (pure): the histograms of relevant and non-relevant values, DO, HSA, the values of a
  run, the report and its correlations;
- `pipeline`: from a qrels file and the runs (or a scores file) to the report;
- `files`: the scores file read, the report's JSON and CSV files written (and its figures);
- `plots`: the two figures; `command`: ``judge histogram`` and its console tables.

Nothing is imported here: import the module that holds the name.
"""
