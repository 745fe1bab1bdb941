"""``judge evaluate``: judgment sets compared with the human labels (alignment, κ/α, compatibility
and system-ranking agreement), and ``judge plot-summary`` (alignment against agreement over
several evaluations).

Pure computation: `comparison` (the measure registry over every judgment set: `evaluate`,
`Report`, `SetReport`), `summary` (the console tables and warnings) and `alignment_vs_agreement`
(one point per judgment set of an ``evaluation.json``). The roles: `pipeline` (`evaluate_paths`:
the inputs read from paths, then `evaluate`), `files` (``evaluation.json``, the CSV tables, the
figures of ``--plot``; the points of ``judge plot-summary`` read and written), `plots` (the
alignment bars, compatibility against the human measure, alignment against agreement) and
`command` (``judge evaluate``, ``judge plot-summary``).

Nothing is imported here: import the module that holds the name.
"""
