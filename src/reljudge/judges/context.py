"""`JudgeContext`: a judge's only way out -- LLM calls, emitting records, and what was already
judged (to resume without calling twice)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from reljudge.llm.types import ProviderAbort
from reljudge.records import Judgment, Key, Provenance

if TYPE_CHECKING:
    from reljudge.judges.reading import Answer
    from reljudge.llm import ChatResult, LLMClient
    from reljudge.prompts import PromptTemplate
    from reljudge.prompts.parsing import Parsed

#: how many items a judge's fan-out works on at once, per unit of the client's concurrency:
#: enough to keep every connection busy, few enough that prompts are not all held in memory
FAN_OUT_PER_SLOT = 4


#: the template variables that say which item a request is about (named when a replay misses)
ITEM_VARIABLES = ("query", "question", "document", "passage", "documentA", "documentB")


class JudgeContext:
    """The judge's only way out: LLM calls, emitting records, and what was already judged.

    `chat` adds the call's provenance (backend, model, prompt id and hash, rendered-messages
    hash, decoding parameters, usage, latency) to every record made with `record`.

    ``existing`` is any `Mapping` from `Key` to the earlier `Judgment` of that key. It need not
    be a dict of records in memory: the runner passes a compact, lazy mapping
    (`reljudge.io.judgment_index.ExistingRecords`) that holds the keys and reads a record from the
    judgments file only when it is looked up. Judges should therefore test membership with
    `done` (or ``key in existing``) and, when they need the records of one stage, filter the
    keys by method (``key[0]``) before reading values -- not iterate every value.
    """

    def __init__(
        self,
        client: LLMClient,
        emit: Callable[[Judgment], None],
        existing: Mapping[Key, Judgment] | None = None,
        tool_version: str | None = None,
        samples: int = 1,
    ):
        self.client = client
        self._emit = emit
        self.existing: Mapping[Key, Judgment] = existing or {}
        self.tool_version = tool_version
        #: how many answers a pointwise judge asks for per item (``--samples``)
        self.samples = samples

    def sample_params(self, index: int) -> dict[str, Any]:
        """The decoding params of sample ``index``: none for the first (the answer a run without
        samples gets), the run's seed plus ``index`` for the others -- so that each sample is its
        own request, cached under its own key (a re-run is free), and a provider that honours
        seeds draws a different answer."""
        if index == 0:
            return {}
        config = getattr(self.client, "config", None)
        seed = getattr(config, "seed", None)
        return {"seed": (seed if isinstance(seed, int) else 0) + index}

    @property
    def fan_out(self) -> int:
        """The ``limit`` for `run_bounded`: `FAN_OUT_PER_SLOT` times the client's concurrency."""
        config = getattr(self.client, "config", None)
        concurrency = getattr(config, "concurrency", None)
        return FAN_OUT_PER_SLOT * concurrency if isinstance(concurrency, int) and concurrency > 0 else 32

    def done(self, key: Key) -> Judgment | None:
        """The finished record with this key from an earlier (interrupted) run, if any."""
        return self.existing.get(key)

    async def chat(
        self,
        prompt: PromptTemplate,
        variables: Mapping[str, str],
        *,
        budget: int | None = None,
        refresh: bool = False,
        images: Mapping[str, Sequence[Any]] | None = None,
        **params: Any,
    ) -> ChatResult:
        """Render ``prompt`` with ``variables`` and send it. ``budget`` is the judge's default
        answer length in tokens: sent as ``max_tokens`` unless the call or the run sets one
        (``--max-tokens``, ``--param max_tokens=...``), so no answer is unbounded. ``images``:
        markers (`reljudge.llm.images.placeholder`) rendered in ``variables``, each replaced by its
        content parts (text and images, `reljudge.llm.images.attach_images`)."""
        from reljudge.llm.batch.collect import REQUEST_TOPIC  # the client's package

        messages: list[Any] = prompt.render(**variables)
        if images:
            from reljudge.llm.image_messages import attach_images

            messages = attach_images(messages, images)
        if budget is not None and "max_tokens" not in params and not _run_sets_max_tokens(self.client):
            params["max_tokens"] = budget
        # the topic the chat is about: batch request files can be split by it (`run.batch.requests`)
        query = variables.get("query")
        token = REQUEST_TOPIC.set(query if isinstance(query, str) else None)
        try:
            return await self.client.chat(messages, refresh=refresh, **params)
        except ProviderAbort as abort:
            if abort.kind != "cache_miss":
                raise
            # an offline replay that misses: name the item (the prompt and what it was asked about)
            about = ", ".join(
                f"{name} {str(value)[:80]!r}" for name, value in variables.items() if name in ITEM_VARIABLES
            )
            raise ProviderAbort(
                abort.kind,
                f"{abort.message}: prompt {prompt.id}, {about}",
                status_code=abort.status_code,
                hint=abort.hint,
            ) from None
        finally:
            REQUEST_TOPIC.reset(token)

    async def ask(
        self,
        prompt: PromptTemplate,
        variables: Mapping[str, str],
        parse: Callable[[str], Parsed],
        *,
        reask: bool = True,
        budget: int | None = None,
        images: Mapping[str, Sequence[Any]] | None = None,
        **params: Any,
    ) -> Answer:
        """Ask for one answer and read it (`reljudge.judges.reading`). An answer from which no
        label can be read is dropped from the response cache, so that no later run replays it,
        and (with ``reask``) asked once more, bypassing the cache; the `Answer` counts both calls
        and keeps the first answer in ``earlier``."""
        from reljudge.judges.reading import Answer

        result = await self.chat(prompt, variables, budget=budget, images=images, **params)
        answer = Answer.of(result, prompt, parse)
        if answer.unreadable:
            self.client.forget(result)
            if reask:
                again = await self.chat(
                    prompt, variables, budget=budget, refresh=True, images=images, **params
                )
                answer = answer.after(Answer.of(again, prompt, parse))
                if answer.unreadable:
                    self.client.forget(again)
        return answer

    def provenance(self, prompt: PromptTemplate | None, result: ChatResult | None) -> Provenance:
        if result is None:
            return Provenance(
                prompt_id=getattr(prompt, "id", None),
                prompt_sha256=getattr(prompt, "sha256", None),
                tool_version=self.tool_version,
            )
        return Provenance(
            backend=result.backend,
            base_url=result.base_url or None,
            model=result.model,
            prompt_id=getattr(prompt, "id", None),
            prompt_sha256=getattr(prompt, "sha256", None),
            messages_sha256=result.messages_sha256,
            params=dict(result.params),
            usage=result.usage,
            latency_s=result.latency_s,
            cached=result.cached,
            attempts=result.attempts,
            tool_version=self.tool_version,
        )

    def emit(self, judgment: Judgment) -> Judgment:
        """Hand a finished record to the runner (which appends it to the judgments file)."""
        self._emit(judgment)
        return judgment


def _run_sets_max_tokens(client: Any) -> bool:
    """Whether the client's configuration already bounds the answer length."""
    config = getattr(client, "config", None)
    if config is None:
        return False
    if getattr(config, "max_tokens", None) is not None:
        return True
    extra = getattr(config, "extra_params", None) or {}
    options = extra.get("options")
    if not isinstance(options, Mapping):
        options = {}
    return any(k in extra for k in ("max_tokens", "max_completion_tokens", "num_predict")) or (
        "num_predict" in options
    )
