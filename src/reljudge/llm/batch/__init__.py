"""Provider Batch APIs and other batch executors (``vllm run-batch``, Ray Data): the OpenAI batch
JSONL format (`lines`), the client's collect mode (`collect`: requests become batch lines instead
of calls), ingesting output lines through the synchronous path's reader, bounds, redaction and
validation (`ingest`), the run's failed lines (`failures`), the batch price (`price`) and the
Batch API through the official SDK (`service`). The job-level seam is
`reljudge.run.batch_collect`; ``judge run --batch`` is `reljudge.run.batch`. (Nothing is imported
here: each module is imported where it is used, so that a light one never pulls in the SDK.)
"""
