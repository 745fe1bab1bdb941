"""``judge fd``: the Fréchet-distance baseline (Arabzadeh & Clarke, EACL 2024), FD@k between the
judged relevant passages and the passages each run retrieves, and its variants.

Pure computation: `frechet` (the distance between two Gaussian fits), `per_run` (FD@k of runs
and generated answers, the reference and retrieved sets, the agreement with a human measure),
`resamples` (FD of many topic resamples at once, and the jackknife intervals over topics) and `variants`
(several variants side by side, the τ matrix, the human measure's intervals). The vectors come
from `reljudge.vectors`. Roles: `pipeline` (from paths), `files` (tables and report files),
`plots` (``fd_bootstrap.png``), `command` (``judge fd``).
"""
