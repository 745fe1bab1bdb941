"""Reading only the passages a job uses, streaming the corpus file; long passages reported or cut."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from reljudge.run.config import DEFAULT_WARN_PASSAGE_CHARS, RunConfig
from reljudge.run.inputs import ResolvedInputs, SharedInputs
from reljudge.run.pool import Pool


@dataclass
class PassageStats:
    """What reading the pooled passages found: how many were read, how many are longer than
    ``warn_chars`` as they will be sent (and the longest), how many were cut to ``max_chars``."""

    read: int = 0
    warn_chars: int = DEFAULT_WARN_PASSAGE_CHARS
    long: int = 0
    longest: tuple[str, int] | None = None  # (docid, characters) as sent
    max_chars: int | None = None
    truncated: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "read": self.read,
            "warn_chars": self.warn_chars,
            "longer": self.long,
            "longest": list(self.longest) if self.longest else None,
            "max_chars": self.max_chars,
            "truncated": self.truncated,
        }

    def warning(self) -> str | None:
        """One line about the passages longer than ``warn_chars`` (None when there are none)."""
        if not self.long or self.longest is None:
            return None
        docid, chars = self.longest
        advice = "" if self.max_chars is not None else "; --max-passage-chars N cuts them to N characters"
        return (
            f"{self.long} pooled passage(s) are longer than {self.warn_chars:,} characters (the longest, "
            f"{docid}, has {chars:,}): they cost many tokens and may not fit the model's context{advice}"
        )


def read_passages(
    config: RunConfig, inputs: ResolvedInputs, pool: Pool, shared: SharedInputs | None = None
) -> PassageStats:
    """Read only the passages a job can use into ``inputs.corpus`` -- the pooled ones and the
    judged ones of the pooled topics (nuggets are made from those) -- streaming the corpus file,
    so that memory holds these passages, not the collection; cut those longer than
    ``max_passage_chars``; count the pooled ones longer than ``warn_passage_chars``."""
    from reljudge.io.corpus import Corpus

    pooled = {d for docs in pool.docs.values() for d in docs}
    wanted = set(pooled)
    if inputs.qrels is not None:
        for qid in pool.docs:
            wanted.update(inputs.qrels.get(qid, ()))

    def read() -> dict[str, str]:
        source = inputs.dataset.passages(wanted) if inputs.dataset is not None else inputs.corpus
        return {d: source[d] for d in wanted if d in source}

    origin = inputs.dataset if inputs.dataset is not None else inputs.corpus
    texts = shared.passages(origin, frozenset(wanted), read) if shared is not None else read()
    stats = PassageStats(
        read=sum(1 for d in pooled if d in texts),
        warn_chars=config.warn_passage_chars,
        max_chars=config.max_passage_chars,
    )
    limit = config.max_passage_chars
    if limit is not None:
        for docid, text in texts.items():
            if len(text) > limit:
                texts[docid] = text[:limit]
                stats.truncated += docid in pooled
    if config.warn_passage_chars:
        for docid in sorted(pooled):
            chars = len(texts.get(docid, ""))
            if chars > config.warn_passage_chars:
                stats.long += 1
                if stats.longest is None or chars > stats.longest[1]:
                    stats.longest = (docid, chars)
    path = getattr(origin, "paths", {}).get("corpus") if inputs.dataset is not None else None
    inputs.corpus = Corpus(texts, path or getattr(origin, "path", None))
    return stats
