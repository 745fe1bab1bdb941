"""``judge combine``: a consensus judgment set of several (prompts, models, runs), with the
per-item disagreement, α between the members and, with human labels, κ of each member and of the
consensus.

Pure computation: `members` (a member's scores and provenance; α between the members, κ against
the human labels). The roles: `files` (the members read from their sources; ``qrels.txt``,
``items.tsv`` and ``combine.json`` written), `pipeline` (the consensus of the members by a rule,
through `reljudge.aggregation.consensus`, as a `CombineReport`, and the text the command prints)
and `command` (``judge combine``).

Nothing is imported here: import the module that holds the name.
"""
