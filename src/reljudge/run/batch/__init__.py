"""A job through a batch, on the run's side (the client's side and the provider adapters are
`reljudge.llm.batch`):

- `seam`: the seam between a job and any batch executor -- a pass of the job in collect mode
  writes the request lines it still needs; output lines are ingested into its response cache;
- `passes`: ``judge run --batch``, the passes of a job through a provider's Batch API, their
  requests cut into waves, sent, polled and ingested, resumably;
- `state`: the waves and how far each got (``batch/state.json``);
- `cost`: ``--max-cost`` with ``--batch`` (a wave is sent only when its bound fits);
- `requests`: where a pass's request lines go (one file, or shards by topic);
- `exchange`: ``judge batch export`` / ``import``, request and output files for an engine
  reljudge does not drive.

(Nothing is imported here: each module is imported where it is used.)
"""
