"""The client's side of batches: the OpenAI batch JSONL format (`lines`), the client's collect
mode (`collect`: requests become batch lines instead of calls), ingesting output lines through the
synchronous path's reader, bounds, redaction and validation (`ingest`), the failed lines the
collect mode answers from (`failures`), and the provider adapters of the Batch API: the official
SDK (`service`) and LiteLLM's batch functions (`litellm_service`), chosen by the backend
(`reljudge.llm.backends.capabilities`). The run's side -- passes, waves, their state, the cost cap,
request files, export and import -- is `reljudge.run.batch`. (Nothing is imported here: each
module is imported where it is used, so that a light one never pulls in the SDK.)
"""
