"""The submission rules of each TREC AutoJudge track, as autojudge-base 1.0.0's
``track_specs.yml`` states them (its "DRAFT track-year submission specs"), checked on the raw
report lines.

Each rule breaks into finding categories (the spec's names). A category the track lists among
its ``smells`` is a warning (``FILE:LINE: category: what``, returned); any other is bad input
(`InputError`, ``FILE:LINE: what``), as autojudge-base's ``report_spec_verification`` treats
them. Checked: the metadata a track requires (``metadata``) and the length of ``run_id``
(``run_id_length``); the key the sentences are under (``sentences_key``) and the metadata key of
the topic id; the citation shapes it accepts (``citation_format``: ``rag24`` indices,
``ragtime`` id -> score maps, ``neuclir`` id lists); citations per sentence
(``citation_count``); the pattern of cited document ids (``docid_pattern``); the length of the
response in words or characters after NFKC, fixed or from the request's ``limit``
(``length``); blank sentences (``blank_sentence``); and the references: ``cited_only`` (every
reference cited, every cited document referenced: ``references_uncited``,
``references_undeclared``, ``references_missing``), ``retrieval_list`` (cited ones referenced,
at most ``references_max``), duplicates (``references_duplicate``). What the reader refuses
anyway (bad JSON, a citation outside ``references``, a topic answered twice) stays an error.
Pure apart from `check_files`, which reads the lines.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reljudge.errors import InputError, shown
from reljudge.io.autojudge import MAX_LINE_BYTES, AutoJudgeTopic
from reljudge.io.lines import loads_json, read_lines

_DEFAULT_SMELLS = ("empty_answer", "blank_sentence", "duplicate_topics")
_UUID_SEGMENT = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}_\d+"
_MSMARCO_SEGMENT = r"msmarco_v2\.1_doc_\d\d_\d+#\d+_\d+"


@dataclass(frozen=True)
class TrackRules:
    """One track-year's rules (the fields of ``track_specs.yml`` that are checked here)."""

    track: str
    sentence_types: tuple[str, ...]
    sentences_key: str
    topic_id_field: str
    mandatory_metadata: tuple[str, ...]
    run_id_max_len: int | None = None
    docid_pattern: str | None = None
    references_kind: str = "ignore"
    references_optional: bool = False
    references_max: int | None = None
    max_citations_per_sentence: int | None = None
    length_unit: str = "words"
    length_limit: int | None = None
    length_limit_request_field: str | None = None
    smells: tuple[str, ...] = _DEFAULT_SMELLS


#: the tracks of autojudge-base 1.0.0's ``track_specs.yml``
TRACKS: dict[str, TrackRules] = {
    r.track: r
    for r in (
        TrackRules(
            "rag26", ("rag24", "neuclir"), "answer", "narrative_id",
            ("team_id", "narrative_id", "narrative", "run_id", "run_desc"),
            run_id_max_len=20, docid_pattern=r"shard_\d+_\d+", references_kind="retrieval_list",
            max_citations_per_sentence=3, length_limit=1024,
            smells=("empty_answer", "references_duplicate", "references_uncited", "citation_count",
                    "missing_topics"),
        ),
        TrackRules(
            "rag25", ("rag24", "neuclir"), "answer", "narrative_id",
            ("team_id", "run_id", "type", "narrative_id", "narrative"),
            docid_pattern=_MSMARCO_SEGMENT, references_kind="retrieval_list", references_max=100,
            length_limit=400,
            smells=("empty_answer", "references_duplicate", "references_uncited", "length"),
        ),
        TrackRules(
            "rag25-autojudge", ("ragtime", "rag24", "neuclir"), "answer", "narrative_id",
            ("team_id", "run_id", "narrative_id"), docid_pattern=_MSMARCO_SEGMENT, length_limit=400,
            smells=("empty_answer", "blank_sentence", "duplicate_topics", "references_duplicate",
                    "references_uncited", "length"),
        ),
        TrackRules(
            "ragtime25", ("ragtime", "neuclir"), "responses", "topic_id", ("team_id", "topic_id", "run_id"),
            run_id_max_len=25, docid_pattern=_UUID_SEGMENT, references_kind="cited_only",
            max_citations_per_sentence=3, length_unit="chars", length_limit_request_field="limit",
            smells=("empty_answer", "blank_sentence", "duplicate_topics", "references_duplicate",
                    "references_missing", "references_undeclared", "metadata_recommended",
                    "citation_count", "length"),
        ),
        TrackRules(
            "ragtime26", ("ragtime", "neuclir"), "responses", "topic_id", ("team_id", "topic_id", "run_id"),
            run_id_max_len=20, docid_pattern=_UUID_SEGMENT, references_optional=True,
            max_citations_per_sentence=3, length_unit="chars", length_limit_request_field="limit",
            smells=("empty_answer", "blank_sentence", "duplicate_topics", "citation_count",
                    "metadata_recommended", "length"),
        ),
        TrackRules(
            "dragun25", ("neuclir",), "responses", "topic_id",
            ("team_id", "run_id", "topic_id", "type", "use_starter_kit"),
            docid_pattern=_MSMARCO_SEGMENT, max_citations_per_sentence=3, length_limit=250,
            smells=("empty_answer", "missing_topics", "blank_sentence", "duplicate_topics",
                    "references_duplicate", "references_present", "new_topics", "citation_count"),
        ),
        TrackRules("kiddie", ("neuclir",), "responses", "topic_id", ("team_id", "run_id", "topic_id")),
    )
}  # fmt: skip


def rules(track: str) -> TrackRules:
    """The rules of ``track``; an unknown track is bad input naming the known ones."""
    found = TRACKS.get(track)
    if found is None:
        raise InputError(f"unknown track {shown(track)}; known: {', '.join(sorted(TRACKS))}")
    return found


def citation_shape(citations: Any) -> str | None:
    """``rag24`` (indices), ``ragtime`` (id -> score), ``neuclir`` (ids), or None (no citation)."""
    if isinstance(citations, Mapping):
        return "ragtime" if citations else None
    if isinstance(citations, list) and citations:
        if all(isinstance(c, int) and not isinstance(c, bool) for c in citations):
            return "rag24"
        return "neuclir"
    return None


def _cited_ids(citations: Any, references: Sequence[Any]) -> list[str]:
    if isinstance(citations, Mapping):
        return [str(k) for k in citations]
    if not isinstance(citations, list):
        return []
    out = []
    for c in citations:
        if isinstance(c, int) and not isinstance(c, bool):
            if 0 <= c < len(references) and isinstance(references[c], str):
                out.append(references[c])
        elif isinstance(c, str):
            out.append(c)
    return out


def _length(texts: Sequence[str], unit: str) -> int:
    normal = [unicodedata.normalize("NFKC", t) for t in texts]
    if unit == "chars":
        return sum(len(t) for t in normal)
    return sum(len(t.split()) for t in normal)


def findings(
    obj: Mapping[str, Any], track: TrackRules, topics: Mapping[str, AutoJudgeTopic]
) -> list[tuple[str, str]]:
    """``(category, what)`` of everything in one report that breaks the track's rules."""
    found: list[tuple[str, str]] = []
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    for key in track.mandatory_metadata:
        value = meta.get(key)
        if value is None or (isinstance(value, str) and not value.strip()):
            found.append(("metadata", f"metadata.{key} is required by track {track.track}"))
    run_id = meta.get("run_id")
    if track.run_id_max_len is not None and isinstance(run_id, str) and len(run_id) > track.run_id_max_len:
        found.append(
            (
                "run_id_length",
                f"run_id is {len(run_id)} characters, track {track.track} allows {track.run_id_max_len}",
            )
        )
    sentences = obj.get(track.sentences_key)
    if not isinstance(sentences, list):
        other = "responses" if track.sentences_key == "answer" else "answer"
        if other in obj:
            found.append(
                (
                    "sentences_key",
                    f"track {track.track} puts the sentences under {track.sentences_key!r}, not {other!r}",
                )
            )
        return found
    references = obj.get("references")
    references = references if isinstance(references, list) else []
    cited: list[str] = []
    texts: list[str] = []
    for i, sentence in enumerate(sentences):
        if not isinstance(sentence, Mapping):
            continue
        text = sentence.get("text")
        if isinstance(text, str):
            texts.append(text)
            if not text.strip():
                found.append(("blank_sentence", f"{track.sentences_key}[{i}] is blank"))
        citations = sentence.get("citations")
        shape = citation_shape(citations)
        if shape is not None and shape not in track.sentence_types:
            found.append(
                (
                    "citation_format",
                    f"{track.sentences_key}[{i}] cites as {shape}; track {track.track} takes {', '.join(track.sentence_types)}",
                )
            )
        ids = _cited_ids(citations, references)
        limit = track.max_citations_per_sentence
        if limit is not None and len(ids) > limit:
            found.append(
                ("citation_count", f"{track.sentences_key}[{i}] has {len(ids)} citations (at most {limit})")
            )
        cited.extend(ids)
    if not texts:
        found.append(("empty_answer", "the response has no sentence"))
    if track.docid_pattern is not None:
        pattern = re.compile(track.docid_pattern)
        for docid in dict.fromkeys([*cited, *(r for r in references if isinstance(r, str))]):
            if not pattern.fullmatch(docid):
                found.append(
                    ("docid_pattern", f"document id {shown(docid)} does not match {track.docid_pattern!r}")
                )
                break
    found += _reference_findings(track, references, cited)
    found += _length_findings(track, texts, meta, topics)
    return found


def _reference_findings(track: TrackRules, references: list[Any], cited: list[str]) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    if track.references_kind == "ignore" or (track.references_optional and not references):
        return found
    if len(set(references)) != len(references):
        found.append(("references_duplicate", "'references' lists a document twice"))
    declared, used = set(references), set(cited)
    if used - declared:
        found.append(
            ("references_undeclared", f"{len(used - declared)} cited document(s) are not in 'references'")
        )
    if track.references_kind == "cited_only":
        if not references and used:
            found.append(("references_missing", "'references' is missing"))
        if declared - used:
            found.append(("references_uncited", f"{len(declared - used)} reference(s) are never cited"))
    if track.references_max is not None and len(references) > track.references_max:
        found.append(("references_max", f"{len(references)} references (at most {track.references_max})"))
    return found


def _length_findings(
    track: TrackRules, texts: list[str], meta: Mapping[str, Any], topics: Mapping[str, AutoJudgeTopic]
) -> list[tuple[str, str]]:
    limit = track.length_limit
    if limit is None and track.length_limit_request_field is not None:
        topic = topics.get(str(meta.get(track.topic_id_field, "")))
        value = getattr(topic, track.length_limit_request_field, None) if topic is not None else None
        limit = value if isinstance(value, int) else None
    if limit is None:
        return []
    length = _length(texts, track.length_unit)
    if length > limit:
        return [
            (
                "length",
                f"the response is {length} {track.length_unit} long, track {track.track} allows {limit}",
            )
        ]
    return []


def check_files(paths: Sequence[Path], track: TrackRules, topics: Sequence[AutoJudgeTopic]) -> list[str]:
    """Check every report of ``paths`` against ``track``: the first finding that is not one of
    its smells is an `InputError` (``FILE:LINE``); the smells come back as warnings."""
    by_id = {t.request_id: t for t in topics}
    warnings: list[str] = []
    for path in paths:
        for number, line in read_lines(path, max_line_bytes=MAX_LINE_BYTES):
            if not line.strip():
                continue
            obj = loads_json(line, path, number)
            if not isinstance(obj, dict):
                continue  # the reader says what is wrong with it
            for category, what in findings(obj, track, by_id):
                if category not in track.smells:
                    raise InputError(f"{what} ({category})", path, number)
                warnings.append(f"{path}:{number}: {category}: {what}")
    return warnings
