"""Image relevance: how relevant is each image of the grids to its text-to-image prompt? (0-3)

Items: per prompt (a topic, ``--topics``), every distinct image of its grids (``--grids``; the
systems' grids may share images: each image is judged once per prompt). The prompt
``vision/image-relevance`` (reljudge's own, not a published prompt) gets the prompt text as
``{prompt}`` and the image as an image content part (`reljudge.llm.images`) in the place of
``{image}``; the grade is read only after ``Final grade:`` in the model's answer
(`reljudge.judges.reading`: an echoed prompt or copied text gives no label).

A record per (prompt, image): method ``image-relevance``, ``qid`` the prompt, ``docid`` the
image id, the label the grade 0-3, ``extra["image"]`` the image's SHA-256, type, size in bytes and
pixels (or its URL) -- never its bytes. The run's ``qrels.txt`` holds the grades
(``prompt 0 image grade``), so the grids analysis can read them as relevance labels. A resumed
run skips what is recorded for the same image bytes; an image whose bytes changed is judged
again. A bad image with ``bad_images="skip"`` is a ``skipped`` record with the reason
(`reljudge.judges.vision.inputs`), and so is an image whose file changed after the run read it
(its bytes no longer have the SHA-256 read then: nothing is sent; a resumed run judges the new
bytes).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, ClassVar

from reljudge.judges.base import CallEstimate, JudgeInputs, JudgePool, PoolRequest, run_bounded
from reljudge.judges.call_records import key, record_from_answer, skipped_record
from reljudge.judges.registry import register
from reljudge.judges.vision.base import VisionJudge
from reljudge.judges.vision.inputs import LoadedImages, grid_inputs, image_extra, resolve_images

if TYPE_CHECKING:
    from reljudge.judges.context import JudgeContext
    from reljudge.records import Judgment, Key

METHOD = "image-relevance"


@register
class ImageRelevanceJudge(VisionJudge):
    """Grades each (prompt, image) on the prompt's scale; see the module docstring."""

    name = METHOD
    default_prompt = "vision/image-relevance"
    label_methods = (METHOD,)
    output_types = ("graded", "binary")
    answer_tokens: ClassVar[int] = 6

    @property
    def label_scale(self) -> tuple[int, ...] | None:
        spec = self.prompt.output
        if spec.type == "graded" and spec.range is not None:
            return tuple(range(int(spec.range[0]), int(spec.range[1]) + 1))
        return (0, 1) if spec.type == "binary" else None

    def pool(self, request: PoolRequest) -> JudgePool:
        """Per prompt (sorted), its grids' distinct images (sorted), as the run read them."""
        grids, table, prompts = grid_inputs(request, self.name)
        kept = set(prompts)
        docs: dict[str, list[str]] = {}
        for (prompt, _system), images in grids.grids.items():
            if prompt in kept:
                docs.setdefault(prompt, []).extend(images)
        docs = {p: sorted(set(docs[p])) for p in prompts}
        loaded = resolve_images(table, (i for d in docs.values() for i in d), bad=self.bad_images)
        items = sum(len(d) for d in docs.values())
        return JudgePool(
            docs=docs,
            description=f"{len(docs)} prompts x the distinct images of their grids ({items} items, "
            f"{len(grids.systems)} systems, k={grids.k})",
            resources={**request.resources, "loaded_images": loaded},
            check_texts=False,
        )

    def _items(
        self, inputs: JudgeInputs, recorded: Callable[[Key], Judgment | None] | None
    ) -> Iterator[tuple[str, str, str | None]]:
        """(prompt, image, problem) of each item to judge; with ``recorded`` (`JudgeContext.done`,
        or `JudgeInputs.recorded` for a dry run), the ones recorded for the same image bytes are
        left out."""
        loaded: LoadedImages = inputs.resources.get("loaded_images") or LoadedImages()
        for prompt, images in inputs.pool.items():
            for image_id in images:
                problem = loaded.problems.get(image_id)
                if recorded is not None:
                    done = recorded(key(self.name, prompt, image_id))
                    if done is not None and (
                        done.status == "skipped"
                        if problem is not None
                        else done.extra.get("image") == image_extra(loaded.images[image_id])
                    ):
                        continue
                yield prompt, image_id, problem

    async def run(self, inputs: JudgeInputs, ctx: JudgeContext) -> None:
        from reljudge.llm.image_messages import placeholder
        from reljudge.llm.images import ImageChanged

        loaded: LoadedImages = inputs.resources.get("loaded_images") or LoadedImages()
        parser = self.prompt.output.parse
        params = self.call_params()

        async def judge(item: tuple[str, str, str | None]) -> None:
            prompt, image_id, problem = item
            if problem is not None:
                ctx.emit(
                    skipped_record(ctx, self.prompt, problem, method=self.name, qid=prompt, docid=image_id)
                )
                return
            image = loaded.images[image_id]
            marker = placeholder()
            try:
                answer = await ctx.ask(
                    self.prompt,
                    {"query": inputs.topics[prompt], "document": marker},
                    parser,
                    budget=self.answer_budget,
                    images={marker: loaded.parts(image_id, self.detail)},
                    **params,
                )
            except ImageChanged as err:  # its file changed after the run read it: nothing sent
                ctx.emit(
                    skipped_record(
                        ctx,
                        self.prompt,
                        f"image {image_id!r}: {err}",
                        method=self.name,
                        qid=prompt,
                        docid=image_id,
                    )
                )
                return
            ctx.emit(
                record_from_answer(
                    ctx,
                    self.prompt,
                    answer,
                    method=self.name,
                    qid=prompt,
                    docid=image_id,
                    extra={"image": image_extra(image)},
                    scale=self.label_scale,
                )
            )

        await run_bounded(self._items(inputs, ctx.done), judge, limit=ctx.fan_out)

    def estimate(self, inputs: JudgeInputs) -> CallEstimate:
        """One call per (prompt, image) with a usable image: the prompt's text tokens (~4
        characters a token) plus the image's by OpenAI's tile rule (`reljudge.llm.images`)."""
        from reljudge.judges.token_count import prompt_tokens
        from reljudge.llm.images import image_tokens

        loaded: LoadedImages = inputs.resources.get("loaded_images") or LoadedImages()
        calls = tokens = 0
        for prompt, image_id, problem in self._items(inputs, inputs.recorded):
            if problem is not None:
                continue
            calls += 1
            tokens += prompt_tokens(self.prompt, {"query": inputs.topics.get(prompt, ""), "document": ""})
            tokens += image_tokens(loaded.parts(image_id, self.detail)[0])
        answer = self.max_tokens or self.answer_tokens
        note = (
            f"{self.name}: one call per (prompt, image); image tokens by OpenAI's tile rule for gpt-4o "
            "(85 + 170 a 512-px tile; an image URL at the rule's largest, 1,445)"
        )
        return CallEstimate(calls, tokens, calls * answer, note=note)
