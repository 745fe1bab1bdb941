"""What the analyses read: the human labels, judgment sets and runs (shared by `judge evaluate`,
`judge calibrate`, `judge combine`, `judge fd`, the run and qrels analyses, and the sweep).

Judgment inputs (each path may be a file, a directory or a glob):

- a qrels-like file ``qid iter docid score`` (score int or float) — one set;
- a reljudge judgments JSONL file, or a run directory holding ``judgments.jsonl`` — one set
  per score set its records support (`reljudge.judges.scoring.score_sets`), named like the
  published files: ``binary``, ``umbrela`` (any pointwise method), ``pairwise`` (win counts;
  the comparisons are kept as preferences for alignment, unlisted documents won nothing),
  ``exam-binary`` or ``exam-graded-max`` and ``exam-graded-mean``, ``nuggets-all`` and the
  five other nugget scores. Failed records are never labels;
- a directory without ``judgments.jsonl``: every regular, non-hidden file in it, one set each.

Every set carries what its values mean when a judge declares it (`JudgmentSet.meaning`,
`reljudge.judges.scoring.score_meaning`): a set of records by its scorer; a qrels-like file by its
name, or the part before its first dot (``preferences.dl21.qrels`` holds the ``preferences`` set,
as the published files are named).
"""

from __future__ import annotations

import fnmatch
import glob
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from reljudge.errors import InputError

if TYPE_CHECKING:
    from reljudge.aggregation import ScoreMeaning
    from reljudge.io.trec import Run
    from reljudge.records import Judgment

Scores = dict[str, dict[str, float]]
QRELS_SUFFIXES = (".qrels", ".txt", ".tsv", ".gz")


@dataclass
class JudgmentSet:
    """One judge's labels: pointwise scores and, for pairwise judges, the preference records."""

    name: str
    scores: Scores
    preferences: list[tuple[str, str, str, int]] | None = None
    source: str = ""
    missing: float | None = None  # score of a human-judged document the set does not list
    dropped_topics: int = 0
    #: the judge's own scale [lo, hi] when its records declare one (expected grades)
    scale: tuple[float, float] | None = None
    #: what the values mean, as the set's judge declares it (None: no judge declares the set)
    meaning: ScoreMeaning | None = None

    @property
    def n_labels(self) -> int:
        return sum(len(d) for d in self.scores.values())


@dataclass(frozen=True)
class HumanLabels:
    """The human qrels with the grade conventions to read them by."""

    qrels: Scores
    unacceptable: float = 0  # highest grade that is Unacceptable
    human_threshold: float = 2  # grades >= this are relevant
    #: the level the dataset declares for binary measures (`reljudge.datasets.Dataset.relevance_level`);
    #: None without a dataset or when it declares none
    relevance_level: int | None = None
    dataset: str = ""  # the dataset's name, when the labels come from one
    #: the dataset's runs directory and passage file, when it has them
    runs_dir: Path | None = None
    corpus_path: Path | None = None


def load_human_labels(
    qrels: str | Path | None = None,
    dataset: str | None = None,
    *,
    unacceptable: float | None = None,
    human_threshold: float | None = None,
) -> HumanLabels:
    """The human labels from a qrels file or a known dataset (exactly one of them). Without
    ``unacceptable`` / ``human_threshold`` a dataset's own grade scale applies, else 0 and 2
    (TREC DL passages). A dataset also gives its declared relevance level for binary measures."""
    from reljudge.io.trec import read_qrels

    if (qrels is None) == (dataset is None):
        raise InputError("give the human labels with exactly one of --qrels FILE or --dataset NAME")
    level: int | None = None
    name = ""
    runs_dir = corpus_path = None
    if dataset is not None:
        from reljudge.datasets import load_dataset

        ds = load_dataset(dataset)
        human = ds.qrels
        unacceptable = ds.min_grade if unacceptable is None else unacceptable
        human_threshold = ds.relevant_threshold if human_threshold is None else human_threshold
        level, name = ds.relevance_level, ds.name
        runs_dir, corpus_path = ds.runs_dir, ds.paths.get("corpus")
    else:
        assert qrels is not None  # exactly one of the two, checked above
        human = read_qrels(qrels)
    return HumanLabels(
        human,
        0 if unacceptable is None else unacceptable,
        2 if human_threshold is None else human_threshold,
        level,
        name,
        runs_dir,
        corpus_path,
    )


def qrels_and_runs(
    qrels: str | Path | None, dataset: str | None, runs: str | Path | None
) -> tuple[HumanLabels, Path]:
    """The human labels (`load_human_labels`: exactly one of ``--qrels`` and ``--dataset``) and
    the runs directory: ``--runs``, else the dataset's ``runs/``; neither is an `InputError`
    saying so."""
    human = load_human_labels(qrels, dataset)
    found = Path(runs) if runs is not None else human.runs_dir
    if found is None:
        where = f"dataset {human.dataset!r} has no runs/ directory" if dataset is not None else "no --dataset"
        raise InputError(f"give the runs with --runs DIR ({where})")
    return human, found


def read_human(qrels: str | Path | Scores) -> Scores:
    """Human qrels given as read (a mapping, e.g. a dataset's) or as a qrels file to read."""
    if isinstance(qrels, dict):
        return qrels
    from reljudge.io.trec import read_qrels

    return read_qrels(qrels)


def _set_name(path: Path) -> str:
    name = path.name
    for suffix in (".gz",) + QRELS_SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            name = name[: -len(suffix)]
    return name


def _expand(spec: str | Path) -> list[Path]:
    text = str(spec)
    if any(ch in text for ch in "*?["):
        matches = sorted(Path(p) for p in glob.glob(text))
        if not matches:
            raise InputError(f"no file matches {text!r}")
        return matches
    path = Path(text)
    if not path.exists():
        raise InputError("file not found", path)
    return [path]


def sets_from_judgments(records: Iterable[Judgment], name: str, source: str = "") -> list[JudgmentSet]:
    """Judgment sets from reljudge `Judgment` records: one per score set the records support
    (`reljudge.judges.scoring.score_sets`: pointwise labels, pairwise win counts, the EXAM
    and nugget scores), named ``name`` when there is one set and ``name:<set>`` otherwise. A
    pairwise set keeps its comparisons for preference alignment; documents it does not list won
    nothing. Failed records are never labels; sets without any label are left out."""
    from reljudge.judges.scoring import score_sets

    try:
        found = score_sets(records)
    except ValueError as err:
        raise InputError(f"cannot aggregate the judgments: {err}", source or None) from None
    found = {n: s for n, s in found.items() if any(s.scores.values())}
    out = []
    for set_name, result in found.items():
        label = name if len(found) == 1 else f"{name}:{set_name}"
        prefs = result.details.get("preferences")
        if prefs is not None:
            out.append(
                JudgmentSet(label, result.scores, list(prefs), source, missing=0, meaning=result.meaning)
            )
        else:
            scale = result.details.get("scale")
            scale = (
                (float(scale[0]), float(scale[1])) if isinstance(scale, list) and len(scale) == 2 else None
            )
            out.append(JudgmentSet(label, result.scores, None, source, scale=scale, meaning=result.meaning))
    return out


def file_meaning(name: str) -> ScoreMeaning | None:
    """What the values of a qrels-like file's set ``name`` mean: the declaration of the score set
    of that name, or of the part before its first dot (``umbrela.dl21``: ``umbrela``)."""
    from reljudge.judges.scoring import score_meaning

    found = score_meaning(name)
    if found is None and "." in name:
        found = score_meaning(name.split(".", 1)[0])
    return found


def load_judgment_sets(specs: Sequence[str | Path], *, missing_zero: Sequence[str] = ()) -> list[JudgmentSet]:
    """Load judgment sets from files, directories or globs (see the module docstring).

    ``missing_zero``: glob patterns of set names whose unlisted documents score 0 (e.g.
    ``preferences*``: win-count files list only documents that won).
    """
    from reljudge.io.judgments import JUDGMENTS_FILE, is_judgments_path, load_judgments
    from reljudge.io.trec import read_qrels

    sets: list[JudgmentSet] = []
    for spec in specs:
        for path in _expand(spec):
            if path.is_dir() and not (path / JUDGMENTS_FILE).exists():
                files = sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith("."))
                if not files:
                    raise InputError("directory holds no judgment files", path)
            else:
                files = [path]
            for f in files:
                if is_judgments_path(f):
                    name = f.name if f.is_dir() else _set_name(Path(f.name.rsplit(".", 1)[0]))
                    found = sets_from_judgments(load_judgments(f), name, str(f))
                    if not found:
                        raise InputError("no usable judgments (no record with status ok gives a score)", f)
                    sets.extend(found)
                else:
                    name = _set_name(f)
                    sets.append(JudgmentSet(name, read_qrels(f), None, str(f), meaning=file_meaning(name)))
    names = [s.name for s in sets]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise InputError(f"two judgment sets share the name {sorted(dup)[0]!r}; rename one of the files")
    for s in sets:
        if any(fnmatch.fnmatch(s.name, pat) for pat in missing_zero):
            s.missing = 0.0
    return sets


def load_runs(path: str | Path) -> dict[str, Run]:
    """Every run file in a directory (``.gz`` allowed), keyed by run name (the runid column);
    see `reljudge.io.trec.read_runs_dir`."""
    from reljudge.io.trec import read_runs_dir

    return dict(read_runs_dir(path))
