"""Preparing a job: everything that can fail on bad input, before anything is written or called
-- the model string (resolved once: the `ResolvedModel` travels with the job), the judge, the
inputs and pool, the passages, the run directory's identity, the LLM client's settings and the
price table."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from reljudge.errors import InputError
from reljudge.run.config import RunConfig
from reljudge.run.identity import check_identity, default_output_dir, job_identity
from reljudge.run.inputs import ResolvedInputs, SharedInputs, load_resources, resolve_inputs
from reljudge.run.options import concurrency_setting
from reljudge.run.passages import PassageStats, read_passages
from reljudge.run.pool import Pool, build_pool, check_passages

logger = logging.getLogger(__name__)

if TYPE_CHECKING:
    from reljudge.io.rundir import RunDir
    from reljudge.judges.base import Judge, JudgeInputs, PoolRequest
    from reljudge.llm import ClientConfig
    from reljudge.llm.pricing import PriceTable
    from reljudge.llm.routing import ResolvedModel
    from reljudge.records import Judgment


@dataclass
class PreparedJob:
    """A job whose inputs are read and checked (nothing written, nothing called yet)."""

    config: RunConfig
    #: the job's model string, resolved once (its backend and what the backend can do)
    model: ResolvedModel
    resolved: ResolvedInputs
    pool: Pool
    judge: Judge
    inputs: JudgeInputs
    rundir: RunDir
    manifest: dict[str, Any]
    #: the latest record of each key already in the run directory (a compact, lazy mapping)
    existing: Mapping[tuple[str, str, str, str, str], Judgment]
    #: the job's price table (litellm's map, updated from ``--prices``)
    prices: PriceTable
    #: what reading the pooled passages found (long passages, truncation)
    passages: PassageStats = field(default_factory=lambda: PassageStats())


def prepare(
    config: RunConfig, *, read_existing: bool = True, shared: SharedInputs | None = None
) -> PreparedJob:
    """Everything that can fail on bad input, before anything is written or called.

    ``read_existing=False`` leaves ``existing`` empty (a job reads the run directory once it
    holds its lock, see `reljudge.run.job.run_job_async`). ``shared``: inputs shared with other
    jobs on the same data (a sweep's cells), each dataset resolved and its passages read once."""
    from reljudge.io.rundir import RunDir
    from reljudge.llm.backends import sdk_libraries
    from reljudge.llm.pricing import price_table

    model = resolve_job_model(config)
    judge = build_judge(config, model=model)
    if config.samples > 1 and not judge.pointwise:
        from reljudge.judges.registry import listed, pointwise_methods

        raise InputError(
            f"--samples applies to pointwise judges ({listed(pointwise_methods())}), not {config.method}"
        )
    resources = load_resources(config, judge)
    if judge.reads_passages:
        resolved = shared.resolve(config) if shared is not None else resolve_inputs(config, passages=False)
        chosen = judge.pool(pool_request(config, resolved, resources))  # a judge choosing its items
        if chosen is not None:
            resources = chosen.resources
            pool = Pool(docs=chosen.docs, description=chosen.description)
        else:
            pool = build_pool(config, resolved, shared=shared)
        passages = read_passages(config, resolved, pool, shared)  # only the pooled ones
        if chosen is None or chosen.check_texts:
            check_passages(pool, resolved, skip_missing=config.skip_missing)
    else:  # a judge of topics (answer generation, images): no passage is read
        resolved = resolve_inputs(config, passages=False, need_corpus=False)
        chosen = judge.pool(pool_request(config, resolved, resources))  # images of grids
        if chosen is not None:
            resources = chosen.resources
            pool = Pool(docs=chosen.docs, description=chosen.description)
        else:
            pool = build_pool(config, resolved, topics_only=True)
        passages = PassageStats()
        check_passages(pool, resolved, skip_missing=chosen is not None)
    rundir = RunDir(config.output or default_output_dir(config, resolved.name), libraries=sdk_libraries())
    manifest = check_identity(rundir, job_identity(config, judge))
    existing: Mapping[tuple[str, str, str, str, str], Judgment] = (
        rundir.index(lazy_methods=label_methods(judge)).existing if read_existing else {}
    )
    prices = price_table(config.prices)
    note = price_warning(prices, model)  # a --prices entry that cannot price the model: bad input, now
    if note is not None and (shared is None or shared.first_time(note)):  # a sweep says it once
        logger.warning("%s", note)
    if config.dry_run and existing:  # an estimate that can count what is done (nuggets of answers)
        resources["existing_records"] = existing
    return PreparedJob(
        config=config,
        model=model,
        resolved=resolved,
        pool=pool,
        judge=judge,
        inputs=judge_inputs(resolved, pool, resources),
        rundir=rundir,
        manifest=manifest,
        existing=existing,
        passages=passages,
        prices=prices,
    )


def price_warning(prices: PriceTable, model: ResolvedModel) -> str | None:
    """What to tell the user about the model's price: taken from ANOTHER model's entry of the
    price map (the name only starts with its key: a typo or a version the map does not list), or
    none found; with the closest name the map lists ("did you mean"). Unknown models are not
    refused (a self-hosted name is legitimate). The quote, ``priced_as`` included, is recorded
    in the manifest."""
    from reljudge.llm.price_map import litellm_map
    from reljudge.llm.pricing import close_names, is_free

    quote = prices.quote(model)
    table = prices.builtin if prices.builtin is not None else litellm_map()
    if quote.stand_in is None and (quote.known or is_free(model.backend) or not table.entries):
        return None
    close = [c for c in close_names(table, model.backend, model.model) if c != quote.stand_in]
    hint = f"; did you mean {close[0]!r}?" if close else ""
    if quote.stand_in is not None:
        return (
            f"{model.named!r} has no entry of its own in the {table.source}: priced as {quote.stand_in!r}, "
            f"another model's entry{hint} (--prices FILE sets its own price)"
        )
    return (
        f"{model.named!r} is not in the {table.source}: its cost counts as unknown{hint}" if close else None
    )


def pool_request(config: RunConfig, resolved: ResolvedInputs, resources: dict[str, Any]) -> PoolRequest:
    """What the run offers a judge that chooses its items (`reljudge.judges.base.Judge.pool`):
    the resources read for it, the limits, and the run's own pool without them, on demand."""
    from reljudge.judges.base import PoolRequest

    def run_pool() -> tuple[dict[str, list[str]], str]:
        found = build_pool(config.model_copy(update={"topics_limit": None, "limit": None}), resolved)
        return found.docs, found.description

    return PoolRequest(resources, config.topics_limit, config.limit, run_pool)


def label_methods(judge: Judge) -> tuple[str, ...]:
    """The record methods of the judge's labels (its name when it declares none)."""
    return tuple(judge.label_methods) or (judge.name,)


def judge_inputs(inputs: ResolvedInputs, pool: Pool, given: Mapping[str, Any] | None = None) -> JudgeInputs:
    """What the judge gets: topics, the read passages, the pool and the resources."""
    from reljudge.judges.base import JudgeInputs

    resources: dict[str, Any] = {"nonrelevant_grade": inputs.nonrelevant_grade}
    if pool.pair_categories:
        resources["pair_categories"] = dict(pool.pair_categories)
    resources.update(given or {})
    return JudgeInputs(
        topics=inputs.topics,
        corpus=inputs.corpus,
        pool=pool.docs,
        qrels=inputs.qrels,
        pairs=pool.pairs,
        resources=resources,
    )


def resolve_job_model(config: RunConfig) -> ResolvedModel:
    """The job's model string, resolved (`reljudge.llm.routing`); a typo in its backend prefix
    is bad input."""
    from reljudge.llm.routing import resolve_model

    try:
        return resolve_model(config.model)
    except ValueError as err:
        raise InputError(f"--model {config.model!r}: {err}") from None


def judge_options(config: RunConfig, model: ResolvedModel | None = None) -> dict[str, Any]:
    """The judge's constructor options: ``--option``s and ``--prompt``, adapted by the judge to
    the run's inputs (`Judge.adapt_options`: with a ``--pairs`` file a pairwise judge judges
    exactly those pairs). ``model``: the job's resolved model (resolved here when not given)."""
    from reljudge.judges.registry import registered

    options = dict(config.options)
    if config.prompt is not None:
        if "prompt" in options:
            raise InputError("give the prompt either with --prompt or with --option prompt=..., not both")
        options["prompt"] = config.prompt  # a bundled prompt id or a template file
    cls = registered().get(config.method)
    if cls is not None:
        options = cls.adapt_options(options, pairs_given=config.pairs is not None)
    if config.constrain != "off":
        options["constrain"] = _constraint(config, cls, options, model)
    return options


def _constraint(config: RunConfig, cls: Any, options: Mapping[str, Any], model: ResolvedModel | None) -> str:
    """The mechanism of ``--constrain`` (``auto``: the backend's own, `reljudge.judges.constrain`)."""
    import inspect

    from reljudge.judges.constrain import auto_mechanism
    from reljudge.judges.registry import listed, option_takers

    if "constrain" in options:
        raise InputError(
            "give the constraint either with --constrain or with --option constrain=..., not both"
        )
    if cls is None or "constrain" not in inspect.signature(cls).parameters:
        raise InputError(
            f"--constrain applies to pointwise judges ({listed(option_takers('constrain'))}), not {config.method}"
        )
    if config.constrain != "auto":
        return config.constrain
    backend = (model or resolve_job_model(config)).backend
    try:
        return auto_mechanism(backend, config.base_url)
    except ValueError as err:
        raise InputError(f"--constrain auto: {err}") from None


def build_judge(config: RunConfig, *, model: ResolvedModel | None = None, **overrides: Any) -> Judge:
    """The judge of a job (an unknown method is bad input); ``model``: the job's resolved model
    (resolved when needed and not given)."""
    from reljudge.judges.registry import available_judges, get_judge, unknown_method

    if config.method not in available_judges():
        raise InputError(unknown_method(config.method))
    return get_judge(config.method, **{**judge_options(config, model), **overrides})


#: the alternatives asked for at each token with ``--scores expected`` (OpenAI's maximum)
EXPECTED_TOP_LOGPROBS = 20


def client_config(
    config: RunConfig, prices: PriceTable | None = None, model: ResolvedModel | None = None
) -> ClientConfig:
    """The `ClientConfig` of a job; the API key is read from ``api_key_env`` (when given) and
    exists only in memory. ``prices``: the job's price table (default: read from
    ``config.prices``, see `reljudge.llm.pricing.price_table`); ``model``: the job's resolved
    model (default: resolved here)."""
    from reljudge.llm import ClientConfig
    from reljudge.llm.pricing import price_table

    resolved = model if model is not None else resolve_job_model(config)
    api_key: str | None = None
    if config.api_key_env is not None:
        api_key = os.environ.get(config.api_key_env)
        if not api_key:
            raise InputError(f"--api-key-env {config.api_key_env}: the environment variable is not set")
    if prices is None and config.prices is not None:
        prices = price_table(config.prices)
    kwargs: dict[str, Any] = dict(
        model=config.model,
        resolved=resolved,
        base_url=config.base_url,
        api_key=api_key,
        concurrency=concurrency_setting(config.concurrency)[0],
        adaptive=concurrency_setting(config.concurrency)[1],
        rpm=config.rpm,
        tpm=config.tpm,
        timeout_s=config.timeout_s,
        max_attempts=config.max_attempts,
        use_cache=config.use_cache,
        cache_only=config.cache_only,
        temperature=config.temperature,
        seed=config.seed,
        max_tokens=config.max_tokens,
        logprobs=config.logprobs or config.scores == "expected",
        top_logprobs=EXPECTED_TOP_LOGPROBS if config.scores == "expected" else None,
        extra_params=dict(config.params),
        prices=prices if config.prices is not None else None,
        max_cost_usd=config.max_cost,
        accept_served_models=tuple(config.accept_served_model),
    )
    if config.cache_path is not None:
        kwargs["cache_path"] = config.cache_path
    try:
        return ClientConfig(**kwargs)
    except ValueError as err:
        raise InputError(str(err)) from None
