"""reljudge's judges under TREC AutoJudge's runner: ``auto-judge run --workflow W.yml`` with one of
the shipped workflow files (`WORKFLOWS`, ``workflows/{umbrela,nuggets,citation-support,pairwise}.yml``)
runs `reljudge.autojudge.judge_responses` in the three protocol calls of autojudge-base 1.0.0
(``judge_runner.run_judge``): ``create_nuggets`` (NuggetCreatorProtocol), ``create_qrels``
(QrelsCreatorProtocol) and ``judge`` (LeaderboardJudgeProtocol).

Every call judges the same `AutoJudgeSpec`, so reljudge's run directory
(``{filebase}.reljudge/``), response cache, resume, cost cap and provenance sit underneath: the
first call judges, the later ones of the same run find the run directory finished and send
nothing. What each call gives back is read from the files reljudge wrote, with autojudge-base's
own readers (the Nuggetizer nugget bank, the qrels, the ``ir_measures`` leaderboard with its
values kept as written), and the runner writes them again where it wants them.

What the runner injects, and what is taken from where:

- ``filebase``: for ``create_nuggets``/``create_qrels`` the workflow's name (the runner adds
  ``outdir``), for ``judge`` a path that already includes the out dir; both name the same files;
- the responses: autojudge-base's `Report` objects, each knowing the file it was read from
  (``Report.path``): those files are what reljudge reads (all their lines: the runner's
  ``--limit-runs``/``--topics`` subsets are refused rather than silently widened);
- the topics: autojudge-base's `Request` objects, written to ``{filebase}.topics.jsonl`` (the
  fields they hold, in order; byte-stable) for reljudge to read;
- the model: ``llm_config.model`` (``OPENAI_MODEL``, or the workflow's ``llm_model``); the
  endpoint: ``OPENAI_BASE_URL``; the key: read by reljudge's client from ``OPENAI_API_KEY`` at
  request time and never written anywhere (only the variable's name is passed on);
- the cache: the folder ``CACHE_DIR`` names (``LLM_CACHE_DIR`` too, as autojudge-base reads it);
  unset: reljudge's default cache. ``RELJUDGE_CACHE_ONLY=1`` (or the setting ``cache_only:
  true``): answers from the cache alone, no request leaves the machine, a miss is an error naming
  the item -- the replay an evaluation platform makes with the endpoint disabled;
- settings of the workflow (``settings``/``*_settings``, or ``--set`` on the command line):
  ``max_cost`` (US dollars; also ``RELJUDGE_MAX_COST``), ``privacy``, ``track``,
  ``nugget_source``, ``nugget_format`` (``nuggetizer`` or ``v3``), ``prices``, ``corpus`` (the
  runner's ``--corpus``, when it is a path) and ``options`` (a mapping: decoding and judge
  options, `AutoJudgeSpec.options`).

A judging that did not finish (the cost cap, an aborted provider) leaves no output AutoJudge
reads; the adapter prints ``error: ...`` and ends the process with reljudge's exit code (3
capped, 1 otherwise), and the same command resumes. Bad input ends it with ``error: FILE:LINE:
...`` and exit code 2.

autojudge-base is imported here only, inside the methods: nothing else of reljudge needs it,
and ``pip install 'reljudge[autojudge]'`` brings it.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn

from reljudge.autojudge.pipeline import CITATIONS, GRADE, NUGGETS, PAIRWISE

WORKFLOWS = Path(__file__).resolve().parent / "workflows"
#: the methods with a shipped workflow file, ``workflows/{method}.yml``
METHODS: tuple[str, ...] = (GRADE, NUGGETS, CITATIONS, PAIRWISE)
#: the environment variable that turns the cache-only replay on
CACHE_ONLY_ENV = "RELJUDGE_CACHE_ONLY"
MAX_COST_ENV = "RELJUDGE_MAX_COST"
#: settings the runner or autojudge-base itself puts in every phase's keyword arguments
RUNNER_KEYS = frozenset({"filebase", "outdir", "corpus", "llm_model"})
#: settings the adapter reads (anything else is refused: a misspelt setting must not pass quietly)
SETTINGS = frozenset(
    {"max_cost", "privacy", "track", "nugget_source", "nugget_format", "prices", "options", "cache_only"}
)


def workflow_path(method: str) -> Path:
    """The shipped ``workflow.yml`` of ``method`` (one of `METHODS`)."""
    if method not in METHODS:
        raise ValueError(f"no workflow for {method!r}; there are: {', '.join(METHODS)}")
    return WORKFLOWS / f"{method}.yml"


def _fail(message: str, code: int) -> NoReturn:
    print(f"error: {message}", file=sys.stderr)
    raise SystemExit(code)


def _truthy(value: object) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in {"1", "true", "yes", "on"}
    return bool(value)


def _filebase(filebase: object, outdir: object) -> Path:
    """The output path without suffixes: the judge phase's ``filebase`` already holds the out
    dir; the other phases' is a bare name under ``outdir``."""
    base = Path(str(filebase))
    if base.is_absolute() or base.parent != Path("."):
        return base
    return Path(str(outdir or ".")) / base


def _response_files(rag_responses: Iterable[Any] | None) -> list[Path]:
    """The files the responses were read from, sorted; refuses a subset of their lines."""
    reports = list(rag_responses or [])
    if not reports:
        _fail("no responses were given (--rag-responses names a folder of .jsonl files)", 2)
    paths = {getattr(r, "path", None) for r in reports}
    if None in paths:
        _fail("a response does not say which file it was read from (Report.path)", 2)
    files = sorted(Path(str(p)).resolve() for p in paths)
    lines = 0
    for f in files:
        with f.open("rb") as handle:
            lines += sum(1 for line in handle if line.strip())
    if lines != len(reports):
        _fail(
            f"the runner gave {len(reports)} of the {lines} responses in {len(files)} file(s) "
            "(--limit-runs, --limit-topics, --topics or --runs): reljudge judges whole response "
            "files, so give it a folder holding just the files to judge",
            2,
        )
    return files


def _write_topics(rag_topics: Sequence[Any], path: Path) -> Path:
    """The topics as JSON Lines, each `Request`'s fields that are set, in their order."""
    from reljudge.io.atomic import write_text_atomic

    lines = [json.dumps(t.model_dump(mode="json", exclude_none=True), ensure_ascii=False) for t in rag_topics]
    text = "\n".join(lines) + "\n"
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        write_text_atomic(path, text)
    return path


def _cache_dir() -> Path | None:
    for name in ("CACHE_DIR", "LLM_CACHE_DIR"):
        value = os.environ.get(name, "").strip()
        if value:
            return Path(value)
    return None


def spec_for(
    method: str,
    rag_responses: Iterable[Any] | None,
    rag_topics: Sequence[Any],
    llm_config: Any,
    kwargs: Mapping[str, Any],
) -> Any:
    """The `AutoJudgeSpec` of one protocol call (module docstring says what comes from where)."""
    from reljudge.autojudge import AutoJudgeSpec

    unknown = sorted(set(kwargs) - RUNNER_KEYS - SETTINGS)
    if unknown:
        _fail(
            f"unknown workflow setting(s) {', '.join(unknown)} for reljudge's {method} judge "
            f"(it reads: {', '.join(sorted(SETTINGS))})",
            2,
        )
    base = _filebase(kwargs.get("filebase", "reljudge"), kwargs.get("outdir"))
    options = kwargs.get("options") or {}
    if not isinstance(options, Mapping):
        _fail(f"the workflow setting 'options' must be a mapping, got {options!r}", 2)
    max_cost = kwargs.get("max_cost", os.environ.get(MAX_COST_ENV) or None)
    corpus = kwargs.get("corpus")
    model = getattr(llm_config, "model", None)
    if not model:
        _fail("no model: set OPENAI_MODEL (or llm_model in the workflow's settings)", 2)
    base.parent.mkdir(parents=True, exist_ok=True)
    return AutoJudgeSpec(
        responses=_response_files(rag_responses),
        topics=_write_topics(rag_topics, base.parent / f"{base.name}.topics.jsonl"),
        method=method,
        model=str(model),
        out_dir=base.parent,
        filebase=base,
        base_url=getattr(llm_config, "base_url", None) or None,
        api_key_env="OPENAI_API_KEY" if os.environ.get("OPENAI_API_KEY") else None,
        cache_dir=_cache_dir(),
        cache_only=_truthy(kwargs.get("cache_only", False)) or _truthy(os.environ.get(CACHE_ONLY_ENV, "")),
        max_cost=float(max_cost) if max_cost is not None else None,
        privacy=_truthy(kwargs.get("privacy", False)),
        options=dict(options),
        corpus=Path(corpus) if corpus and Path(str(corpus)).exists() else None,
        track=kwargs.get("track"),
        nugget_source=str(kwargs.get("nugget_source", "documents")),
        nugget_format=str(kwargs.get("nugget_format", "nuggetizer")),
        prices=Path(str(kwargs["prices"])) if kwargs.get("prices") else None,
    )


def judge_once(spec: Any) -> Any:
    """`judge_responses` of ``spec``, with reljudge's errors turned into the command's exit."""
    from reljudge.autojudge import NotFinished, judge_responses
    from reljudge.errors import InputError

    try:
        result = judge_responses(spec)
    except NotFinished as stopped:
        _fail(f"{stopped} (run directory {stopped.run_dir}; the same command resumes)", stopped.exit_code)
    except InputError as bad:
        _fail(str(bad), 2)
    for warning in result.warnings:
        print(f"[reljudge] warning: {warning}", file=sys.stderr)
    print(
        f"[reljudge] {spec.method}: {result.calls} request(s) sent, {result.cached} answer(s) from "
        f"the cache; run directory {result.run_dir}",
        file=sys.stderr,
    )
    return result


class _ReljudgeJudge:
    """The three protocols over one reljudge method (`METHOD`)."""

    METHOD = ""

    #: the nugget bank format this class declares to the runner (``nugget_banks_type``, read by
    #: the runner before any phase): ``nuggetizer`` or ``v3``
    NUGGET_FORMAT = "nuggetizer"

    @property
    def nugget_banks_type(self) -> type:
        """The nugget bank container of `NUGGET_FORMAT`, autojudge-base's class."""
        from autojudge_base.nugget_data import NuggetBanks, NuggetizerNuggetBanks

        return NuggetBanks if self.NUGGET_FORMAT == "v3" else NuggetizerNuggetBanks

    def _judged(self, rag_responses: Any, rag_topics: Any, llm_config: Any, kwargs: Mapping[str, Any]) -> Any:
        return judge_once(spec_for(self.METHOD, rag_responses, rag_topics, llm_config, kwargs))

    def create_nuggets(
        self,
        rag_responses: Iterable[Any] | None,
        rag_topics: Sequence[Any],
        llm_config: Any,
        nugget_banks: Any = None,
        **kwargs: Any,
    ) -> Any:
        """NuggetCreatorProtocol: reljudge's nugget bank (None for a method without nuggets)."""
        from autojudge_base.workflow.paths import load_nugget_banks_from_path

        spec = spec_for(self.METHOD, rag_responses, rag_topics, llm_config, kwargs)
        if spec.nugget_format != self.NUGGET_FORMAT:
            _fail(
                f"nugget_format {spec.nugget_format!r} with {type(self).__name__}, which declares "
                f"{self.NUGGET_FORMAT!r} nugget banks to the runner: use "
                f"{'NuggetsV3Judge' if spec.nugget_format == 'v3' else 'NuggetsJudge'} as nugget_class",
                2,
            )
        result = judge_once(spec)
        if result.nuggets is None:
            return None
        banks = load_nugget_banks_from_path(result.nuggets, self.nugget_banks_type)
        from autojudge_base.nugget_data.verification import NuggetBanksVerificationError

        try:  # the runner's own verification, which would end in a traceback
            banks.verify([t.request_id for t in rag_topics])
        except NuggetBanksVerificationError as refused:
            _fail(
                f"{result.nuggets}: {refused}; autojudge-base's nugget phase refuses that. Run with "
                "create_nuggets: false (the shipped nuggets workflow), which keeps reljudge's own bank, "
                "empty topics included",
                1,
            )
        return banks

    def create_qrels(
        self,
        rag_responses: Iterable[Any],
        rag_topics: Sequence[Any],
        llm_config: Any,
        nugget_banks: Any = None,
        **kwargs: Any,
    ) -> Any:
        """QrelsCreatorProtocol: reljudge's qrels (None for a method without them)."""
        from autojudge_base.workflow.paths import load_qrels_from_path

        result = self._judged(rag_responses, rag_topics, llm_config, kwargs)
        return load_qrels_from_path(result.qrels) if result.qrels is not None else None

    def judge(
        self,
        rag_responses: Iterable[Any],
        rag_topics: Sequence[Any],
        llm_config: Any,
        nugget_banks: Any = None,
        qrels: Any = None,
        **kwargs: Any,
    ) -> Any:
        """LeaderboardJudgeProtocol: reljudge's leaderboard, its values kept as written."""
        from autojudge_base import Leaderboard

        result = self._judged(rag_responses, rag_topics, llm_config, kwargs)
        return Leaderboard.load(result.eval_txt, format="ir_measures")


class UmbrelaJudge(_ReljudgeJudge):
    """UMBRELA (Upadhyay et al. 2024) of each response against its topic."""

    METHOD = GRADE


class NuggetsJudge(_ReljudgeJudge):
    """AutoNuggetizer (Pradeep et al. 2025): nuggets per topic, assigned to each response."""

    METHOD = NUGGETS


class NuggetsV3Judge(NuggetsJudge):
    """`NuggetsJudge` declaring autojudge-base's v3 nugget banks (claims) to the runner: the
    ``nugget_class`` for ``nugget_format: v3`` with ``create_nuggets: true``."""

    NUGGET_FORMAT = "v3"


class CitationSupportJudge(_ReljudgeJudge):
    """Citation support: does each cited document support the sentence citing it."""

    METHOD = CITATIONS


class PairwiseTournamentJudge(_ReljudgeJudge):
    """Pairwise preferences between a topic's responses, in a tournament (the preference
    sampler) rather than all pairs, scored by a Bradley-Terry fit (`reljudge.autojudge.tournament`)."""

    METHOD = PAIRWISE


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m reljudge.autojudge.adapter [METHOD]``: the path of the shipped workflow file of
    METHOD, or of every method (``method<TAB>path``)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in ("-h", "--help"):
        print(f"usage: python -m reljudge.autojudge.adapter [{'|'.join(METHODS)}]")
        return 0
    if len(args) > 1 or (args and args[0] not in METHODS):
        print(f"error: give one of {', '.join(METHODS)} (or nothing: all of them)", file=sys.stderr)
        return 2
    if args:
        print(workflow_path(args[0]))
    else:
        for method in METHODS:
            print(f"{method}\t{workflow_path(method)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
