"""Grid preferences: which of two systems' image grids answers a text-to-image prompt better?

Items: per prompt (a topic, ``--topics``), every pair of the systems with a grid for it
(``--grids``), the two systems in sorted order (``docid`` = system_x, ``docid_b`` = system_y).
The prompt ``vision/grid-pairwise`` (reljudge's own, not a published prompt) shows the prompt
text and the two grids -- each its images in position order (row-major, 1 = top-left), a text
line ``[X3]`` before the third image of grid X -- and asks the five-point question of the human
preferences: ``X-much-better``, ``X-better``, ``same``, ``Y-better``, ``Y-much-better``
(-2, -1, 0, +1, +2: negative prefers X).

**Both orders.** Each pair is asked twice, at once: system_x's grid shown as X, then system_y's
grid shown as X (its answer's sign flipped, so that both are in the frame of system_x vs
system_y). The record's label is the mean of the two, rounded toward 0 (``(-2, -1)`` gives -1,
``(-1, +1)`` 0, ``(+2, +2)`` +2): a position bias that flips the answer with the order cancels to
"same", and a preference is never stronger than both orders' mean. ``extra["orders"]`` keeps
both answers, their parse and rendered-message hashes, ``extra["mean"]`` the unrounded mean. If
either order fails (API error, refusal, unreadable answer) the pair has no label; if an image
file of either grid changed after the run read it (its bytes no longer have the SHA-256 read
then), the pair gets a ``skipped`` record with the reason and that order is not sent.

Output: the run's ``preferences.tsv`` (``prompt<TAB>system_x<TAB>system_y<TAB>pref``, the format
the grids analysis reads as human preferences, `reljudge.io.grids.read_preferences`) and, as the
run's ``qrels.txt``, each system's net preference per prompt (``prompt 0 system score``: the sum,
over the pairs it is in, of the preference in its favour; a system with no judged pair for a
prompt has no line).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from reljudge.judges.base import CallEstimate, JudgeInputs, JudgePool, PoolRequest, run_bounded
from reljudge.judges.call_records import answer_provenance, key, skipped_record, unreadable_record
from reljudge.judges.reading import clip
from reljudge.judges.registry import register
from reljudge.judges.vision.base import VisionJudge
from reljudge.judges.vision.inputs import LoadedImages, grid_inputs, image_extra, resolve_images
from reljudge.records import Judgment, Key

if TYPE_CHECKING:
    from reljudge.aggregation import AggregatedScores
    from reljudge.judges.context import JudgeContext
    from reljudge.judges.reading import Answer
    from reljudge.llm.images import Part

METHOD = "grid-pairwise"
#: the five answers, X much better .. Y much better, as preferences of Y over X
FIVE_POINTS: dict[str, int] = {
    "X-much-better": -2,
    "X-better": -1,
    "same": 0,
    "Y-better": 1,
    "Y-much-better": 2,
}
#: the separator of the systems in a pool entry (``docid``)
_PAIR = "\t"


def combine(forward: int, backward: int) -> tuple[int, float]:
    """The pair's preference from the two orders' answers, each in its own order's frame (the
    module docstring): (the mean rounded toward 0, the mean)."""
    mean = (forward - backward) / 2
    return int(math.copysign(math.floor(abs(mean)), mean)) if mean else 0, mean


@register
class GridPairwiseJudge(VisionJudge):
    """Compares two systems' grids for a prompt in both orders; see the module docstring."""

    name = METHOD
    default_prompt = "vision/grid-pairwise"
    label_methods = (METHOD,)
    output_types = ("choice",)
    answer_tokens: ClassVar[int] = 4

    def check_prompt(self) -> None:
        """The prompt's labels must be the five answers (`FIVE_POINTS`)."""
        vocabulary = tuple(self.prompt.output.vocabulary or ())
        if set(vocabulary) != set(FIVE_POINTS):
            from reljudge.errors import InputError

            raise InputError(
                f"prompt {self.prompt.id!r}: its labels {list(vocabulary)} must be {list(FIVE_POINTS)}"
            )

    def parser(self) -> Any:
        """One of the five labels, as its preference (-2..2) with the label in ``items``."""
        from reljudge.prompts.parsing import Parsed

        read = self.prompt.output.parse

        def parse(text: str) -> Parsed:
            parsed = read(text)
            if parsed.status != "ok" or not parsed.items:
                return parsed
            return Parsed(FIVE_POINTS[parsed.items[0]], "ok", parsed.how, parsed.items)

        return parse

    # -- items -----------------------------------------------------------------------------

    def pool(self, request: PoolRequest) -> JudgePool:
        """Per prompt (sorted), every pair of its systems (sorted), their images as the run read them."""
        grids, table, prompts = grid_inputs(request, self.name)
        kept = set(prompts)
        systems: dict[str, list[str]] = {p: [] for p in prompts}
        wanted: set[str] = set()
        for (prompt, system), images in grids.grids.items():
            if prompt in kept:
                systems[prompt].append(system)
                wanted.update(images)
        docs = {
            p: [f"{a}{_PAIR}{b}" for i, a in enumerate(sorted(s)) for b in sorted(s)[i + 1 :]]
            for p, s in systems.items()
        }
        loaded = resolve_images(table, wanted, bad=self.bad_images)
        pairs = sum(len(d) for d in docs.values())
        return JudgePool(
            docs=docs,
            description=f"{len(docs)} prompts x the pairs of their systems' grids ({pairs} pairs x 2 orders, "
            f"{len(grids.systems)} systems, k={grids.k})",
            resources={**request.resources, "loaded_images": loaded},
            check_texts=False,
        )

    def _pairs(
        self, inputs: JudgeInputs, recorded: Callable[[Key], Judgment | None] | None
    ) -> Iterator[tuple[str, str, str, str | None]]:
        """(prompt, system_x, system_y, problem) of each pair to judge; with ``recorded``
        (`JudgeContext.done`, or `JudgeInputs.recorded` for a dry run), the pairs recorded for the
        same images are left out."""
        grids = inputs.resources["grids"]
        loaded: LoadedImages = inputs.resources.get("loaded_images") or LoadedImages()
        for prompt, entries in inputs.pool.items():
            for entry in entries:
                x, _, y = entry.partition(_PAIR)
                images = (*grids.grids[(prompt, x)], *grids.grids[(prompt, y)])
                problem = next(
                    (f"image {i!r}: {loaded.problems[i]}" for i in images if i in loaded.problems), None
                )
                if recorded is not None:
                    done = recorded(key(self.name, prompt, x, y))
                    if done is not None and (
                        done.status == "skipped"
                        if problem is not None
                        else done.extra.get("images") == self._hashes(loaded, grids, prompt, x, y)
                    ):
                        continue
                yield prompt, x, y, problem

    @staticmethod
    def _hashes(loaded: LoadedImages, grids: Any, prompt: str, x: str, y: str) -> dict[str, list[Any]]:
        """The images of the two grids as a record notes them (SHA-256 or URL, in position order)."""
        return {
            s: [image_extra(loaded.images[i]).get("sha256") or image_extra(loaded.images[i]).get("url")
                for i in grids.grids[(prompt, s)]]
            for s in (x, y)
        }  # fmt: skip

    def _grid(self, loaded: LoadedImages, images: Sequence[str], name: str) -> tuple[Part, ...]:
        from reljudge.llm.images import TextPart

        parts: list[Part] = []
        for position, image_id in enumerate(images, 1):
            parts.append(TextPart(f"[{name}{position}]"))
            parts.extend(loaded.parts(image_id, self.detail))
        return tuple(parts)

    # -- running ---------------------------------------------------------------------------

    async def run(self, inputs: JudgeInputs, ctx: JudgeContext) -> None:
        from reljudge.llm.image_messages import placeholder
        from reljudge.llm.images import ImageChanged

        grids = inputs.resources["grids"]
        loaded: LoadedImages = inputs.resources.get("loaded_images") or LoadedImages()
        parser = self.parser()
        params = self.call_params()

        async def ask(prompt: str, first: str, second: str) -> Answer:
            mx, my = placeholder(), placeholder()
            images = {
                mx: self._grid(loaded, grids.grids[(prompt, first)], "X"),
                my: self._grid(loaded, grids.grids[(prompt, second)], "Y"),
            }
            variables = {"query": inputs.topics[prompt], "documentA": mx, "documentB": my}
            return await ctx.ask(
                self.prompt, variables, parser, budget=self.answer_budget, images=images, **params
            )

        async def judge(item: tuple[str, str, str, str | None]) -> None:
            prompt, x, y, problem = item
            if problem is not None:
                ctx.emit(
                    skipped_record(
                        ctx, self.prompt, problem, method=self.name, qid=prompt, docid=x, docid_b=y
                    )
                )
                return
            both = await asyncio.gather(ask(prompt, x, y), ask(prompt, y, x), return_exceptions=True)
            for outcome in both:  # an abort, a cancellation or a bug ends the job as before
                if isinstance(outcome, BaseException) and not isinstance(outcome, ImageChanged):
                    raise outcome
            changed = next((o for o in both if isinstance(o, ImageChanged)), None)
            if changed is not None:  # an image file changed after the run read it: not judged
                ctx.emit(
                    skipped_record(
                        ctx, self.prompt, str(changed), method=self.name, qid=prompt, docid=x, docid_b=y
                    )
                )
                return
            forward, backward = both
            assert not isinstance(forward, BaseException) and not isinstance(backward, BaseException)
            ctx.emit(
                self._record(ctx, prompt, x, y, forward, backward, self._hashes(loaded, grids, prompt, x, y))
            )

        # a pair makes two calls: half as many pairs as single items keep the client as busy
        await run_bounded(self._pairs(inputs, ctx.done), judge, limit=max(1, ctx.fan_out // 2))

    def _record(
        self,
        ctx: JudgeContext,
        prompt: str,
        x: str,
        y: str,
        forward: Answer,
        backward: Answer,
        images: dict[str, list[Any]],
    ) -> Judgment:
        fields: dict[str, Any] = {"qid": prompt, "docid": x, "docid_b": y, "method": self.name}
        provenance = answer_provenance(ctx, self.prompt, forward).model_copy(
            update={
                "usage": forward.usage + backward.usage,
                "latency_s": max(forward.result.latency_s, backward.result.latency_s),
                "cached": forward.result.cached and backward.result.cached,
                "attempts": forward.attempts + backward.attempts,
            }
        )
        raw = f"[{x} shown as X]\n{clip(forward.result.text)}\n[{y} shown as X]\n{clip(backward.result.text)}"
        how = f"{forward.how}|{backward.how}"
        try:
            orders = {}
            for name, shown, answer in (("xy", x, forward), ("yx", y, backward)):
                orders[name] = {
                    k: v
                    for k, v in {
                        "shown_as_x": shown,
                        "status": answer.status,
                        "label": answer.label,
                        "parse": answer.how,
                        "error": answer.error,
                        "raw": clip(answer.result.text),
                        "messages_sha256": answer.result.messages_sha256,
                    }.items()
                    if v is not None
                }
            failed = [(n, a) for n, a in (("xy", forward), ("yx", backward)) if a.status != "ok"]
            extra: dict[str, Any] = {"orders": orders, "images": images}
            if failed:
                status, label = failed[0][1].status, None
                error = "; ".join(f"order {n}: {a.error}" for n, a in failed)
            else:
                status, error = "ok", None
                label, mean = combine(int(forward.label), int(backward.label))  # type: ignore[arg-type]
                extra["mean"] = mean
            return Judgment(
                **fields,
                label=label,
                status=status,  # type: ignore[arg-type]
                raw=raw,
                error=error,
                parse=how,
                extra=extra,
                provenance=provenance,
            )
        except Exception as err:  # one odd answer must never end the job
            return unreadable_record(fields, raw, how, err, provenance)

    # -- scores ----------------------------------------------------------------------------

    @classmethod
    def score_records(cls, records: Sequence[Any], **options: Any) -> dict[str, AggregatedScores]:
        """``grid-pairwise``: each system's net preference per prompt (module docstring), with
        the pairs' preferences in ``details["preferences"]`` (rows prompt, system_x, system_y,
        pref, sorted). The latest record of each pair counts; a failed one is left out."""
        from reljudge.aggregation import AggregatedScores
        from reljudge.aggregation.exclusions import Exclusions

        latest: dict[tuple[str, str, str], Any] = {}
        for record in records:
            if record.method == METHOD:
                latest[(record.qid, record.docid, record.docid_b)] = record
        scores: dict[str, dict[str, float]] = {}
        rows: list[tuple[str, str, str, int]] = []
        exclusions = Exclusions()
        for (prompt, x, y), record in sorted(latest.items()):
            if not record.ok or record.label is None:  # a failed pair counts for neither system
                exclusions.failed[record.status] += 1
                exclusions.failed_keys.append((prompt, x, y))
                continue
            topic = scores.setdefault(prompt, {})
            topic.setdefault(x, 0.0)
            topic.setdefault(y, 0.0)
            pref = int(record.label)
            topic[x] -= pref
            topic[y] += pref
            rows.append((prompt, x, y, pref))
        return {
            METHOD: AggregatedScores(
                METHOD, scores, exclusions, details={"preferences": rows}, family=METHOD, primary=True
            )
        }

    # -- estimating ------------------------------------------------------------------------

    def estimate(self, inputs: JudgeInputs) -> CallEstimate:
        """Two calls per pair with usable images: the prompt's text tokens (~4 characters a token)
        plus both grids' images by OpenAI's tile rule (`reljudge.llm.images`), and the position
        labels."""
        from reljudge.judges.base import estimate_tokens
        from reljudge.judges.token_count import prompt_tokens
        from reljudge.llm.images import image_tokens

        grids = inputs.resources["grids"]
        loaded: LoadedImages = inputs.resources.get("loaded_images") or LoadedImages()
        calls = tokens = 0
        for prompt, x, y, problem in self._pairs(inputs, inputs.recorded):
            if problem is not None:
                continue
            calls += 2
            text = prompt_tokens(
                self.prompt, {"query": inputs.topics.get(prompt, ""), "documentA": "", "documentB": ""}
            )
            grid_tokens = sum(
                image_tokens(loaded.parts(i, self.detail)[0]) + estimate_tokens(f"[X{n}]")
                for s in (x, y)
                for n, i in enumerate(grids.grids[(prompt, s)], 1)
            )
            tokens += 2 * (text + grid_tokens)
        answer = self.max_tokens or self.answer_tokens
        note = (
            f"{self.name}: {calls // 2} pairs x 2 orders; image tokens by OpenAI's tile rule for gpt-4o "
            "(85 + 170 a 512-px tile; an image URL at the rule's largest, 1,445)"
        )
        return CallEstimate(calls, tokens, calls * answer, note=note, records=calls // 2)
