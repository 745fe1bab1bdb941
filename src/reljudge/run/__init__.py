"""The judging pipeline behind ``judge run``: inputs -> pool -> judge -> run directory.

`run_job` (and `run_job_async`, for callers that own an event loop or share one `LLMClient`
across many jobs, such as sweeps) performs one job:

1. resolve the inputs (a bundled or on-disk dataset, or explicit topics/qrels/corpus files;
   `reljudge.run.inputs`);
2. build the pool of items to judge (`reljudge.run.pool`) and read only the passages it uses,
   streaming the corpus file (`reljudge.run.passages`);
3. build the judge (`reljudge.judges.get_judge`; `reljudge.run.prepare`);
4. with ``dry_run``: estimate calls, tokens and cost, and stop (no call, nothing written;
   `reljudge.run.estimate`);
5. open the run directory, refuse to mix configurations (`reljudge.run.identity`), load the
   records of an earlier (interrupted) run so that nothing is judged twice;
6. run the judge, appending each record to ``judgments.jsonl`` as it is produced, counting what
   it spends (`reljudge.run.ledger`; `reljudge.run.job`);
7. write ``qrels.txt`` (the judge's primary score set of the records read back, streamed;
   `reljudge.run.finish`) and ``manifest.json`` atomically -- at the end, and also when the job is interrupted (Ctrl-C, or
   SIGTERM/SIGHUP through `reljudge.interrupts`) or aborted, so that nothing is lost and the
   same command resumes (`reljudge.run.finish`); the outcome is a `RunSummary`
   (`reljudge.run.summary`).

`RunConfig` (`reljudge.run.config`) holds every setting; the fields the command line sets carry
their option (`reljudge.run.options.Flag`), from which ``judge run`` and ``judge probe`` are
generated.
"""

from reljudge.run.config import IDENTITY_FIELDS, RunConfig
from reljudge.run.errors import OutputError, find_provider_abort
from reljudge.run.estimate import estimate_job, render_estimate
from reljudge.run.inputs import ResolvedInputs, load_resources, resolve_inputs
from reljudge.run.job import run_job, run_job_async
from reljudge.run.options import parse_option_value, parse_options, parse_pool_spec
from reljudge.run.passages import PassageStats, read_passages
from reljudge.run.pool import Pool, build_pool, check_passages
from reljudge.run.prepare import PreparedJob, build_judge, client_config, prepare
from reljudge.run.summary import RunSummary, failure_advice, failure_rate

__all__ = [
    "IDENTITY_FIELDS",
    "OutputError",
    "PassageStats",
    "Pool",
    "PreparedJob",
    "ResolvedInputs",
    "RunConfig",
    "RunSummary",
    "build_judge",
    "build_pool",
    "check_passages",
    "client_config",
    "estimate_job",
    "failure_advice",
    "failure_rate",
    "find_provider_abort",
    "load_resources",
    "parse_option_value",
    "parse_options",
    "parse_pool_spec",
    "prepare",
    "read_passages",
    "render_estimate",
    "resolve_inputs",
    "run_job",
    "run_job_async",
]
