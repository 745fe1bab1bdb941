"""What the vision judges share: their options, the files they read and the checks of their prompt.

A vision judge reads the grids file and the images table (``GRIDS``, ``IMAGES``), takes the
text-to-image prompts as topics and no passages, and sends each image as a content part of the
size and ``detail`` its options allow. Its prompt's output must be of one of ``output_types``;
`check_prompt` adds a judge's own checks (the pairwise judge's five labels).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from reljudge.io.image_files import DEFAULT_MAX_IMAGE_BYTES
from reljudge.judges.base import Judge
from reljudge.judges.option_checks import check_max_tokens, check_output, resolve_prompt
from reljudge.judges.vision.inputs import GRIDS, IMAGES, check_options

if TYPE_CHECKING:
    from reljudge.prompts import PromptTemplate


class VisionJudge(Judge):
    """A judge of images in text-to-image grids; subclasses set ``name``, ``default_prompt``,
    ``label_methods``, ``output_types`` and ``answer_tokens``."""

    resources = (GRIDS, IMAGES)
    reads_passages = False  # the items are images of the grids; their prompts are the topics
    answer_budget: ClassVar[int] = 256
    #: the output types the judge's prompt may declare
    output_types: ClassVar[tuple[str, ...]] = ()

    def __init__(
        self,
        prompt: str | PromptTemplate | None = None,
        max_tokens: int | None = None,
        detail: str = "auto",
        max_image_bytes: int = DEFAULT_MAX_IMAGE_BYTES,
        bad_images: str = "error",
    ) -> None:
        self.prompt: PromptTemplate = resolve_prompt(prompt if prompt is not None else self.default_prompt)
        check_output(self.prompt, self.output_types, self.name)
        self.check_prompt()
        check_max_tokens(max_tokens)
        check_options(detail, max_image_bytes, bad_images)
        self.max_tokens, self.detail = max_tokens, detail
        self.max_image_bytes, self.bad_images = max_image_bytes, bad_images

    def check_prompt(self) -> None:
        """A judge's own checks of ``self.prompt`` beyond its output type (none by default)."""

    def call_params(self) -> dict[str, Any]:
        """The parameters every call of the judge sends (``max_tokens`` when the judge sets one)."""
        return {"max_tokens": self.max_tokens} if self.max_tokens is not None else {}
