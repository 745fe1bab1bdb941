"""``judge leaderboard``: leaderboard meta-evaluation as TREC AutoJudge does it (how well a
judge's leaderboard ranks the runs the way a truth leaderboard does), with bootstrap intervals
over topics, and the agreement of a judge's qrels with truth qrels as relevant sets.

- `meta` (pure): the leaderboard model and the correlations of every measure pair (Kendall
  τ-b, τ_AP-b, τ_GAP, Spearman, Pearson; over all runs and the truth's top k; per topic);
- `qrels_agreement` (pure): precision, recall, F1, Jaccard and the adjusted Rand index of
  relevant sets;
- `files`: the leaderboard layouts read (AutoJudge's ir_measures / ``.eval.txt``, tot,
  rag4reports, jsonl, trec_eval) and the report's JSON and CSV files;
- `pipeline`: from paths to the report; `command`: ``judge leaderboard`` and its console table.

Nothing is imported here: import the module that holds the name.
"""
