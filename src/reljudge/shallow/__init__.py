"""``judge shallow``: the shallow-pool pipeline (thesis §3.1) over files.

Each step reads its inputs through `reljudge.io`, computes with the
pure modules of `reljudge.analyses.shallow` and writes its outputs atomically:

- `sources`: the judged pairs as `Preferences`, from a pairwise run directory or from human grades;
- `btp`: ``btp-pairs`` and ``btp`` (and the best-known update); `reljudge.analyses.shallow.pipeline`: ``pool`` and
  ``tournament``; `leaderboard`: ``leaderboard``;
- `reljudge.analyses.shallow.plots`: the win-ratio heat map.
"""

from reljudge.analyses.shallow.pipeline import pool_step, tournament_step
from reljudge.shallow.btp import btp_pairs_step, btp_step
from reljudge.shallow.leaderboard import leaderboard_step
from reljudge.shallow.sources import load_preferences

__all__ = [
    "btp_pairs_step",
    "btp_step",
    "leaderboard_step",
    "load_preferences",
    "pool_step",
    "tournament_step",
]
