"""Test collections: topics, human qrels, passage texts, optional runs, and their grade scale.

``load_dataset(name_or_dir)`` accepts

- ``"dl19-sample"``: the sample bundled with reljudge (5 TREC DL 2019 topics, all their judged
  passages, GPT-4o EXAM questions and published GPT-4o judgments; see its README.md);
- ``"trec-dl19"``, ``"trec-dl20"``, ``"trec-dl21"``, ``"antique"``: the full collections, found
  in ``$RELJUDGE_DATA_DIR/<name>`` (the one data-folder variable; tests and benchmarks read it
  too), else ``../shared/data/<name>`` relative to the current directory or to a source checkout;
- a directory holding ``topics.tsv``, ``qrels.txt``, ``passages.tsv`` (or ``corpus.jsonl``,
  optionally gzipped), optionally ``runs/``, ``exam_questions*.tsv``, ``llm-judgments/`` and a
  ``dataset.json`` with metadata (``name``, ``min_grade``, ``max_grade``,
  ``relevant_threshold``, ``grade_labels``, ``attribution``);
- ``"irds:<id>"``: a collection of ``ir_datasets`` (e.g. ``irds:msmarco-passage/trec-dl-2019/judged``),
  read offline from its cache: topics from its queries, qrels, the grade scale from its qrels
  definitions, and only the wanted passages from its docs store (`reljudge.io.irds`);
- nothing, with explicit ``topics=``/``qrels=``/``corpus=``/``runs=`` files.

Explicit files override the ones a named dataset or directory provides.

Grade scales (the binary threshold matters for agreement numbers, so it is recorded):

- TREC DL 2019-2021 passages: grades 0-3 (0 irrelevant, 1 related, 2 highly relevant,
  3 perfectly relevant). ``relevant_threshold = 2``: grades 2-3 count as relevant, the TREC DL
  passage-task convention for binary measures, also used for binary agreement in the
  Arabzadeh & Clarke comparisons (see ../shared/data/README.md).
- ANTIQUE: grades 1-4 (1 = non-relevant ... 4 = perfect answer); ``min_grade = 1``;
  ``relevant_threshold = 3``: labels 3 and 4 count as relevant, the ANTIQUE paper's convention
  for binary measures (Hashemi et al., ECIR 2020).
- Other directories: from ``dataset.json`` when present, else ``min_grade`` = the smallest
  grade in the qrels, and ``relevant_threshold`` = 1 for binary qrels (max grade 1) or 2 for
  graded ones (stated in ``Dataset.describe()``).

``Dataset.relevance_level`` is the threshold as the dataset declares it (a known collection
above, or ``relevant_threshold`` in ``dataset.json``): ``judge evaluate`` counts grades at or
above it as relevant in binary measures (AP, P@k, RR, R-prec: trec_eval's ``-l``). It is None
when the threshold was only inferred from the grades (a directory without it in
``dataset.json``, an ``irds:`` collection): binary measures then keep trec_eval's default, 1.
The TREC DL levels are the ones ir_datasets lists for the official measures (``AP(rel=2)``,
``RR(rel=2)`` for DL19/DL20; ``P(rel=2)@10``, ``RR(rel=2)`` for DL21).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from reljudge.errors import InputError
from reljudge.io.corpus import Corpus, load_corpus
from reljudge.io.lines import BOM, loads_json
from reljudge.io.trec import Qrels, Run, Topics, read_qrels, read_runs_dir, read_topics, run_files

logger = logging.getLogger(__name__)

BUNDLED = "dl19-sample"
IRDS_PREFIX = "irds:"
DATA_DIR_ENV = "RELJUDGE_DATA_DIR"

_MSMARCO = (
    "MS MARCO passages (c) Microsoft, for non-commercial research purposes only "
    "(https://microsoft.github.io/msmarco/); "
)
_DL_GRADES = {0: "irrelevant", 1: "related", 2: "highly relevant", 3: "perfectly relevant"}


@dataclass(frozen=True)
class DatasetSpec:
    """What reljudge knows about a named collection."""

    name: str
    description: str
    min_grade: int
    max_grade: int
    relevant_threshold: int
    grade_labels: dict[int, str]
    attribution: str
    tag: str = ""  # the short name used in ../shared/data/llm-judgments file names


def _dl_spec(year: int, description: str) -> DatasetSpec:
    return DatasetSpec(
        name=f"trec-dl{year % 100}",
        description=description,
        min_grade=0,
        max_grade=3,
        relevant_threshold=2,
        grade_labels=_DL_GRADES,
        attribution=(
            f"TREC Deep Learning {year} passage task: topics and relevance judgments by NIST (trec.nist.gov); "
            + _MSMARCO
            + "redistributed by Narabzad/llm-relevance-judgement-comparison (SIGIR 2025)."
        ),
        tag=f"dl{year % 100}",
    )


KNOWN_DATASETS: dict[str, DatasetSpec] = {
    BUNDLED: DatasetSpec(
        name=BUNDLED,
        description="bundled sample: 5 TREC DL 2019 topics with all 684 judged pairs",
        min_grade=0,
        max_grade=3,
        relevant_threshold=2,
        grade_labels=_DL_GRADES,
        attribution="see src/reljudge/data/dl19-sample/README.md (TREC DL 2019 by NIST; "
        + _MSMARCO.strip("; ")
        + ")",
        tag="dl19",
    ),
    "trec-dl19": _dl_spec(2019, "TREC DL 2019 passages: 43 topics, 9,260 judgments"),
    "trec-dl20": _dl_spec(2020, "TREC DL 2020 passages: 54 topics, 11,386 judgments"),
    "trec-dl21": _dl_spec(2021, "TREC DL 2021 passages (MS MARCO v2): 53 topics, 10,828 judgments, 63 runs"),
    "antique": DatasetSpec(
        name="antique",
        description="ANTIQUE non-factoid QA test set: 200 topics, 6,589 judgments, grades 1-4",
        min_grade=1,
        max_grade=4,
        relevant_threshold=3,
        grade_labels={1: "non-relevant", 2: "slightly relevant", 3: "relevant", 4: "perfect answer"},
        attribution=(
            "ANTIQUE (Hashemi, Aliannejadi, Zamani, Croft; ECIR 2020), CIIR UMass Amherst, answers from "
            "Yahoo! Webscope L6; redistributed by Narabzad/llm-relevance-judgement-comparison."
        ),
        tag="antique",
    ),
}

TOPIC_FILES = ("topics.tsv", "topics.txt", "queries.tsv")
QRELS_FILES = ("qrels.txt", "qrels.tsv", "qrels")
CORPUS_FILES = (
    "passages.tsv",
    "passages.tsv.gz",
    "corpus.jsonl",
    "corpus.jsonl.gz",
    "corpus.tsv",
    "corpus.tsv.gz",
)


def bundled_path(name: str = BUNDLED) -> Path:
    """The directory of a dataset shipped inside the package."""
    return Path(str(resources.files("reljudge") / "data" / name))


def data_roots() -> list[Path]:
    """Where the full collections are looked for, in order."""
    roots = []
    env = os.environ.get(DATA_DIR_ENV)
    if env:
        roots.append(Path(env).expanduser())
    roots.append(Path.cwd().parent / "shared" / "data")
    # a source checkout next to the shared data (an editable install run from anywhere), unless
    # the variable names the place
    source_tree = Path(__file__).resolve().parents[2]
    if not env and (source_tree / "pyproject.toml").is_file():
        beside = source_tree.parent / "shared" / "data"
        if beside not in roots:
            roots.append(beside)
    return roots


def _find_named(name: str) -> Path:
    if name == BUNDLED:
        return bundled_path()
    tried = []
    for root in data_roots():
        candidate = root / name
        tried.append(str(candidate))
        if (candidate / "topics.tsv").exists():
            return candidate
    raise InputError(
        f"dataset {name!r} not found (looked in {', '.join(tried)}); "
        f"set {DATA_DIR_ENV} to the directory that holds {name}/"
    )


def _first(directory: Path, names: tuple[str, ...]) -> Path | None:
    for name in names:
        if (directory / name).is_file():
            return directory / name
    return None


@dataclass
class Dataset:
    """A loaded collection. ``qrels`` and ``corpus`` raise `InputError` when the dataset has none."""

    name: str
    topics: Topics
    paths: dict[str, Path] = field(default_factory=dict)
    runs_dir: Path | None = None
    attribution: str = ""
    description: str = ""
    min_grade: int = 0
    max_grade: int | None = None
    relevant_threshold: int = 2
    grade_labels: dict[int, str] = field(default_factory=dict)
    tag: str = ""
    #: whether ``relevant_threshold`` is declared (a known collection, ``dataset.json``) rather
    #: than inferred from the grades
    threshold_declared: bool = False
    #: reads only the given passages from a store (an ir_datasets docs store); a corpus file wins
    passage_lookup: Callable[[Collection[str]], dict[str, str]] | None = field(default=None, repr=False)
    _qrels: Qrels | None = field(default=None, repr=False)
    _corpus: Corpus | None = field(default=None, repr=False)

    @property
    def has_qrels(self) -> bool:
        return self._qrels is not None

    @property
    def has_corpus(self) -> bool:
        return self._corpus is not None or "corpus" in self.paths or self.passage_lookup is not None

    @property
    def qrels(self) -> Qrels:
        if self._qrels is None:
            raise InputError(f"dataset {self.name!r} has no qrels (pass --qrels FILE)")
        return self._qrels

    @property
    def corpus(self) -> Corpus:
        """Every passage (read on first use when the dataset was loaded with ``passages=False``)."""
        if self._corpus is None:
            if "corpus" not in self.paths and self.passage_lookup is not None:
                raise InputError(f"dataset {self.name!r}: its passages are read by id, not all at once")
            if "corpus" not in self.paths:
                raise InputError(f"dataset {self.name!r} has no passage texts (pass --corpus FILE)")
            self._corpus = load_corpus(self.paths["corpus"])
        return self._corpus

    def passages(self, docids: Collection[str]) -> Corpus:
        """Only the passages of ``docids`` (those the corpus has): the corpus file is streamed,
        so memory holds these passages, not the collection (see `load_corpus`)."""
        if self._corpus is not None:
            return Corpus({d: self._corpus[d] for d in docids if d in self._corpus}, self._corpus.path)
        if "corpus" not in self.paths and self.passage_lookup is not None:
            return Corpus(self.passage_lookup(docids), None)
        if "corpus" not in self.paths:
            raise InputError(f"dataset {self.name!r} has no passage texts (pass --corpus FILE)")
        return load_corpus(self.paths["corpus"], docids=docids)

    def pairs(self) -> list[tuple[str, str]]:
        """The judged (qid, docid) pairs of the qrels, for topics in ``topics``, in file order."""
        return [(qid, docid) for qid, docs in self.qrels.items() if qid in self.topics for docid in docs]

    @property
    def relevance_level(self) -> int | None:
        """The relevance level the dataset declares for binary measures (``grade >= level``;
        trec_eval's ``-l``), None when its threshold is only inferred from the grades."""
        return self.relevant_threshold if self.threshold_declared else None

    def is_relevant(self, grade: float) -> bool:
        """Binary relevance under this dataset's threshold (``grade >= relevant_threshold``)."""
        return grade >= self.relevant_threshold

    def run_files(self) -> list[Path]:
        if self.runs_dir is None or not self.runs_dir.is_dir():
            return []
        return run_files(self.runs_dir)

    def runs(self, *, strict: bool = True) -> dict[str, Run]:
        """Read every run in ``runs_dir``, keyed by run name (`reljudge.io.trec.read_runs_dir`);
        with ``strict`` a topic id that is not among the dataset's topics is an `InputError`
        naming file:line. No runs directory, or an empty one: no runs."""
        if not self.run_files():
            return {}
        assert self.runs_dir is not None
        return read_runs_dir(self.runs_dir, topics=self.topics if strict else None)

    def llm_judgment_files(self) -> dict[str, Path]:
        """Published LLM judgment files: ``{"<model>/<method>": path}``."""
        root = self.paths.get("llm_judgments")
        if root is None or not root.is_dir():
            return {}
        found: dict[str, Path] = {}
        suffix = f".{self.tag}.qrels" if self.tag else ".qrels"
        for model_dir in sorted(p for p in root.iterdir() if p.is_dir()):
            for path in sorted(model_dir.glob(f"*{suffix}")):
                method = path.name[: -len(suffix)]
                if "." not in method:
                    found[f"{model_dir.name}/{method}"] = path
        return found

    def describe(self) -> dict[str, Any]:
        """Counts and metadata (used by ``judge datasets``)."""
        return {
            "name": self.name,
            "topics": len(self.topics),
            "qrels": sum(len(d) for d in self._qrels.values()) if self._qrels is not None else None,
            "passages": len(self.corpus) if self.has_corpus and self.passage_lookup is None else None,
            "runs": len(self.run_files()),
            "grades": f"{self.min_grade}-{self.max_grade}"
            if self.max_grade is not None
            else f">={self.min_grade}",
            "relevant_threshold": self.relevant_threshold,
            "path": str(self.paths.get("root", "")),
            "description": self.description,
        }

    def grade_counts(self) -> dict[str, Any]:
        """Topics with judgments and the judgments per grade (``judge datasets --grades``):
        ``{"judged_topics": n, "per_grade": [{"grade", "label", "count"}, ...]}``, every grade of the
        scale listed (0 when unused) and any grade outside it after them."""
        counts: dict[float, int] = {}
        for docs in self.qrels.values():
            for grade in docs.values():
                counts[grade] = counts.get(grade, 0) + 1
        scale = range(self.min_grade, (self.max_grade if self.max_grade is not None else self.min_grade) + 1)
        grades = list(scale) + sorted(set(counts) - set(scale))
        return {
            "judged_topics": sum(1 for docs in self.qrels.values() if docs),
            "per_grade": [
                {
                    "grade": g,
                    "label": self.grade_labels.get(int(g), "") if g == int(g) else "",
                    "count": counts.get(g, 0),
                }
                for g in grades
            ],
        }


def _metadata(directory: Path) -> dict[str, Any]:
    meta_path = directory / "dataset.json"
    if not meta_path.exists():
        return {}
    meta = loads_json(meta_path.read_bytes().removeprefix(BOM), meta_path)  # a BOM is no error
    if not isinstance(meta, dict):
        raise InputError("expected a JSON object", meta_path)
    return meta


def load_dataset(
    name_or_dir: str | Path | None = None,
    *,
    topics: str | Path | None = None,
    qrels: str | Path | None = None,
    corpus: str | Path | None = None,
    runs: str | Path | None = None,
    passages: bool = True,
) -> Dataset:
    """Load a named dataset, a dataset directory, or explicit files (which override).

    ``passages=False`` leaves the corpus unread: `Dataset.passages` then reads only the passages
    a job needs (`Dataset.corpus` would read them all on first use)."""
    if name_or_dir is not None and str(name_or_dir).startswith(IRDS_PREFIX):
        from reljudge.io.irds import dataset_fields

        fields = dataset_fields(str(name_or_dir)[len(IRDS_PREFIX) :], topics, qrels, corpus, runs, passages)
        return Dataset(**fields)
    spec: DatasetSpec | None = None
    directory: Path | None = None
    if name_or_dir is not None:
        text = str(name_or_dir)
        if text in KNOWN_DATASETS:
            spec = KNOWN_DATASETS[text]
            directory = _find_named(text)
        elif Path(text).is_dir():
            directory = Path(text)
        elif Path(text).exists():
            raise InputError("expected a dataset name or a directory, got a file", text)
        else:
            raise InputError(
                f"unknown dataset {text!r}: not a directory, and not one of {', '.join(KNOWN_DATASETS)}"
            )

    paths: dict[str, Path] = {}
    meta: dict[str, Any] = {}
    if directory is not None:
        paths["root"] = directory
        meta = _metadata(directory)
        for key, names in (("topics", TOPIC_FILES), ("qrels", QRELS_FILES), ("corpus", CORPUS_FILES)):
            found = _first(directory, names)
            if found is not None:
                paths[key] = found
        questions = sorted(directory.glob("exam_questions*.tsv"))
        if questions:
            paths["exam_questions"] = questions[0]
        if (directory / "llm-judgments").is_dir():
            paths["llm_judgments"] = directory / "llm-judgments"
        elif spec is not None and (directory.parent / "llm-judgments").is_dir():
            paths["llm_judgments"] = directory.parent / "llm-judgments"
        if (directory / "runs").is_dir():
            paths["runs"] = directory / "runs"
    for key, value in (("topics", topics), ("qrels", qrels), ("corpus", corpus), ("runs", runs)):
        if value is not None:
            paths[key] = Path(value)

    if "topics" not in paths:
        where = f" in {directory}" if directory is not None else ""
        raise InputError(
            f"no topics file{where} (expected one of {', '.join(TOPIC_FILES)}, or pass --topics)"
        )
    if "runs" in paths and not paths["runs"].is_dir():
        raise InputError("runs: expected a directory of run files", paths["runs"])

    topic_map = read_topics(paths["topics"])
    qrels_map = read_qrels(paths["qrels"]) if "qrels" in paths else None
    corpus_obj = load_corpus(paths["corpus"]) if "corpus" in paths and passages else None

    max_grade: int | None  # as dataset.json gives it (a number, made int below), else the qrels'
    if spec is not None:
        name = spec.name
        min_grade, max_grade, threshold = spec.min_grade, spec.max_grade, spec.relevant_threshold
        declared = True
        labels, attribution, description, tag = (
            spec.grade_labels,
            spec.attribution,
            spec.description,
            spec.tag,
        )
    else:
        grades = [g for docs in (qrels_map or {}).values() for g in docs.values()]
        observed_max = int(max(grades)) if grades else None
        name = str(meta.get("name") or (directory.name if directory is not None else "custom"))
        min_grade = int(meta.get("min_grade", int(min(grades)) if grades else 0))
        max_grade = meta.get("max_grade", observed_max)
        threshold = int(
            meta.get("relevant_threshold", 1 if observed_max is not None and observed_max <= 1 else 2)
        )
        declared = "relevant_threshold" in meta
        labels = {int(k): str(v) for k, v in (meta.get("grade_labels") or {}).items()}
        attribution = str(meta.get("attribution", ""))
        description = str(meta.get("description", ""))
        tag = str(meta.get("tag", ""))
    if directory is not None and spec is not None and meta:
        # a bundled/shared directory may refine the description or attribution
        description = str(meta.get("description", description))
        attribution = str(meta.get("attribution", attribution))

    if qrels_map is not None:
        unknown = [qid for qid in qrels_map if qid not in topic_map]
        if unknown:
            logger.warning(
                "%s: %d judged topic(s) are not in %s (e.g. %s); they are ignored when judging",
                paths["qrels"],
                len(unknown),
                paths["topics"],
                unknown[0],
            )
    return Dataset(
        name=name,
        topics=topic_map,
        paths=paths,
        runs_dir=paths.get("runs"),
        attribution=attribution,
        description=description,
        min_grade=min_grade,
        max_grade=None if max_grade is None else int(max_grade),
        relevant_threshold=threshold,
        grade_labels=dict(labels),
        tag=tag,
        threshold_declared=declared,
        _qrels=qrels_map,
        _corpus=corpus_obj,
    )


def list_datasets(*, load: bool = True, grades: bool = False) -> list[dict[str, Any]]:
    """One entry per known dataset: its counts when available (``load``; with ``grades`` also
    `Dataset.grade_counts`), else why not."""
    entries = []
    for name, spec in KNOWN_DATASETS.items():
        entry: dict[str, Any] = {"name": name, "description": spec.description}
        try:
            if load:
                dataset = load_dataset(name)
                entry.update(dataset.describe())
                if grades:
                    entry.update(dataset.grade_counts())
                entry["available"] = True
            else:
                entry["path"] = str(_find_named(name))
                entry["available"] = True
        except InputError as err:
            entry["available"] = False
            entry["error"] = str(err)
        entries.append(entry)
    return entries
