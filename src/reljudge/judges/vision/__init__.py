"""Vision-language judges of text-to-image grids (the offline set-based evaluation of
text-to-image generation): `image-relevance` grades each image of the grids against its prompt,
`grid-pairwise` compares two systems' grids for a prompt on the five-point scale of the human
preferences. Both read the grids file and the images table (``--grids``, ``--images``,
`reljudge.judges.vision.inputs`), take the prompts as topics (``--topics``) and send the images as
OpenAI content parts through reljudge's client (`reljudge.llm.images`).
"""

from reljudge.judges.vision.grid_pairwise import GridPairwiseJudge
from reljudge.judges.vision.relevance import ImageRelevanceJudge

__all__ = ["GridPairwiseJudge", "ImageRelevanceJudge"]
