"""``judge shallow``: shallow pools and preference judgments (thesis §3.1): "better than perfect",
shallow pools of top passages, win ratios between runs, preference qrels by tournament and their
leaderboard impact.

The pure computation (the pairs are judged elsewhere, by ``judge run --method pairwise --pairs``
or by the human grades through `human_preferences`, and arrive as `Preferences`):

- `preference_outcomes`: outcomes keyed by unordered pair; the human-grade judge;
- `btp`: reference passages, categories A/B, their pairs and tallies, the binomial test, the
  best-known update;
- `shallow_pools`: pools of the runs' top passages and q*, their statistics, the seeded query
  sample, the unordered pairs;
- `winratio`: win ratios with Bonferroni-corrected binomial tests;
- `tournament`: preference qrels by tournament, pairings won;
- `leaderboard`: MRR@10 leaderboards, Kendall τ, bootstrap, perfect ranker, consistency,
  leave-one-run-out.

The roles: `files` (pool and pairs files, the judged pairs read back as preferences, the runs,
the reports), `pipeline` (each step from paths to written files: ``btp-pairs``, ``btp``, ``pool``,
``tournament``, ``leaderboard``), `plots` (the win-ratio heat map, the leaderboard plot) and
`command` (the ``judge shallow`` commands).

Nothing is imported here: import the module that holds the name.
"""
