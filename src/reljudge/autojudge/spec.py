"""What a judging of AutoJudge responses is given (`AutoJudgeSpec`) and what it gives back
(`AutoJudgeResult`). Plain data: no I/O."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: where the nuggets of the nugget method come from: the documents the responses cite (embedded,
#: else from the corpus), or the responses themselves
NUGGET_SOURCES: tuple[str, ...] = ("documents", "responses")
#: decoding and run settings ``options`` may hold besides the judge's own options (``-o``)
RUN_OPTIONS: tuple[str, ...] = (
    "temperature",
    "seed",
    "max_tokens",
    "prompt",
    "concurrency",
    "timeout_s",
    "max_attempts",
    "rpm",
    "tpm",
    "max_failure_rate",
    "max_passage_chars",
)


@dataclass(frozen=True)
class AutoJudgeSpec:
    """One judging of AutoJudge responses.

    ``responses``: response files (JSON Lines) or directories of ``*.jsonl``; ``topics``: the
    AutoJudge topics file; ``method``: ``umbrela``, ``nuggets`` or ``citation-support``;
    ``filebase``: the name of the output files, ``{filebase}.eval.txt`` etc. -- a bare name is
    put under ``out_dir``, a path (AutoJudge injects one that already includes the out dir) is
    taken as it is. The run directory is ``{filebase}.reljudge/`` beside the outputs, so the
    same spec again resumes it and a replay with ``cache_only`` makes no request.

    ``cache_dir``: the directory of the response cache (``reljudge-cache.sqlite`` in it;
    AutoJudge's ``CACHE_DIR``); None: reljudge's default cache. ``options``: decoding and run
    settings named in `RUN_OPTIONS` (``temperature``, ``seed``, ``max_tokens``, ``prompt``, ...);
    every other key is an option of the judge (``-o key=value``). ``track``: an AutoJudge track
    id (``rag26``, ``ragtime26``, ``kiddie``, ...) whose submission rules the responses are held
    to (`reljudge.autojudge.tracks`). ``corpus``: passages for cited documents a response does
    not embed. ``privacy``: response text kept out of everything but the prompts and the records
    the judge needs (`reljudge.autojudge.pipeline` says what is kept where)."""

    responses: Sequence[Path] | Path
    topics: Path
    method: str
    model: str
    out_dir: Path = Path(".")
    filebase: str | Path = "reljudge"
    base_url: str | None = None
    api_key_env: str | None = None
    cache_dir: Path | None = None
    cache_only: bool = False
    max_cost: float | None = None
    privacy: bool = False
    options: Mapping[str, Any] = field(default_factory=dict)
    corpus: Path | None = None
    track: str | None = None
    nugget_source: str = "documents"
    #: the format of ``{filebase}.nuggets.jsonl``: ``nuggetizer`` or ``v3`` (`reljudge.autojudge.outputs`)
    nugget_format: str = "nuggetizer"
    prices: Path | None = None
    #: use the response cache at all (False: neither read nor write it)
    use_cache: bool = True
    #: show the progress bar (on a terminal)
    progress: bool = False

    @property
    def filebase_path(self) -> Path:
        """Where the outputs go, without their suffixes: ``filebase`` when it names a directory
        (AutoJudge's injected filebase), else ``out_dir / filebase``."""
        base = Path(self.filebase)
        if base.is_absolute() or base.parent != Path("."):
            return base
        return Path(self.out_dir) / base

    @property
    def run_dir(self) -> Path:
        """reljudge's run directory: ``{filebase}.reljudge``."""
        base = self.filebase_path
        return base.parent / f"{base.name}.reljudge"


@dataclass(frozen=True)
class AutoJudgeResult:
    """The files written (``qrels`` and ``nuggets`` None where the method makes none), the run
    directory, the requests sent (``calls``) and the answers the cache gave (``cached``) over
    all jobs of this judging, the responses judged and those left without a score
    (``unjudged``: ``(run, topic)``, e.g. an answer that could not be read), the warnings (the
    track's, and the citations or cited documents left without a text), and the job's exit code
    and share of failed records."""

    eval_txt: Path
    measures_yml: Path
    qrels: Path | None
    nuggets: Path | None
    config_yml: Path
    run_dir: Path
    calls: int
    cached: int
    method: str = ""
    responses: int = 0
    unjudged: tuple[tuple[str, str], ...] = ()
    warnings: tuple[str, ...] = ()
    #: the job's exit code: 1 when the share of failed records (unparsed, api_error, ...) is above
    #: ``max_failure_rate`` (the outputs are written all the same, the failed ones unscored)
    exit_code: int = 0
    failure_rate: float = 0.0


class NotFinished(Exception):
    """A job stopped before every response was judged (capped at ``max_cost``, aborted by the
    provider, failed): nothing AutoJudge reads was written; the same spec resumes.
    ``exit_code`` is the run's (3 capped, 1 aborted or failed)."""

    def __init__(self, message: str, state: str, exit_code: int, run_dir: Path):
        super().__init__(message)
        self.state = state
        self.exit_code = exit_code
        self.run_dir = run_dir
