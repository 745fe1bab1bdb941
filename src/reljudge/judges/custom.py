"""Custom prompts: judge with any `PromptTemplate` whose declared output the toolkit can read.

This is what prompt sweeps use. The prompt is a template (from a YAML file, a built-in id, or
built inline from ``system``/``user`` texts with an ``output`` declaration such as ``binary``,
``binary:yesno``, ``graded:0-10`` or ``pairwise``); the matching parser comes from the output
declaration. Binary and graded prompts are judged pointwise (one call per topic and passage,
roles ``{query}``/``{question}`` and ``{document}``/``{passage}``); pairwise prompts
(``{query}``, ``{documentA}``, ``{documentB}``) are judged in both orders like the pairwise
judge, with its pair selections. Records carry ``method`` (default ``"custom"``; a sweep gives
each variant its own name so that several prompts can share one judgments file).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from reljudge.errors import InputError
from reljudge.judges.base import CallEstimate, Judge, JudgeInputs
from reljudge.judges.context import JudgeContext
from reljudge.judges.option_checks import resolve_prompt
from reljudge.judges.pairwise import PairwiseJudge
from reljudge.judges.pointwise import PointwiseJudge
from reljudge.judges.registry import register

if TYPE_CHECKING:
    from reljudge.prompts import OutputSpec, PromptTemplate

_POINTWISE = ("binary", "graded")


class _CustomPointwise(PointwiseJudge):
    name = "custom"
    output_types = _POINTWISE
    answer_tokens = 8


@register
class CustomJudge(Judge):
    """Judge with a user-supplied prompt; see the module docstring."""

    name = "custom"
    pointwise_when = "binary/graded prompt"

    def __init__(
        self,
        prompt: str | PromptTemplate | None = None,
        *,
        system: str | None = None,
        user: str | None = None,
        output: str | OutputSpec | dict[str, Any] | None = None,
        prompt_id: str = "custom/inline",
        method: str = "custom",
        pairs: str | None = None,
        p: int | None = None,
        seed: int | None = None,
        max_tokens: int | None = None,
        constrain: str | None = None,
    ) -> None:
        from reljudge.prompts import OutputSpec, PromptTemplate

        if prompt is not None and (system is not None or user is not None):
            raise InputError(
                "custom: give either a prompt (id, file or template) or inline system/user texts, not both"
            )
        if prompt is None and user is None:
            raise InputError("custom: needs a prompt (id, YAML file or template) or an inline user text")
        if not isinstance(method, str) or not method.strip():
            raise TypeError(f"method must be a non-empty name, got {method!r}")
        if user is not None:
            if output is None:
                raise InputError(
                    "custom: an inline prompt needs an output declaration (e.g. binary, graded:0-3, pairwise)"
                )
            template = PromptTemplate.from_messages(prompt_id, system, user, output)
        else:
            template = resolve_prompt(prompt)
            if output is not None and OutputSpec.coerce(output) != template.output:
                raise InputError(
                    f"custom: prompt {template.id!r} declares output {template.output.describe()}, "
                    f"not {OutputSpec.coerce(output).describe()}"
                )
        self.prompt: PromptTemplate = template
        self.method = method.strip()
        kind = template.output.type
        self._inner: PointwiseJudge | PairwiseJudge
        if kind == "pairwise":
            if constrain is not None:
                raise InputError("custom: constrained output applies to binary and graded prompts")
            inner: PointwiseJudge | PairwiseJudge = PairwiseJudge(
                prompt=template,
                pairs=pairs or "all",
                p=7 if p is None else p,
                seed=0 if seed is None else seed,
                max_tokens=max_tokens,
            )
        elif kind in _POINTWISE:
            given = [n for n, v in (("pairs", pairs), ("p", p), ("seed", seed)) if v is not None]
            if given:
                raise InputError(f"custom: option(s) {', '.join(given)} only apply to pairwise prompts")
            inner = _CustomPointwise(prompt=template, max_tokens=max_tokens, constrain=constrain)
        else:
            raise InputError(
                f"custom: prompt {template.id!r} answers {template.output.describe()}; a custom judge "
                "needs binary, graded or pairwise output"
            )
        inner.method = self.method
        self._inner = inner

    @property
    def output(self) -> OutputSpec:
        return self.prompt.output

    @property
    def pointwise(self) -> bool:  # type: ignore[override]
        return isinstance(self._inner, PointwiseJudge)

    @property
    def label_scale(self) -> tuple[int, ...] | None:
        """The pointwise prompt's one-token grades (pairwise records join two answers: none)."""
        return self._inner.label_scale if isinstance(self._inner, PointwiseJudge) else None

    @classmethod
    def adapt_options(cls, options: Mapping[str, Any], *, pairs_given: bool = False) -> dict[str, Any]:
        """With a pairs file, a pairwise prompt judges exactly its pairs (``pairs="given"``)."""
        adapted = dict(options)
        if pairs_given and "pairs" not in adapted and _declared_output(adapted) == "pairwise":
            adapted["pairs"] = "given"
        return adapted

    def estimate_growth(self, inputs: JudgeInputs) -> list[dict[str, Any]]:
        return self._inner.estimate_growth(inputs)

    @property
    def label_methods(self) -> tuple[str, ...]:  # type: ignore[override]
        return (self.method,)

    @property
    def comparisons(self) -> dict[str, int]:
        """Pairs compared per topic (pairwise prompts), after `run`."""
        return getattr(self._inner, "comparisons", {})

    async def run(self, inputs: JudgeInputs, ctx: JudgeContext) -> None:
        await self._inner.run(inputs, ctx)

    def estimate(self, inputs: JudgeInputs) -> CallEstimate:
        est = self._inner.estimate(inputs)
        return CallEstimate(
            est.calls,
            est.prompt_tokens,
            est.completion_tokens,
            note=f"custom {est.note}",
            records=est.records,
        )


def _declared_output(options: Mapping[str, Any]) -> str | None:
    """The output type the options' prompt declares (None when it cannot be told yet: the
    constructor then reports what is wrong)."""
    from reljudge.prompts import OutputSpec, PromptTemplate

    try:
        if options.get("output") is not None:
            return OutputSpec.coerce(options["output"]).type
        prompt = options.get("prompt")
        if isinstance(prompt, PromptTemplate):
            return prompt.output.type
        if isinstance(prompt, str):
            return resolve_prompt(prompt).output.type
    except Exception:  # a bad prompt or output is reported when the judge is built
        return None
    return None
