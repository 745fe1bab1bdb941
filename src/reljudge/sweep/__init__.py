"""Prompt-sensitivity sweeps: many prompts × models × datasets, judged and compared.

- `reljudge.sweep.config` — the YAML file (pydantic, errors with ``file:line``);
- `reljudge.sweep.prompts` — built-in, inline and collection prompts;
- `reljudge.sweep.grid` — the cells and ``--only`` filters;
- `reljudge.sweep.execute` — sampled inputs, running every cell with shared clients, resuming;
- `reljudge.sweep.published` — the published prompt-sensitivity judgments as cells;
- `reljudge.sweep.analysis` — κ / agreement per cell, per-group mean and variance, α between
  prompts, ranking stability; `reljudge.sweep.report` / `plots` — CSV, JSON, PNG, Markdown.
"""
