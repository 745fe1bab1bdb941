"""``judge calibrate``: fit the mapping from a judge's scores to human grades on a few labelled
topics, and measure on the other topics what it gains over the default threshold.

Pure computation: `calibration` (the κ-maximising threshold, the ordinal cut-points, the
cross-validation over random topic splits) and `summary` (the text the command prints). The roles:
`pipeline` (from paths: the human labels and the chosen judgment set, then the cross-validation),
`files` (``calibration.json`` and the calibrated qrels of the first split) and `command`
(``judge calibrate``).

Nothing is imported here: import the module that holds the name.
"""
