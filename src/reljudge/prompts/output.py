"""A prompt's output contract: what the model is asked to answer, and so how the answer is read
(`OutputSpec.parse`, with the parsers of `reljudge.prompts.parsing` beside it)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from reljudge.errors import shown
from reljudge.prompts.errors import PromptError, listed

if TYPE_CHECKING:
    from reljudge.prompts.parsing import Parsed

OutputType = Literal["binary", "graded", "pairwise", "questions", "nuggets", "labels", "choice", "answer"]
OUTPUT_TYPES: tuple[str, ...] = (
    "binary",
    "graded",
    "pairwise",
    "questions",
    "nuggets",
    "labels",
    "choice",
    "answer",
)
BINARY_STYLES: tuple[str, ...] = ("digit", "yesno", "answerability")


@dataclass(frozen=True)
class OutputSpec:
    """What the model is asked to answer, and so how the answer is parsed.

    - ``binary``: 0/1; ``style`` is ``digit`` ("1"/"0"), ``yesno`` ("Yes"/"No") or
      ``answerability`` (an extracted answer; 0 when it says the question is unanswerable);
    - ``graded``: an integer in ``range`` (inclusive); ``marker`` is the answer marker the prompt
      asks for (e.g. ``##final score:``) or None when the prompt asks for a bare number;
    - ``pairwise``: 1 (first passage) or 2 (second passage);
    - ``questions`` / ``nuggets``: a list of strings;
    - ``labels``: a list of labels from ``vocabulary``, one per input item;
    - ``choice``: one label from ``vocabulary`` (e.g. ``full_support``), in ``items``;
    - ``answer``: free text (a generated answer, ``judge generate``), no label.
    """

    type: OutputType
    range: tuple[int, int] | None = None
    marker: str | None = None
    style: str | None = None
    vocabulary: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if self.type not in OUTPUT_TYPES:
            raise PromptError(
                f"unknown output type {shown(self.type)}; expected one of {', '.join(OUTPUT_TYPES)}"
            )
        if self.type == "graded":
            if self.range is None or len(self.range) != 2 or self.range[0] >= self.range[1]:
                raise PromptError(
                    f"graded output needs a range [lo, hi] with lo < hi, got {shown(self.range)}"
                )
        elif self.range is not None:
            raise PromptError(f"output type {shown(self.type)} takes no range")
        if self.type == "binary":
            if (self.style or "digit") not in BINARY_STYLES:
                raise PromptError(
                    f"unknown binary style {shown(self.style)}; expected one of {', '.join(BINARY_STYLES)}"
                )
        elif self.style is not None:
            raise PromptError(f"output type {shown(self.type)} takes no style")
        if self.type in ("labels", "choice"):
            if not self.vocabulary:
                raise PromptError(f"{self.type} output needs a vocabulary")
        elif self.vocabulary is not None:
            raise PromptError(f"output type {shown(self.type)} takes no vocabulary")
        if self.marker is not None and self.type != "graded":
            raise PromptError(f"output type {shown(self.type)} takes no marker")

    @classmethod
    def coerce(cls, value: OutputSpec | Mapping[str, Any] | str) -> OutputSpec:
        """Build from an OutputSpec, a mapping (as in a YAML file) or a short string.

        Short strings: ``binary``, ``binary:yesno``, ``graded:0-3``, ``graded:0-5``, ``pairwise``,
        ``questions``, ``nuggets``, ``labels:vital,okay``.
        """
        if isinstance(value, OutputSpec):
            return value
        if isinstance(value, str):
            return cls._from_short(value)
        if not isinstance(value, Mapping):
            raise PromptError(f"output must be a mapping or a string, got {type(value).__name__}")
        unknown = set(value) - {"type", "range", "marker", "style", "vocabulary"}
        if unknown:
            raise PromptError(f"unknown output field(s): {listed(unknown)}")
        rng = value.get("range")
        if rng is not None:
            if (
                not isinstance(rng, (list, tuple))
                or len(rng) != 2
                or not all(isinstance(x, int) for x in rng)
            ):
                raise PromptError(f"output range must be two integers [lo, hi], got {shown(rng)}")
            rng = (int(rng[0]), int(rng[1]))
        vocab = value.get("vocabulary")
        if vocab is not None:
            if not isinstance(vocab, (list, tuple)) or not all(isinstance(x, str) and x for x in vocab):
                raise PromptError(f"output vocabulary must be a list of strings, got {shown(vocab)}")
            vocab = tuple(vocab)
        otype = value.get("type")
        if not isinstance(otype, str):
            raise PromptError("output needs a 'type'")
        style = value.get("style")
        if otype == "binary" and style is None:
            style = "digit"
        return cls(type=otype, range=rng, marker=value.get("marker"), style=style, vocabulary=vocab)  # type: ignore[arg-type]

    @classmethod
    def _from_short(cls, text: str) -> OutputSpec:
        kind, _, arg = text.strip().partition(":")
        kind = kind.strip()
        arg = arg.strip()
        if kind == "binary":
            return cls(type="binary", style=arg or "digit")
        if kind == "graded":
            m = re.fullmatch(r"(-?\d+)\s*-\s*(-?\d+)", arg or "0-3")
            if not m:
                raise PromptError(f"graded output range must read LO-HI (e.g. graded:0-3), got {shown(text)}")
            return cls(type="graded", range=(int(m.group(1)), int(m.group(2))))
        if kind in ("labels", "choice"):
            vocab = tuple(v.strip() for v in arg.split(",") if v.strip())
            return cls(type=kind, vocabulary=vocab or None)  # type: ignore[arg-type]
        if kind in ("pairwise", "questions", "nuggets", "answer") and not arg:
            return cls(type=kind)  # type: ignore[arg-type]
        raise PromptError(
            f"cannot read output {shown(text)}; use binary[:yesno], graded:LO-HI, pairwise, questions, nuggets, "
            "answer, labels:a,b,c or choice:a,b,c"
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type}
        if self.range is not None:
            out["range"] = list(self.range)
        if self.type == "graded":
            out["marker"] = self.marker
        if self.style is not None:
            out["style"] = self.style
        if self.vocabulary is not None:
            out["vocabulary"] = list(self.vocabulary)
        return out

    def describe(self) -> str:
        if self.type == "binary":
            return f"binary ({self.style or 'digit'})"
        if self.type == "graded":
            assert self.range is not None
            tail = f", marker {self.marker!r}" if self.marker else ""
            return f"graded {self.range[0]}-{self.range[1]}{tail}"
        if self.type in ("labels", "choice"):
            return f"{self.type} (" + "|".join(self.vocabulary or ()) + ")"
        return self.type

    def parse(self, text: str | None, expected_len: int | None = None) -> Parsed:
        """Parse a model answer against this contract (see `reljudge.prompts.parsing`)."""
        import reljudge.prompts.parsing as parsing

        if self.type == "binary":
            if self.style == "answerability":
                return parsing.parse_exam_answerability(text)
            return parsing.parse_binary(text, style=self.style or "digit")
        if self.type == "graded":
            assert self.range is not None
            return parsing.parse_graded(text, lo=self.range[0], hi=self.range[1], marker=self.marker)
        if self.type == "pairwise":
            return parsing.parse_pairwise(text)
        if self.type == "labels":
            assert self.vocabulary is not None
            return parsing.parse_label_list(text, self.vocabulary, expected_len)
        if self.type == "choice":  # one label (`reljudge.prompts.parsing.choice`)
            assert self.vocabulary is not None
            return parsing.parse_choice(text, self.vocabulary)
        if self.type == "answer":
            return parsing.parse_answer_text(text)
        return parsing.parse_string_list(text)
