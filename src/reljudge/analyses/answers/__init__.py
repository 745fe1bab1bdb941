"""``judge answers``: generated answers (TREC RAG 2024 or TSV files) checked, converted, and
measured against judged passages (thesis §5.1), and ``judge evaluate --answers``'s ranking of
generators and runs together.

Pure computation: `similarity` (cosine of answers to judged passages, the cross-grade
validation of the encoder) and `common_scale` (runs and generators on one scale, the
no-judgment anchors). FD of answers is `reljudge.analyses.fd.per_run.fd_answers`; the vectors
come from `reljudge.vectors`. Roles: `pipeline` (from paths), `files` (anchor runs read, tables
and report files), `plots` (``cross_grade.png``, ``common_scale.png``), `command` (``judge
answers``).
"""
