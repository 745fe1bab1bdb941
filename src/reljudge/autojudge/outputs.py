"""The texts of the files TREC AutoJudge reads, as autojudge-base 1.0.0 writes them
(``leaderboard/leaderboard.py``, ``judge_runner.py``, ``qrels/qrels.py``,
``nugget_data/nuggetizer/nuggetizer_data.py``, ``workflow/paths.py``). Pure: texts from values,
no I/O. Every text is byte-stable: rows sorted, numbers in one fixed format, no time stamps.

- **Leaderboard** ``{filebase}.eval.txt``: the ``ir_measures`` layout autojudge-base writes by
  default, ``run<TAB>topic<TAB>measure<TAB>value`` per line, no header; per run its topics
  (sorted by id), then its ``all`` row. The ``all`` value of a measure is the mean over the
  topics of the topics file, a topic the run has no row for counting 0 -- what autojudge-base's
  ``LeaderboardBuilder.build(on_missing="fix_aggregate")`` computes (its phantom defaults); a
  measure undefined for a topic the run has a row for (a nugget score without vital nuggets) is
  left out of that measure's mean, as there. Values are written with `DECIMALS` decimals.
- **Measures** ``{filebase}.eval.measures.yml``: ``measures: [{name, dtype, description}]``
  (``LeaderboardSpec.write_measures_yaml``).
- **Qrels** ``{filebase}.qrels.txt``: ``topic 0 doc_id grade``, sorted by topic then doc id
  (``write_qrel_file``); a response's doc id is the MD5 of its text as autojudge-base's
  ``Report.get_report_text`` joins it (sentences joined by one space), the ``doc_id_md5`` the
  starter kit's example judge uses.
- **Nugget bank** ``{filebase}.nuggets.jsonl``: the Nuggetizer format
  (``NuggetizerNuggetBank``: ``{"query", "qid", "nuggets": [{"text", "importance"}]}`` per
  line, pydantic's compact JSON without null fields), or autojudge-base's v3 ``NuggetBank``
  with the nuggets as claims (`v3_text`); topics in topics-file order. Not written: the
  RAGTIME26 format, whose nuggets are questions with answers (reljudge's are claims).
- **Config** ``{filebase}.config.yml``: what was run (YAML, keys in a fixed order).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: decimals of every value of a leaderboard
DECIMALS = 6
#: the topic id of a run's aggregate row
ALL = "all"


@dataclass(frozen=True)
class Measure:
    """One column of a leaderboard: its name (no whitespace) and what it means."""

    name: str
    description: str
    dtype: str = "float"


def fmt(value: float) -> str:
    """``value`` with `DECIMALS` decimals (``-0`` written as ``0``)."""
    text = f"{value:.{DECIMALS}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def leaderboard_rows(
    values: Mapping[tuple[str, str], Mapping[str, float | None]],
    topics: Sequence[str],
    measures: Sequence[Measure],
    runs: Iterable[str] = (),
) -> list[tuple[str, str, str, float]]:
    """``(run, topic, measure, value)`` rows: every (run, topic) of ``values`` (a value None is no
    row), then each run's ``all`` row (see the module docstring). ``runs``: runs that get an
    ``all`` row even without a topic row (a run none of whose responses could be scored)."""
    names = [m.name for m in measures]
    every_run = sorted({run for run, _ in values} | set(runs))
    rows: list[tuple[str, str, str, float]] = []
    for run in every_run:
        mine = {topic: v for (r, topic), v in values.items() if r == run}
        for topic in sorted(mine):
            for name in names:
                value = mine[topic].get(name)
                if value is not None:
                    rows.append((run, topic, name, float(value)))
        for name in names:
            total, count = 0.0, 0
            for topic in topics:
                if topic not in mine:
                    count += 1  # fix_aggregate: a missing (run, topic) counts as 0
                    continue
                value = mine[topic].get(name)
                if value is not None:
                    total += float(value)
                    count += 1
            if count:
                rows.append((run, ALL, name, total / count))
    return rows


def leaderboard_text(rows: Iterable[tuple[str, str, str, float]]) -> str:
    """The ``ir_measures`` layout of ``rows`` (in the order given)."""
    lines = []
    for run, topic, name, value in rows:
        if not math.isfinite(value):
            raise ValueError(f"measure {name} of run {run} on topic {topic} is {value}")
        lines.append(f"{run}\t{topic}\t{name}\t{fmt(value)}")
    return "\n".join(lines) + "\n"


def measures_yaml(measures: Sequence[Measure]) -> str:
    """``{filebase}.eval.measures.yml``: the measures in leaderboard order."""
    import yaml

    entries = [{"name": m.name, "dtype": m.dtype, "description": m.description} for m in measures]
    return str(yaml.safe_dump({"measures": entries}, default_flow_style=False, sort_keys=False))


def report_text(sentences: Iterable[str]) -> str:
    """A response's text as autojudge-base's ``Report.get_report_text`` gives it."""
    return " ".join(sentences)


def response_doc_id(sentences: Iterable[str]) -> str:
    """The doc id of a response in AutoJudge qrels: the MD5 of `report_text`."""
    return hashlib.md5(report_text(sentences).encode("utf-8")).hexdigest()


def qrels_text(rows: Iterable[tuple[str, str, int]]) -> str:
    """``topic 0 doc_id grade`` lines, sorted by (topic, doc id); a (topic, doc id) given twice
    keeps its highest grade (two runs giving the same text; ``on_duplicate="keep_max"``)."""
    best: dict[tuple[str, str], int] = {}
    for topic, doc_id, grade in rows:
        key = (topic, doc_id)
        best[key] = max(grade, best.get(key, grade))
    return "".join(f"{t} 0 {d} {g}\n" for (t, d), g in sorted(best.items()))


def nuggetizer_text(banks: Iterable[tuple[str, str, Sequence[tuple[str, str | None]]]]) -> str:
    """Nuggetizer nugget banks, one line per ``(qid, query, [(text, importance)])``."""
    lines = []
    for qid, query, nuggets in banks:
        listed = [{"text": t} | ({"importance": i} if i is not None else {}) for t, i in nuggets]
        bank = {"query": query, "qid": qid, "nuggets": listed}
        lines.append(json.dumps(bank, ensure_ascii=False, separators=(",", ":")))
    return "".join(line + "\n" for line in lines)


def v3_text(banks: Iterable[tuple[str, str, Sequence[tuple[str, str | None]]]]) -> str:
    """autojudge-base's own format (``NuggetBank``, ``format_version`` v3), nuggets as claims:
    ``{"query_id", "title_query", "format_version", "claim_bank": {claim: {"claim", "claim_id",
    "query_id", "importance"}}}`` per line; ``claim_id`` is the MD5 of the claim, as
    ``NuggetClaim`` assigns it. A claim made twice for a topic is kept once (the first)."""
    lines = []
    for qid, query, nuggets in banks:
        claims: dict[str, dict[str, str]] = {}
        for text, importance in nuggets:
            claim = {
                "claim": text,
                "claim_id": hashlib.md5(text.encode("utf-8")).hexdigest(),
                "query_id": qid,
            }
            claims.setdefault(text, claim | ({"importance": importance} if importance is not None else {}))
        bank = {"query_id": qid, "title_query": query, "format_version": "v3", "claim_bank": claims}
        lines.append(json.dumps(bank, ensure_ascii=False, separators=(",", ":")))
    return "".join(line + "\n" for line in lines)


#: nugget bank formats by name
NUGGET_FORMATS = {"nuggetizer": nuggetizer_text, "v3": v3_text}


def config_yaml(config: Mapping[str, Any]) -> str:
    """``{filebase}.config.yml``: ``config`` as block YAML, keys in the order given."""
    import yaml

    return str(yaml.safe_dump(dict(config), default_flow_style=False, sort_keys=False, allow_unicode=True))
