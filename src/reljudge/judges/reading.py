"""Reading an answer against the prompt it answers: what of it did the model write?

A label comes only from the model's own text. Before a parser sees an answer, two rules apply:

1. **Echo.** An answer that reproduces the prompt -- half or more of the rendered messages, or of
   the template's own text (its instructions and examples) -- is ``unparsed`` with
   ``how="echo"``, whatever else it says. Servers that return the prompt with the completion,
   base models that continue their prompt and misconfigured chat templates answer like this, and
   the prompt's own "##final score: 3" or "(0, 1, 2, or 3)" must not become a label. A generated
   answer (output type ``answer``) is an echo only when the copied text is also half or more of
   the answer (its prompt is often just the question, which an answer may restate).
2. **Copied text.** When the answer is meant to be a label (binary, graded, pairwise, a list of
   labels), every stretch of at least `COPY_MIN_CHARS` characters that also occurs in the prompt
   -- the instructions, the examples, the query, the passage -- is blanked before parsing. A
   passage that says "##final score: 3" cannot set its own grade by being quoted back, while the
   model's own short answer ("##final score: 2", "1", "Passage 2") is shorter than that and is
   always read. An answer that holds nothing but copied text is ``unparsed``
   (``how="copied-text"``). Answers that are meant to copy from the prompt (an extracted answer
   for EXAM, generated questions, nuggets) keep their copied text; rule 1 still applies.

Comparison is on case-folded text with whitespace runs collapsed, so an echo that re-wraps lines
is still an echo. The cost is linear in the lengths of the prompt and the answer (one set of
`COPY_MIN_CHARS`-character windows of the prompt), and answers shorter than that skip it.

Any exception a parser (or this module) raises on one answer makes that answer unparsed
(``how="parser-error:<exception>"``), with the raw text kept: one odd answer never ends a job.
"""

from __future__ import annotations

import bisect
import logging
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from reljudge.llm.images import content_text
from reljudge.prompts.parsing import Parsed
from reljudge.records import Usage

if TYPE_CHECKING:
    from reljudge.llm import ChatResult
    from reljudge.prompts import PromptTemplate

log = logging.getLogger("reljudge.judges")

#: the shortest stretch of an answer that counts as copied from the prompt; longer than any short
#: answer a prompt asks for ("##final score: 2" is 16 characters)
COPY_MIN_CHARS = 32
#: the share of the prompt (or of the template's own text) an answer must reproduce to be an echo
ECHO_SHARE = 0.5
#: output types whose answers are labels: copied text is blanked before they are read
_LABEL_OUTPUTS = frozenset({"graded", "pairwise", "labels", "choice"})

Parser = Callable[[str], Parsed]
_WORD = re.compile(r"\S+")


@dataclass(frozen=True)
class Reading:
    """One answer, read: the parse result and how much of the answer came from the prompt."""

    parsed: Parsed
    copied_chars: int = 0  # characters of the answer blanked as copied from the prompt
    echo: bool = False


def read_text(
    text: str | None,
    parse: Parser,
    *,
    prompt: Sequence[Mapping[str, Any]] | None = None,
    template: PromptTemplate | None = None,
) -> Reading:
    """Read ``text`` (the model's answer to the messages ``prompt``, rendered from ``template``)
    with ``parse``, applying the echo and copied-text rules of the module docstring. Never
    raises for a bad answer."""
    try:
        return _read(text, parse, prompt, template)
    except Exception as err:  # one odd answer must never end the job
        log.debug("reading an answer failed", exc_info=True)
        return Reading(Parsed(None, "unparsed", f"parser-error:{type(err).__name__}"))


def _read(
    text: str | None,
    parse: Parser,
    prompt: Sequence[Mapping[str, Any]] | None,
    template: PromptTemplate | None,
) -> Reading:
    if not isinstance(text, str):
        return Reading(Parsed(None, "unparsed", "empty" if text is None else "not-text"))
    answer = _Folded.of(text)
    if prompt and len(answer.text) >= COPY_MIN_CHARS:
        rendered = _fold("\n".join(content_text(m.get("content", "")) for m in prompt))
        copied, prompt_covered = _copied(answer.text, _windows(rendered))
        own_length, own_windows = _template_windows(template)
        own_covered = _copied(answer.text, own_windows)[1] if own_windows else 0
        if (
            (rendered and prompt_covered >= ECHO_SHARE * len(rendered))
            or (own_windows and own_covered >= ECHO_SHARE * own_length)
        ) and _mostly_copied(template, _length(copied), len(answer.text)):
            return Reading(Parsed(None, "unparsed", "echo"), _length(copied), echo=True)
        if copied and _blanks_copies(template):
            kept = answer.without(copied)
            if not _WORD.search(kept):
                return Reading(Parsed(None, "unparsed", "copied-text"), _length(copied))
            return Reading(_parse(parse, kept), _length(copied))
    return Reading(_parse(parse, text))


def _mostly_copied(template: PromptTemplate | None, copied: int, length: int) -> bool:
    """Whether an answer covering the prompt is an echo: always for a label; for a generated
    answer (output ``answer``, whose prompt is often little more than the question) only when
    the copied text is also most of the answer -- a model restating the question in its answer
    has not echoed the prompt."""
    if template is None or template.output.type != "answer":
        return True
    return copied >= ECHO_SHARE * length


def _parse(parse: Parser, text: str) -> Parsed:
    try:
        parsed = parse(text)
    except Exception as err:
        log.debug("a parser failed", exc_info=True)
        return Parsed(None, "unparsed", f"parser-error:{type(err).__name__}")
    if not isinstance(parsed, Parsed):
        return Parsed(None, "unparsed", f"parser-error:returned {type(parsed).__name__}")
    return parsed


def _blanks_copies(template: PromptTemplate | None) -> bool:
    """Whether answers to ``template`` are labels, read without text copied from the prompt."""
    if template is None:
        return True
    output = template.output
    if output.type == "binary":
        return output.style != "answerability"  # an extracted answer quotes the passage
    return output.type in _LABEL_OUTPUTS


def _fold(text: str) -> str:
    return " ".join(text.lower().split())


@dataclass(frozen=True)
class _Folded:
    """An answer case-folded with whitespace runs collapsed, and where each word came from."""

    original: str
    text: str
    starts: list[int]  # start of each word in ``text``
    spans: list[tuple[int, int]]  # the same word's span in ``original``

    @classmethod
    def of(cls, original: str) -> _Folded:
        starts: list[int] = []
        spans: list[tuple[int, int]] = []
        parts: list[str] = []
        at = 0
        for word in _WORD.finditer(original):
            piece = word.group(0).lower()
            if len(piece) != word.end() - word.start():  # lower() changed the length: keep as is
                piece = word.group(0)
            starts.append(at)
            spans.append(word.span())
            parts.append(piece)
            at += len(piece) + 1
        return cls(original, " ".join(parts), starts, spans)

    def _position(self, folded: int, end: bool) -> int:
        """The position in ``original`` of folded position ``folded``."""
        word = bisect.bisect_right(self.starts, folded) - 1
        if word < 0:
            return 0
        start, stop = self.spans[word]
        offset = folded - self.starts[word]
        if offset >= stop - start:  # the space after the word
            return stop
        return min(stop, start + offset + (1 if end else 0))

    def without(self, ranges: list[tuple[int, int]]) -> str:
        """``original`` with the folded ``ranges`` (start, end exclusive) replaced by newlines."""
        out: list[str] = []
        last = 0
        for start, end in ranges:
            a = self._position(start, end=False)
            b = self._position(end - 1, end=True)
            out.append(self.original[last:a])
            out.append("\n")
            last = max(last, b)
        out.append(self.original[last:])
        return "".join(out)


def _windows(text: str) -> dict[str, int]:
    """Every `COPY_MIN_CHARS`-character window of ``text`` -> where it starts."""
    n = COPY_MIN_CHARS
    return {text[i : i + n]: i for i in range(len(text) - n + 1)}


def _copied(answer: str, windows: Mapping[str, int]) -> tuple[list[tuple[int, int]], int]:
    """The merged ranges of ``answer`` that occur in the windowed text, and how many characters
    of that text they cover."""
    if not windows:
        return [], 0
    n = COPY_MIN_CHARS
    ranges: list[tuple[int, int]] = []
    covered: list[tuple[int, int]] = []  # ranges of the source text that were reproduced
    for i in range(len(answer) - n + 1):
        where = windows.get(answer[i : i + n])
        if where is None:
            continue
        if ranges and i <= ranges[-1][1]:
            ranges[-1] = (ranges[-1][0], i + n)
        else:
            ranges.append((i, i + n))
        covered.append((where, where + n))
    return ranges, _length(_merge(covered))


def _merge(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(ranges):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _length(ranges: list[tuple[int, int]]) -> int:
    return sum(end - start for start, end in ranges)


_TEMPLATE_WINDOWS: dict[tuple[str, str], tuple[int, dict[str, int]]] = {}
_TEMPLATE_WINDOWS_MAX = 64


def _template_windows(template: PromptTemplate | None) -> tuple[int, dict[str, int]]:
    """The length and the windows of the template's own text (its messages without the
    placeholders, folded); none when that text is too short to be reproduced by accident.
    Computed once per template: every item of a job shares it."""
    if template is None:
        return 0, {}
    key = (template.id, template.sha256)
    found = _TEMPLATE_WINDOWS.get(key)
    if found is None:
        names = "|".join(re.escape(n) for n in template.variables)
        pieces: list[str] = []
        for message in template.messages:
            content = message["content"]
            pieces.extend(re.split(r"\{(?:" + names + r")\}", content) if names else [content])
        own = _fold("\n".join(pieces))
        found = (len(own), _windows(own)) if len(own) >= 2 * COPY_MIN_CHARS else (0, {})
        if len(_TEMPLATE_WINDOWS) >= _TEMPLATE_WINDOWS_MAX:
            _TEMPLATE_WINDOWS.clear()
        _TEMPLATE_WINDOWS[key] = found
    return found


# --- an answer obtained through the judge's context ----------------------------------------------


@dataclass
class Answer:
    """The outcome of asking for one label: the last call, how it read, and every call made.

    ``status`` is the call's failure (api_error / refused / truncated) when it failed, else the
    reading's: ``ok`` with ``label`` (or ``items``), ``refused`` or ``unparsed``. ``usage`` and
    ``attempts`` count every call made for it, including an answer that could not be read and
    was asked again (kept in ``earlier``).
    """

    result: ChatResult
    reading: Reading | None  # None when the call itself failed
    usage: Usage = field(default_factory=Usage)
    attempts: int = 0
    earlier: list[dict[str, Any]] = field(default_factory=list)
    #: the template and parser the answer was read with (to read a variant of it the same way)
    template: PromptTemplate | None = None
    parse: Parser | None = None

    @classmethod
    def of(cls, result: ChatResult, template: PromptTemplate | None, parse: Parser) -> Answer:
        reading = None
        if result.status == "ok":
            reading = read_text(result.text, parse, prompt=result.prompt, template=template)
        return cls(result, reading, result.usage, result.attempts, template=template, parse=parse)

    def reads_as(self, text: str) -> int | float | None:
        """The label this answer's reading (same prompt, template and parser) gets from ``text``."""
        if self.parse is None:
            return None
        parsed = read_text(text, self.parse, prompt=self.result.prompt, template=self.template).parsed
        return parsed.label if parsed.status == "ok" else None

    def distribution(self, scale: tuple[int, ...]) -> dict[str, Any] | None:
        """The grade distribution at the label position (`reljudge.judges.expected`), or None
        when the call returned no log-probabilities or gave no label."""
        from reljudge.judges.expected import label_distribution

        if not self.result.logprobs or self.status != "ok":
            return None
        try:
            return label_distribution(
                self.result.text, self.result.logprobs, self.label, scale, self.reads_as
            )
        except Exception as err:  # odd provider data never ends the job
            log.debug("reading log-probabilities failed", exc_info=True)
            return {"unavailable": f"error: {type(err).__name__}"}

    @property
    def parsed(self) -> Parsed | None:
        return None if self.reading is None else self.reading.parsed

    @property
    def status(self) -> str:
        if self.reading is None:
            return self.result.status
        return self.reading.parsed.status

    @property
    def unreadable(self) -> bool:
        """The call succeeded but no label could be read from its answer."""
        return self.reading is not None and self.reading.parsed.status == "unparsed"

    @property
    def label(self) -> int | float | None:
        parsed = self.parsed
        return parsed.label if parsed is not None and parsed.status == "ok" else None

    @property
    def how(self) -> str | None:
        parsed = self.parsed
        return None if parsed is None else parsed.how

    @property
    def error(self) -> str | None:
        if self.reading is None:
            return self.result.error or {
                "truncated": "the answer was cut off (finish_reason=length)",
                "refused": "the provider refused to answer (content filter)",
                "api_error": "the provider call failed",
            }.get(self.result.status, self.result.status)
        parsed = self.reading.parsed
        if parsed.status == "ok":
            return None
        if parsed.status == "refused":
            return "the model declined to answer"
        if self.reading.echo:
            return "the answer repeats the prompt (echo): no label is read from it"
        return f"could not read a label from the answer ({parsed.how})"

    def after(self, again: Answer) -> Answer:
        """``again`` (a new call for the same item) with this answer's calls counted in."""
        earlier = [*self.earlier, {"raw": clip(self.result.text), "parse": self.how}]
        return Answer(
            again.result,
            again.reading,
            self.usage + again.usage,
            self.attempts + again.attempts,
            earlier,
            again.template,
            again.parse,
        )

    def extra(self) -> dict[str, Any]:
        """What a record keeps of the reading beyond status, label and raw text."""
        out: dict[str, Any] = {}
        if self.reading is not None and self.reading.copied_chars:
            out["copied_chars"] = self.reading.copied_chars
        if self.earlier:
            out["reasked"] = list(self.earlier)
        if self.result.logprobs:
            out["logprobs"] = self.result.logprobs
        return out


#: the most characters of an answer a record stores; longer answers keep their head and tail
RAW_MAX_CHARS = 32_768


def clip(text: str | None) -> str | None:
    """``text`` as a record stores it: at most `RAW_MAX_CHARS` characters, the head and the tail
    of a longer answer with the number of characters left out between them."""
    if text is None or len(text) <= RAW_MAX_CHARS:
        return text
    half = RAW_MAX_CHARS // 2
    omitted = len(text) - 2 * half
    return f"{text[:half]}\n[... {omitted} characters omitted ...]\n{text[-half:]}"
