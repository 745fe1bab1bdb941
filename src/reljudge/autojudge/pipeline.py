"""Judging AutoJudge responses through reljudge's run machinery, and writing what AutoJudge reads.

One judging is one reljudge job (`reljudge.run.run_job`) in the run directory
``{filebase}.reljudge/``: its records, response cache, resume, ``max_cost`` cap and provenance
are the run's. The methods, with no qrels:

- **UMBRELA** (``umbrela``): each response is a passage of its topic (the query: the topic's
  title, problem statement and background on one line), graded 0-3 by UMBRELA's prompt; the
  grade is read from the model's answer only (`reljudge.judges.reading`). Measure ``umbrela``
  (the grade); qrels ``topic 0 md5(response text) grade``.
- **AutoNuggetizer** (``nuggets``): per topic, nuggets are created from the documents the
  topic's responses cite, pooled over the runs (the corpus's text, else the texts the topic's
  responses embed: `files.nugget_sources`) -- or, with ``nugget_source = "responses"``, from
  the responses -- then scored vital/okay and assigned to each response
  (`reljudge.judges.nuggets`). Measures ``nuggets.<score>`` (the six TREC RAG 2024 scores);
  the nugget bank in the Nuggetizer format.
- **Citation support** (``citation-support``): every sentence against every document it cites
  (`reljudge.judges.citations`), the document's text the one its own run embeds, else the
  corpus's, never another run's (`files.cited_documents`; a citation with neither is unjudged). Measures ``citation-support.<score>`` (precision, recall,
  F1, cited share).

Outputs (`reljudge.autojudge.outputs`) are written only when the job finished, each atomically;
a job that stopped (capped, aborted) raises `NotFinished` and the same spec resumes it.

**Privacy** (``privacy=True``): a response's text is sent to the model in the prompts (that is
the judging) and otherwise kept out of everything written or printed: the job's derived inputs
go to a temporary directory removed at the end; the records (``judgments.jsonl``) keep what the
judge needs -- the model's raw answer (``raw``; a model that quotes the response quotes it
there), hashes of the text (``answer_sha256``), ids and labels; nugget texts are the model's
(made from the responses with ``nugget_source="responses"``). The outputs hold run and topic
ids, MD5 doc ids and numbers; the console and logs name files, counts and ids. The response
cache stores the model's answers keyed by a hash of the prompt, never the prompt.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import reljudge.autojudge.files as files
import reljudge.autojudge.outputs as outputs
from reljudge.autojudge.outputs import Measure
from reljudge.autojudge.spec import NUGGET_SOURCES, RUN_OPTIONS, AutoJudgeResult, AutoJudgeSpec, NotFinished
from reljudge.errors import InputError, shown
from reljudge.judges.citations.judge import CitationSupportJudge
from reljudge.judges.nuggets.judge import NuggetJudge
from reljudge.judges.pairwise.judge import PairwiseJudge
from reljudge.judges.umbrela import UmbrelaJudge

logger = logging.getLogger(__name__)

#: the file of the response cache in ``cache_dir``
CACHE_FILE = "reljudge-cache.sqlite"
GRADE = UmbrelaJudge.name
NUGGETS = NuggetJudge.name
CITATIONS = CitationSupportJudge.name
PAIRWISE = PairwiseJudge.name
METHODS: tuple[str, ...] = (GRADE, NUGGETS, CITATIONS, PAIRWISE)

_NUGGET_MEANING = {
    "all": "share of the topic's nuggets the response supports (partial support counts 0.5)",
    "all-strict": "share of the topic's nuggets the response fully supports",
    "vital": "share of the topic's vital nuggets the response supports (partial support counts 0.5)",
    "vital-strict": "share of the topic's vital nuggets the response fully supports",
    "weighted": "nuggets supported, vital weighted 1 and okay 0.5, partial support counting half",
    "weighted-strict": "nuggets fully supported, vital weighted 1 and okay 0.5",
}
_PAIRWISE_MEANING = {
    "strength": "expected win share against the topic's other responses (Bradley-Terry fit of the sampled "
    "preferences; 0.5 average)",
    "winrate": "share of the response's own comparisons it won (a tie counts half; raw, favours survivors)",
    "comparisons": "comparisons the response took part in (the preference sampler's tournament)",
}
_CITATION_MEANING = {
    "precision": "mean support score of the response's judged citations (full 1, partial 0.5, none 0)",
    "recall": "mean over the response's sentences of each sentence's best citation support (uncited: 0)",
    "f1": "harmonic mean of citation precision and recall",
    "cited_share": "share of the response's sentences that cite a document",
}


def measures_of(method: str) -> list[Measure]:
    """The measures a method writes into the leaderboard, in order."""
    if method == GRADE:
        return [Measure(GRADE, "UMBRELA grade of the response for its topic (0-3), from the model's answer")]
    if method == PAIRWISE:
        return [Measure(f"{PAIRWISE}.{name}", meaning) for name, meaning in _PAIRWISE_MEANING.items()]
    if method == NUGGETS:
        from reljudge.judges.nuggets.scores import NUGGET_SCORES

        return [Measure(f"{NUGGETS}.{s}", _NUGGET_MEANING.get(s, s)) for s in NUGGET_SCORES]
    from reljudge.judges.citations.scores import SCORES

    return [Measure(f"{CITATIONS}.{s}", _CITATION_MEANING.get(s, s)) for s in SCORES]


def run_config(spec: AutoJudgeSpec, job: files.JobFiles) -> Any:
    """The `RunConfig` of the judging's job."""
    from reljudge.run.config import RunConfig

    options = dict(spec.options)
    settings = {k: options.pop(k) for k in list(options) if k in RUN_OPTIONS}
    if spec.method == NUGGETS:
        options.setdefault("min_grade", 1)  # the cited documents (grade 1) are the sources
    if spec.method == PAIRWISE:
        options.setdefault("pairs", "sampler")  # a tournament, not all n(n-1)/2 pairs
    cache_path = Path(spec.cache_dir) / CACHE_FILE if spec.cache_dir is not None else None
    try:
        return RunConfig(
            method=spec.method,
            model=spec.model,
            base_url=spec.base_url,
            api_key_env=spec.api_key_env,
            topics=job.topics,
            corpus=job.corpus,
            qrels=job.qrels,
            pool=job.pool,
            answers=job.answers,
            output=spec.run_dir,
            options=options,
            use_cache=spec.use_cache,
            cache_path=cache_path,
            cache_only=spec.cache_only,
            max_cost=spec.max_cost,
            prices=spec.prices,
            skip_missing=True,
            progress=None if spec.progress else False,
            **settings,
        )
    except ValueError as err:  # pydantic's validation of the settings
        raise InputError(f"bad setting: {err}") from None


def _check(spec: AutoJudgeSpec) -> None:
    if spec.method not in METHODS:
        raise InputError(f"unknown method {shown(spec.method)}; choose {', '.join(METHODS)}")
    if spec.nugget_source not in NUGGET_SOURCES:
        raise InputError(
            f"nugget source must be one of {', '.join(NUGGET_SOURCES)}, not {shown(spec.nugget_source)}"
        )
    if spec.nugget_format not in outputs.NUGGET_FORMATS:
        formats = ", ".join(outputs.NUGGET_FORMATS)
        raise InputError(f"nugget format must be one of {formats}, not {shown(spec.nugget_format)}")
    if spec.cache_only and not spec.use_cache:
        raise InputError("a replay from the cache (cache_only) needs the cache")
    name = spec.filebase_path.name
    if not name or any(c.isspace() for c in name) or name in (".", ".."):
        raise InputError(f"bad filebase {shown(str(spec.filebase))}")


#: libraries that log a request's messages at DEBUG (the OpenAI SDK logs its "Request options");
#: with ``privacy`` they log at INFO at most while the job runs
CHATTY_LOGGERS: tuple[str, ...] = ("openai", "httpcore", "httpx", "LiteLLM", "litellm")


@contextlib.contextmanager
def _no_request_logs(privacy: bool) -> Iterator[None]:
    """With ``privacy``: no DEBUG records from the libraries that would log the prompts."""
    if not privacy:
        yield
        return
    saved = {name: logging.getLogger(name).level for name in CHATTY_LOGGERS}
    for name in CHATTY_LOGGERS:
        log = logging.getLogger(name)
        if log.getEffectiveLevel() < logging.INFO:
            log.setLevel(logging.INFO)
    try:
        yield
    finally:
        for name, level in saved.items():
            logging.getLogger(name).setLevel(level)


def judge_responses(spec: AutoJudgeSpec) -> AutoJudgeResult:
    """Judge ``spec``'s responses with its method and write ``{filebase}.eval.txt``,
    ``.eval.measures.yml``, ``.config.yml`` and, per method, ``.qrels.txt`` (UMBRELA) or
    ``.nuggets.jsonl`` (nuggets). Bad input: `InputError` (``FILE:LINE``) before anything is
    written; a job that stopped: `NotFinished`."""
    from reljudge.run import run_job

    _check(spec)
    inputs = files.read_inputs(spec)
    with files.job_directory(spec) as where:
        if spec.method in (GRADE, PAIRWISE):
            job = files.write_response_passages(where, inputs)
        elif spec.method == NUGGETS:
            job = files.write_nugget_inputs(where, inputs, spec.nugget_source, spec.corpus)
        else:
            job = files.write_citation_inputs(where, inputs, spec.corpus)
        config = run_config(spec, job)
        with _no_request_logs(spec.privacy):
            summary = run_job(config)
        if summary.state != "finished":
            why = f" ({summary.abort.get('message')})" if summary.abort else ""
            raise NotFinished(
                f"the job is {summary.state}{why}: nothing written for AutoJudge; the same command "
                f"resumes ({spec.run_dir})",
                summary.state,
                summary.exit_code or 1,
                spec.run_dir,
            )
        values, extra = _scores(spec, config, job)
    result = _write(spec, inputs, job, values, extra, calls=summary.usage.calls, cached=summary.cache_hits)
    return replace(result, exit_code=summary.exit_code, failure_rate=summary.failure_rate)


def _scores(
    spec: AutoJudgeSpec, config: Any, job: files.JobFiles
) -> tuple[dict[tuple[str, str], dict[str, float | None]], dict[str, Any]]:
    """The measures of each (run, topic), and what else the method gives (qrels rows, nuggets)."""
    from reljudge.io.rundir import RunDir

    records = RunDir(spec.run_dir).judgments(latest=True)
    values: dict[tuple[str, str], dict[str, float | None]] = {}
    if spec.method == GRADE:
        grades: list[tuple[str, str, int]] = []
        for record in records:
            where = job.responses.get((record.qid, record.docid or ""))
            if record.method != GRADE or where is None or not record.ok or record.label is None:
                continue
            values[where] = {GRADE: float(record.label)}
            grades.append((where[1], (record.docid or "").rpartition(":")[2], int(record.label)))
        return values, {"qrels": grades}
    if spec.method == PAIRWISE:
        return _pairwise_scores(records, job), {}
    from reljudge.run.scored_answers import score_answers

    scored = score_answers(config, spec.run_dir)
    if scored is None:
        raise InputError(f"the {spec.method} judge gave no scores for the responses", spec.run_dir)
    names = [m.name for m in measures_of(spec.method)]
    for row in scored.scores.topics:
        values[(str(row["system"]), str(row["qid"]))] = {
            name: (None if row.get(name.partition(".")[2]) is None else float(row[name.partition(".")[2]]))
            for name in names
        }
    extra: dict[str, Any] = {}
    if spec.method == NUGGETS:
        from reljudge.judges.nuggets.sets import recorded_nuggets

        extra["bank"] = recorded_nuggets({r.key: r for r in records})
    return values, extra


def _pairwise_scores(records: Any, job: files.JobFiles) -> dict[tuple[str, str], dict[str, float | None]]:
    """Each response's tournament measures (`reljudge.autojudge.tournament`) from the pair records."""
    from reljudge.autojudge.tournament import scores_by_response

    pools: dict[str, list[str]] = {}
    for topic, docid in job.responses:
        pools.setdefault(topic, []).append(docid)
    pairs = [
        (r.qid, r.docid or "", r.docid_b or "", r.label if r.ok else None)
        for r in records
        if r.method == PAIRWISE and r.docid_b
    ]
    values: dict[tuple[str, str], dict[str, float | None]] = {}
    for (topic, docid), scores in scores_by_response(pools, pairs).items():
        values[job.responses[(topic, docid)]] = {f"{PAIRWISE}.{k}": v for k, v in scores.items()}
    return values


def _prompts(spec: AutoJudgeSpec) -> list[dict[str, str]]:
    """The prompts the records were made with (id and SHA-256), from their provenance."""
    from reljudge.io.rundir import RunDir

    seen: dict[str, str] = {}
    for record in RunDir(spec.run_dir).judgments(latest=True):
        prov = record.provenance
        if prov.prompt_id and prov.prompt_sha256:
            seen.setdefault(prov.prompt_id, prov.prompt_sha256)
    return [{"id": k, "sha256": v} for k, v in sorted(seen.items())]


def _write(
    spec: AutoJudgeSpec,
    inputs: files.Inputs,
    job: files.JobFiles,
    values: Mapping[tuple[str, str], Mapping[str, float | None]],
    extra: Mapping[str, Any],
    *,
    calls: int,
    cached: int,
) -> AutoJudgeResult:
    from reljudge.version import __version__

    base = spec.filebase_path
    measures = measures_of(spec.method)
    runs = sorted({r.answer.system for r in inputs.responses})
    rows = outputs.leaderboard_rows(values, inputs.topic_ids, measures, runs=runs)
    judged = set(values)
    unjudged = tuple(
        sorted(
            (r.answer.system, r.answer.qid)
            for r in inputs.responses
            if (r.answer.system, r.answer.qid) not in judged
        )
    )
    qrels_path = nuggets_path = None
    texts: dict[Path, str] = {}
    eval_txt = base.parent / f"{base.name}.eval.txt"
    measures_yml = base.parent / f"{base.name}.eval.measures.yml"
    config_yml = base.parent / f"{base.name}.config.yml"
    texts[eval_txt] = outputs.leaderboard_text(rows)
    texts[measures_yml] = outputs.measures_yaml(measures)
    if "qrels" in extra:
        qrels_path = base.parent / f"{base.name}.qrels.txt"
        texts[qrels_path] = outputs.qrels_text(extra["qrels"])
    if "bank" in extra:
        nuggets_path = base.parent / f"{base.name}.nuggets.jsonl"
        by_topic = extra["bank"]
        banks = [
            (t.request_id, t.title, [(n.text, n.importance) for n in by_topic.get(t.request_id, [])])
            for t in inputs.topics
        ]
        texts[nuggets_path] = outputs.NUGGET_FORMATS[spec.nugget_format](banks)
    options = {k: v for k, v in sorted(spec.options.items())}
    config: dict[str, Any] = {
        "name": base.name,
        "judge": "reljudge",
        "reljudge_version": __version__,
        "method": spec.method,
        "llm_model": spec.model,
        "prompts": _prompts(spec),
        "parameters": {
            "options": options,
            "track": spec.track,
            "nugget_source": spec.nugget_source if spec.method == NUGGETS else None,
            "nugget_format": spec.nugget_format if spec.method == NUGGETS else None,
            "privacy": spec.privacy,
        },
        "responses": len(inputs.responses),
        "runs": len(runs),
        "topics": len(inputs.topics),
        "unjudged": [f"{run}/{topic}" for run, topic in unjudged],
        "measures": [m.name for m in measures],
        "aggregate": "mean over the topics file's topics; a topic without a row counts 0 (fix_aggregate)",
    }
    if job.missing_citations:
        config["citations_without_text"] = job.missing_citations
    if job.nugget_sources is not None:
        config["nugget_source_texts"] = dict(job.nugget_sources)
    if job.documents_without_text:
        config["cited_documents_without_text"] = job.documents_without_text
    texts[config_yml] = outputs.config_yaml(config)
    for path, text in texts.items():
        files.write_text(path, text)
    return AutoJudgeResult(
        eval_txt=eval_txt,
        measures_yml=measures_yml,
        qrels=qrels_path,
        nuggets=nuggets_path,
        config_yml=config_yml,
        run_dir=spec.run_dir,
        calls=calls,
        cached=cached,
        method=spec.method,
        responses=len(inputs.responses),
        unjudged=unjudged,
        warnings=(*inputs.warnings, *evidence_warnings(spec, job)),
    )


def evidence_warnings(spec: AutoJudgeSpec, job: files.JobFiles) -> list[str]:
    """One line each: the citations judged against no text (their run does not embed the
    document, the corpus does not hold it) and the cited documents no nugget was made from."""
    where = "the corpus does not hold it" if spec.corpus is not None else "no --corpus was given"
    found = []
    if job.missing_citations:
        found.append(
            f"{job.missing_citations} citation(s) in {job.missing_responses} response(s) have no text to be "
            f"judged against (their run does not embed the document and {where}): unjudged, left out of "
            "precision (citations_without_text in the config)"
        )
    if job.documents_without_text:
        found.append(
            f"{job.documents_without_text} cited (topic, document) pair(s) have no text to make nuggets from "
            f"(no response to the topic embeds the document and {where}): not nugget sources "
            "(cited_documents_without_text in the config)"
        )
    return found
