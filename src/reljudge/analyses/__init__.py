"""The analyses: one folder per analysis (``judge evaluate``, ``judge fd``, ``judge shallow``, ...),
each holding everything of that analysis and nothing of another.

An analysis folder has pure computation modules, named by their idea, and up to four modules of
fixed roles:

- ``files.py``: reading the analysis's inputs and writing its outputs (tables through
  `reljudge.io.tables`, figures through `reljudge.io.figures`, always atomically);
- ``plots.py``: its figures;
- ``pipeline.py``: from paths to written files (reads, computes, writes), what the command and
  the Python API call;
- ``command.py``: its typer command(s), wired into the app by one line in `reljudge.cli`.

Every other module of an analysis folder is pure: it does no file or process I/O and imports no
application code (only `reljudge.records`, `reljudge.errors`, `reljudge.metrics` and the pure
modules of analyses); `tests/test_layering.py` checks this module by module. What several
analyses share lives below them (`reljudge.metrics`, `reljudge.io`, `reljudge.vectors`) or, for
their inputs (judgment sets, human labels, runs), in `reljudge.analyses.inputs`; the plain-text
table they print is `reljudge.analyses.text_table` (pure, so their pure modules may use it).

Nothing is imported here: ``judge --help`` imports only the commands, and a command imports its
heavy modules when it runs.
"""
