"""The pool of a job: which (topic, passage) items -- or pairs -- it judges, in a fixed order.

Topics come in the order of the topics file; inside a topic the documents in the order of the
qrels file (``qrels`` pool) or by rank (``run:``/``unjudged:`` pools; trec_eval order: score
descending, ties by docid descending), or the pairs of a pairs file in file order.
``topics_limit=N`` keeps the first N topics that have pooled items; ``limit=N`` then keeps the
first N items of that sequence (a pair is one item). Running with a larger limit (or none) later
extends the same job: the items already judged are not judged again.

A pool of topics (``topics_only``, for a judge that reads no passages: answer generation) holds
the topics of that sequence with no documents -- every topic when there are no qrels and the pool
is ``qrels`` -- and ``limit=N`` keeps its first N topics.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from reljudge.errors import InputError
from reljudge.run.config import RunConfig
from reljudge.run.inputs import ResolvedInputs, SharedInputs
from reljudge.run.options import parse_pool_spec


@dataclass
class Pool:
    """The items of one job: per topic, documents (and, for pairwise, explicit pairs)."""

    docs: dict[str, list[str]]
    pairs: dict[str, list[tuple[str, str]]] | None = None
    pair_categories: dict[tuple[str, str, str], tuple[str, str]] = field(default_factory=dict)
    description: str = ""
    #: a pool of topics (no documents): its items are its topics
    topics_only: bool = False

    @property
    def n_items(self) -> int:
        if self.topics_only:
            return len(self.docs)
        if self.pairs is not None:
            return sum(len(p) for p in self.pairs.values())
        return sum(len(d) for d in self.docs.values())


def build_pool(
    config: RunConfig,
    inputs: ResolvedInputs,
    *,
    topics_only: bool = False,
    shared: SharedInputs | None = None,
) -> Pool:
    """The items to judge, in a fixed order, with ``topics_limit`` and ``limit`` applied; with
    ``topics_only``, the topics (see the module docstring). ``shared``: inputs shared with other
    jobs (a sweep's cells), its pairs file read once for all of them."""
    from reljudge.io.pairs import read_pairs
    from reljudge.io.trec import read_run

    topic_order = list(inputs.topics)
    kind, run_path, k = parse_pool_spec(config.pool)
    if topics_only:
        if kind == "qrels" and inputs.qrels is None and config.pairs is None:
            docs: dict[str, list[str]] = {q: [] for q in topic_order}
            description = "every topic"
        else:
            found = build_pool(config.model_copy(update={"limit": None, "topics_limit": None}), inputs)
            docs = {q: [] for q in found.docs}
            description = f"the topics of the {found.description}"
        keep = list(docs)[: min(n for n in (config.topics_limit, config.limit, len(docs)) if n is not None)]
        if not keep:
            raise InputError("the pool is empty: no topic")
        return Pool(docs={q: [] for q in keep}, description=description, topics_only=True)
    pairs: dict[str, list[tuple[str, str]]] | None = None
    categories: dict[tuple[str, str, str], tuple[str, str]] = {}
    if config.pairs is not None:
        pairs, categories = shared.pairs(config.pairs) if shared is not None else read_pairs(config.pairs)
        unknown = [q for q in pairs if q not in inputs.topics]
        if unknown:
            raise InputError(
                f"{len(unknown)} topic(s) of the pairs file are not among the topics: {', '.join(unknown[:5])}",
                config.pairs,
            )
        docs = {q: _unique(d for pair in pairs[q] for d in pair) for q in topic_order if q in pairs}
        description = f"pairs from {config.pairs}"
    elif kind == "qrels":
        if inputs.qrels is None:
            raise InputError("the pool 'qrels' needs a qrels file: give --qrels, or --pool run:FILE:K")
        docs = {q: list(inputs.qrels[q]) for q in topic_order if inputs.qrels.get(q)}
        extra = [q for q in inputs.qrels if q not in inputs.topics]
        if extra and not docs:
            raise InputError(f"no qrels topic is among the topics (e.g. {extra[0]!r})")
        description = "judged pairs of the qrels"
    else:
        assert run_path is not None and k is not None
        # only each topic's top k kept (the file streamed); an unknown topic is file:line bad input
        run = read_run(run_path, topics=inputs.topics, top_k=k)
        unknown = [q for q in run if q not in inputs.topics]
        docs = {}
        for q in topic_order:
            if q not in run:
                continue
            ranked = run.ranked(q)[:k]
            if kind == "unjudged":
                if inputs.qrels is None:
                    raise InputError("the pool 'unjudged:FILE:K' needs a qrels file (--qrels or a dataset)")
                judged = inputs.qrels.get(q, {})
                ranked = [d for d in ranked if d not in judged]
            if ranked:
                docs[q] = ranked
        if not docs:
            hint = f" (run topics such as {unknown[0]!r} are not among the topics)" if unknown else ""
            raise InputError(f"the pool is empty{hint}", run_path)
        what = "top" if kind == "run" else "unjudged documents of the top"
        description = f"{what} {k} of {run_path}"
    if config.topics_limit is not None:
        keep = list(docs)[: config.topics_limit]
        docs = {q: docs[q] for q in keep}
        if pairs is not None:
            pairs = {q: pairs[q] for q in keep}
    if config.limit is not None:
        docs, pairs = _limit(docs, pairs, config.limit)
    if pairs is not None:
        pairs = {q: pairs[q] for q in docs}
        categories = {
            key: c for key, c in categories.items() if key[0] in pairs and (key[1], key[2]) in pairs[key[0]]
        }
    if not docs:
        raise InputError("the pool is empty: nothing to judge")
    return Pool(docs=docs, pairs=pairs, pair_categories=categories, description=description)


def _limit(
    docs: dict[str, list[str]], pairs: dict[str, list[tuple[str, str]]] | None, budget: int
) -> tuple[dict[str, list[str]], dict[str, list[tuple[str, str]]] | None]:
    """The first ``budget`` items (documents, or pairs when there are pairs)."""
    if pairs is not None:
        limited_pairs: dict[str, list[tuple[str, str]]] = {}
        for q, qpairs in pairs.items():
            if budget <= 0:
                break
            limited_pairs[q] = qpairs[:budget]
            budget -= len(limited_pairs[q])
        return {
            q: _unique(d for pair in limited_pairs[q] for d in pair) for q in limited_pairs
        }, limited_pairs
    limited: dict[str, list[str]] = {}
    for q, qdocs in docs.items():
        if budget <= 0:
            break
        limited[q] = qdocs[:budget]
        budget -= len(limited[q])
    return limited, None


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def check_passages(pool: Pool, inputs: ResolvedInputs, *, skip_missing: bool) -> list[tuple[str, str]]:
    """The (qid, docid) items whose passage text is missing; an InputError unless ``skip_missing``."""
    missing = [(q, d) for q, ds in pool.docs.items() for d in ds if d not in inputs.corpus]
    no_query = [q for q in pool.docs if q not in inputs.topics]
    if no_query:
        raise InputError(f"{len(no_query)} pooled topic(s) have no query text: {', '.join(no_query[:5])}")
    if missing and not skip_missing:
        shown = ", ".join(f"{q}/{d}" for q, d in missing[:5])
        more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        source = inputs.sources.get("corpus", "the corpus")
        raise InputError(
            f"{len(missing)} pooled passage(s) have no text in {source}: {shown}{more} "
            "(give a corpus that holds them, or --skip-missing to record them as 'skipped')"
        )
    return missing
