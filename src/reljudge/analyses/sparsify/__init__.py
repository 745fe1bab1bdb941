"""``judge sparsify``: the sparse-label baseline of the FD paper: how far does a system ranking
move when each topic keeps at most N relevant judgments?

- `sparse_qrels` (pure): the sparsified qrels and Kendall τ between the run rankings under the
  full and the sparsified qrels, over seeded repetitions;
- `pipeline`: from a qrels file and the runs to the report;
- `files`: the report's JSON and CSV files (and its figure) written;
- `plots`: the figure; `command`: ``judge sparsify`` and its console table.

Nothing is imported here: import the module that holds the name.
"""
