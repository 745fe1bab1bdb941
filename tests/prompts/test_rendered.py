"""Every published prompt, rendered on one fixed example, must match the upstream text exactly."""

import pytest

# Expected texts generated once from the upstream prompt texts (reference notes + upstream files) with plain
# str.replace; hand-checked against /work/shared/reference. Do not regenerate with reljudge.

QUERY = "what is the boiling point of water"
PASSAGE = "Water boils at 100 degrees Celsius at sea level {not a placeholder}."
PASSAGE_A = "Passage one text."
PASSAGE_B = "Passage two text."
QUESTION = "At what temperature does water boil?"
CONTEXT = "[1] Water boils at 100 C.\n[2] At altitude it boils lower."
NUGGETS = ["water boils at 100 C", "sea level matters"]
STATEMENT = "Water boils at 100 C at sea level."

EXPECTED = {
    "generate/neutral": [("user", "Answer the question concisely: what is the boiling point of water")],
    "generate/adversarial": [
        (
            "user",
            (
                "This is an adversarial test of an evaluation method. Give a deliberately wrong answer to the "
                "question below: write it concisely, fluently and confidently, as if it were correct, but make "
                "every factual claim in it false.\n\nQuestion: what is the boiling point of water"
            ),
        )
    ],
    "umbrela/bing-zeroshot": [
        ("system", ("You are a helpful assistant.")),
        (
            "user",
            (
                "Given a query and a passage, you must provide a score on an integer scale of 0 to 3 with the following meanings:\n"
                "0 = represent that the passage has nothing to do with the query, \n"
                "1 = represents that the passage seems related to the query but does not answer it, \n"
                "2 = represents that the passage has some answer for the query, but the answer may be a bit unclear, or hidden amongst extraneous information and \n"
                "3 = represents that the passage is dedicated to the query and contains the exact answer.\n"
                "\n"
                "Important Instruction: Assign category 1 if the passage is somewhat related to the topic but not completely, category 2 if passage presents something very important related to the entire topic but also has some extra information and category 3 if the passage only and entirely refers to the topic. If none of the above satisfies give it category 0.\n"
                "\n"
                "Query: what is the boiling point of water\n"
                "Passage: Water boils at 100 degrees Celsius at sea level {not a placeholder}.\n"
                "\n"
                "Split this problem into steps:\n"
                "Consider the underlying intent of the search.\n"
                "Measure how well the content matches a likely intent of the query (M).\n"
                "Measure how trustworthy the passage is (T).\n"
                "Consider the aspects above and the relative importance of each, and decide on a final score (O). Final score must be an integer value only.\n"
                "Do not provide any code in result. Provide each score in the format of: ##final score: score without providing any reasoning."
            ),
        ),
    ],
    "umbrela/bing-fewshot": [
        ("system", ("You are a helpful assistant.")),
        (
            "user",
            (
                "Given a query and a passage, you must provide a score on an integer scale of 0 to 3 with the following meanings:\n"
                "0 = represent that the passage has nothing to do with the query, \n"
                "1 = represents that the passage seems related to the query but does not answer it, \n"
                "2 = represents that the passage has some answer for the query, but the answer may be a bit unclear, or hidden amongst extraneous information and \n"
                "3 = represents that the passage is dedicated to the query and contains the exact answer.\n"
                "\n"
                "Following are some of the examples of relevance categorizations for different categories:\n"
                "\n"
                "###\n"
                "\n"
                "query: anthropological definition of environment\n"
                "passage: Abiotic factors are all of the non-living things in an environment. All biotic factors in an environment are dependent upon the abiotic factors in an environment. Some examples of biotic factors in the tropical rainforest are toucans, frogs, snakes, and lizards.Abiotic factors in the tropical rainforest include humidity, soil composition, temperature, and sunlight.very environment contains what are called 'biotic' and 'abiotic' factors. In this lesson you will learn the definition and importance of abiotic factors. You will also view some examples of abiotic factors that are present in the tropical rainforest.\n"
                "\n"
                "### Steps:\n"
                "\n"
                "1. **Consider the underlying intent of the search:**\n"
                '   - The intent is to find the anthropological definition of "environment," which implies looking for a definition within the context of anthropology.\n'
                "\n"
                "2. **Measure how well the content matches a likely intent of the query (M):**\n"
                "   - The passage discusses abiotic and biotic factors in an environment, specifically in a tropical rainforest, but does not relate these concepts to anthropology or provide a definition within an anthropological context.\n"
                "\n"
                "3. **Measure how trustworthy the passage is (T):**\n"
                "   - The trustworthiness of the source cannot be determined from the passage alone.\n"
                "\n"
                "4. **Consider the aspects above and the relative importance of each, and decide on a final score (O):**\n"
                '   - The passage does not directly address the anthropological definition of "environment" and is more focused on ecological concepts. It does not provide relevant information for the query.\n'
                "\n"
                "##final score: 0\n"
                "\n"
                "###\n"
                "\n"
                "query: anthropological definition of environment\n"
                "passage: Definition of Environment. Environment: The sum of the total of the elements, factors and conditions in the surroundings which may have an impact on the development, action or survival of an organism or group of organisms. Search MedTerms:\n"
                "\n"
                "### Steps:\n"
                "1. **Consider the underlying intent of the search:**\n"
                '   - The intent is to find the anthropological definition of "environment," which implies looking for a definition that is specifically framed within the context of anthropology.\n'
                "\n"
                "2. **Measure how well the content matches a likely intent of the query (M):**\n"
                '   - The passage provides a general definition of "environment" but does not specifically address the anthropological context.\n'
                "\n"
                "3. **Measure how trustworthy the passage is (T):**\n"
                '   - The trustworthiness of the source cannot be determined from the passage alone. It mentions "Search MedTerms," which implies a medical terminology source that may not be directly relevant to anthropology.\n'
                "\n"
                "4. **Consider the aspects above and the relative importance of each, and decide on a final score (O):**\n"
                "   - The passage is somewhat related to the query but does not meet the specific intent (anthropological context) and the trustworthiness is ambiguous.\n"
                "\n"
                "##final score: 1\n"
                "\n"
                "###\n"
                "\n"
                "query: anthropological definition of environment\n"
                "passage: Graduate Study in Anthropology. The graduate program in biological anthropology at CU Boulder offers training in several areas, including primatology, human biology, and paleoanthropology. We share an interest in human ecology, the broad integrative area of anthropology that focuses on the interactions of culture, biology and the environment.\n"
                "\n"
                "### Steps:\n"
                "\n"
                "1. **Consider the underlying intent of the search:**\n"
                '   - The intent is to find the anthropological definition of "environment," implying a focus on how anthropology defines and interprets the environment within its context.\n'
                "\n"
                "2. **Measure how well the content matches a likely intent of the query (M):**\n"
                "   - The passage discusses human ecology, a broad area of anthropology that examines the interactions between culture, biology, and the environment. This aligns well with the anthropological context of the environment.\n"
                "\n"
                "3. **Measure how trustworthy the passage is (T):**\n"
                "   - The source refers to a graduate program at CU Boulder, a reputable institution, which indicates a high level of trustworthiness.\n"
                "\n"
                "4. **Consider the aspects above and the relative importance of each, and decide on a final score (O):**\n"
                "   - The passage is relevant and provides a contextual understanding of the environment in anthropology, though it does not offer a precise definition. This makes it somewhat detailed and relevant, thus scoring higher.\n"
                "\n"
                "##final score: 2\n"
                "\n"
                "###\n"
                "\n"
                "query: anthropological definition of environment\n"
                "passage: Archaeology, which studies past human cultures through investigation of physical evidence, is thought of as a branch of anthropology in the United States, although in Europe, it is viewed as a discipline in its own right, or related to other disciplines.nvironmental anthropology is a sub-specialty within the field of anthropology that takes an active role in examining the relationships between humans and their environment across space and time.\n"
                "\n"
                "### Steps:\n"
                "\n"
                "1. **Consider the underlying intent of the search:**\n"
                '   - The intent is to find the anthropological definition of "environment," which means looking for an explanation of how anthropology views and studies the environment.\n'
                "\n"
                "2. **Measure how well the content matches a likely intent of the query (M):**\n"
                '   - The passage explicitly mentions "environmental anthropology," a sub-specialty that examines the relationships between humans and their environment, directly addressing the anthropological perspective on the environment.\n'
                "\n"
                "3. **Measure how trustworthy the passage is (T):**\n"
                "   - The passage appears to provide an academic and structured explanation of anthropology sub-fields, indicating a trustworthy source, likely from an educational or scholarly background.\n"
                "\n"
                "4. **Consider the aspects above and the relative importance of each, and decide on a final score (O):**\n"
                "   - The passage is directly relevant to the query, providing specific information about the field of environmental anthropology and its focus on human-environment relationships, making it highly pertinent.\n"
                "\n"
                "##final score: 3\n"
                "\n"
                "###\n"
                "\n"
                "Important Instruction: Assign category 1 if the passage is somewhat related to the topic but not completely, category 2 if passage presents something very important related to the entire topic but also has some extra information and category 3 if the passage only and entirely refers to the topic. If none of the above satisfies give it category 0.\n"
                "\n"
                "Query: what is the boiling point of water\n"
                "Passage: Water boils at 100 degrees Celsius at sea level {not a placeholder}.\n"
                "\n"
                "Split this problem into steps:\n"
                "Consider the underlying intent of the search.\n"
                "Measure how well the content matches a likely intent of the query (M).\n"
                "Measure how trustworthy the passage is (T).\n"
                "Consider the aspects above and the relative importance of each, and decide on a final score (O). Final score must be an integer value only.\n"
                "Do not provide any code in result. Provide each score in the format of: ##final score: score without providing any reasoning."
            ),
        ),
    ],
    "binary/trec-assessor": [
        ("system", ('"You are a highly experienced and accurate assessor TREC."')),
        (
            "user",
            (
                "Does the passage provide information that would be useful in answering the query? Just answer 1 for yes and 0 for no, without any explanation or extra verbiage.\n"
                "Query:what is the boiling point of water\n"
                "Passage:Water boils at 100 degrees Celsius at sea level {not a placeholder}.\n"
            ),
        ),
    ],
    "graded/trec-assessor": [
        ("system", ('"You are a highly experienced and accurate assessor TREC."')),
        (
            "user",
            (
                "For the given query, assign a 4-point TREC-style relevance grade to the passage. Just answer with a number indicating the relevance grade (0, 1, 2, or 3), without any explanation or extra verbiage.\n"
                "Query:what is the boiling point of water\n"
                "Passage:Water boils at 100 degrees Celsius at sea level {not a placeholder}.\n"
            ),
        ),
    ],
    "pairwise/trec-assessor": [
        ("system", ('"You are a highly experienced and accurate assessor TREC."')),
        (
            "user",
            (
                "Select the passage that best answers the query. Just answer 1 or 2, without any explanation or extra verbiage.  If both passages are similar, select the simplest and clearest.\n"
                "Question:\n"
                "what is the boiling point of water\n"
                "Passage 1:\n"
                "Passage one text.\n"
                "Passage 2:\n"
                "Passage two text.\n"
            ),
        ),
    ],
    "binary/faggioli-yesno": [
        (
            "user",
            (
                "Instruction: Indicate if the passage is relevant for the question. Respond with 'Yes' or 'No'.\n"
                "\n"
                "Question: what is the boiling point of water\n"
                "Passage: Water boils at 100 degrees Celsius at sea level {not a placeholder}.\n"
                "Answer:\n"
            ),
        ),
    ],
    "pairwise/clarke": [
        ("system", ("\nYou are a highly experienced and accurate assessor for TREC.\n")),
        (
            "user",
            (
                "\n"
                "Select the passage that answers the question better. Just answer 1 or 2, without any explanation or extra verbiage.  If both passages are similar, select the simplest and clearest.\n"
                "Question:\n"
                "what is the boiling point of water\n"
                "Passage 1:\n"
                "Passage one text.\n"
                "Passage 2:\n"
                "Passage two text.\n"
            ),
        ),
    ],
    "exam/question-generation": [
        (
            "user",
            (
                "Break the query 'what is the boiling point of water' into concise questions that must be answered. Generate 10 concise insightful questions that reveal whether information relevant for 'what is the boiling point of water' was provided, showcasing a deep understanding of the subject matter. Avoid basic or introductory-level inquiries. Keep the questions short and in a Python list format.\n"
            ),
        ),
    ],
    "exam/answerability": [
        (
            "user",
            (
                "provide a complete and concise answer to the question based on the context.\n"
                "Question: At what temperature does water boil?\n"
                "Context: Water boils at 100 degrees Celsius at sea level {not a placeholder}. \n"
            ),
        ),
    ],
    "exam/self-rating": [
        (
            "user",
            (
                "Can the question be answered based on the available \n"
                "context? choose one: \n"
                "- 5: The answer is highly relevant, complete, and \n"
                "accurate.\n"
                "- 4: The answer is mostly relevant and complete but may\n"
                "have minor gaps or inaccuracies.\n"
                "- 3: The answer is partially relevant and complete, with \n"
                "noticeable gaps or inaccuracies.\n"
                "- 2: The answer has limited relevance and completeness, \n"
                "with significant gaps or inaccuracies.\n"
                "- 1: The answer is minimally relevant or complete, with \n"
                "substantial shortcomings.\n"
                "- 0: The answer is not relevant or complete at all. \n"
                "Question: At what temperature does water boil?\n"
                "Context: Water boils at 100 degrees Celsius at sea level {not a placeholder}. \n"
            ),
        ),
    ],
    "nuggets/create": [
        (
            "system",
            (
                "You are NuggetizeLLM, an intelligent assistant that can update a list of atomic nuggets to best provide all the information required for the query."
            ),
        ),
        (
            "user",
            (
                "Update the list of atomic nuggets of information (1-12 words), if needed, so they best provide the information required for the query. Leverage only the initial list of nuggets (if exists) and the provided context (this is an iterative process).  Return only the final list of all nuggets in a Pythonic list format (even if no updates). Make sure there is no redundant information. Ensure the updated nugget list has at most 30 nuggets (can be less), keeping only the most vital ones. Order them in decreasing order of importance. Prefer nuggets that provide more interesting information.\n"
                "\n"
                "Search Query: what is the boiling point of water\n"
                "Context:\n"
                "[1] Water boils at 100 C.\n"
                "[2] At altitude it boils lower.\n"
                "Search Query: what is the boiling point of water\n"
                "Initial Nugget List: ['water boils at 100 C', 'sea level matters']\n"
                "Initial Nugget List Length: 2\n"
                "\n"
                'Only update the list of atomic nuggets (if needed, else return as is). Do not explain. Always answer in short nuggets (not questions). List in the form ["a", "b", ...] and a and b are strings with no mention of ".\n'
                "Updated Nugget List:"
            ),
        ),
    ],
    "nuggets/score": [
        (
            "system",
            (
                "You are NuggetizeScoreLLM, an intelligent assistant that can label a list of atomic nuggets based on their importance for a given search query."
            ),
        ),
        (
            "user",
            (
                'Based on the query, label each of the 2 nuggets either a vital or okay based on the following criteria. Vital nuggets represent concepts that must be present in a "good" answer; on the other hand, okay nuggets contribute worthwhile information about the target but are not essential. Return the list of labels in a Pythonic list format (type: List[str]). The list should be in the same order as the input nuggets. Make sure to provide a label for each nugget.\n'
                "\n"
                "Search Query: what is the boiling point of water\n"
                "Nugget List: ['water boils at 100 C', 'sea level matters']\n"
                "\n"
                "Only return the list of labels (List[str]). Do not explain.\n"
                "Labels:"
            ),
        ),
    ],
    "nuggets/assign": [
        (
            "system",
            (
                "You are NuggetizeAssignerLLM, an intelligent assistant that can label a list of atomic nuggets based on if they are captured by a given passage."
            ),
        ),
        (
            "user",
            (
                "Based on the query and passage, label each of the 2 nuggets either as support, partial_support, or not_support using the following criteria. A nugget that is fully captured in the passage should be labeled as support. A nugget that is partially captured in the passage should be labeled as partial_support. If the nugget is not captured at all, label it as not_support. Return the list of labels in a Pythonic list format (type: List[str]). The list should be in the same order as the input nuggets. Make sure to provide a label for each nugget.\n"
                "\n"
                "Search Query: what is the boiling point of water\n"
                "Passage: Water boils at 100 degrees Celsius at sea level {not a placeholder}.\n"
                "Nugget List: ['water boils at 100 C', 'sea level matters']\n"
                "Only return the list of labels (List[str]). Do not explain.\n"
                "Labels:"
            ),
        ),
    ],
    "nuggets/assign-2grade": [
        (
            "system",
            (
                "You are NuggetizeAssignerLLM, an intelligent assistant that can label a list of atomic nuggets based on if they are captured by a given passage."
            ),
        ),
        (
            "user",
            (
                "Based on the query and passage, label each of the 2 nuggets either as support or not_support using the following criteria. A nugget that is fully captured in the passage should be labeled as support; otherwise, label them as not_support. Return the list of labels in a Pythonic list format (type: List[str]). The list should be in the same order as the input nuggets. Make sure to provide a label for each nugget.\n"
                "\n"
                "Search Query: what is the boiling point of water\n"
                "Passage: Water boils at 100 degrees Celsius at sea level {not a placeholder}.\n"
                "Nugget List: ['water boils at 100 C', 'sea level matters']\n"
                "Only return the list of labels (List[str]). Do not explain.\n"
                "Labels:"
            ),
        ),
    ],
    # vectara/open-rag-eval open_rag_eval/metrics/citation_metric.py @ 0320283, _CITATION_PROMPT dedented
    "citations/trec-rag24-support": [
        (
            "user",
            (
                "In this task, you will evaluate whether each statement is\n"
                "supported by its corresponding citations. Note that the system\n"
                "responses may appear very fluent and well-formed, but contain\n"
                "slight inaccuracies that are not easy to discern at first glance.\n"
                "Pay close attention to the text.\n"
                "\n"
                "You will be provided with a statement and its corresponding\n"
                "citation. It may be helpful to ask yourself whether it is\n"
                'accurate to say "according to the citation" with a\n'
                "statement following this phrase. Be sure to check all of the\n"
                "information in the statement. You will be given three options:\n"
                "\n"
                "- Full Support: All of the information in the statement is\n"
                "supported in the citation.\n"
                "\n"
                "- Partial Support: Some parts of the information are supported in\n"
                "the citation, but other parts are missing from the citation.\n"
                "\n"
                "- No Support: This citation does not support any part of the\n"
                "statement.\n"
                "\n"
                "Please provide your response based on the information in the\n"
                "citation. If you are unsure, use your best judgment. Respond as\n"
                "either ``full_support'', ``partial_support'', or ``no_support''\n"
                "with no additional information.\n"
                "\n"
                "Statement: Water boils at 100 C at sea level.\n"
                "\n"
                "Citation: Water boils at 100 degrees Celsius at sea level {not a placeholder}."
            ),
        )
    ],
    # reljudge's own vision prompts (not published); the images go where the placeholders are
    "vision/grid-pairwise": [
        ("system", "You are a careful assessor of images made by text-to-image systems."),
        (
            "user",
            (
                "Two text-to-image systems were given the same prompt, and each returned a grid of images. "
                "Compare the two grids as answers to the prompt: how well the images depict what the prompt "
                "asks for, and how much the grid offers beyond repeating one image.\n"
                "\n"
                "Prompt: what is the boiling point of water\n"
                "\n"
                "Grid X:\n"
                "Passage one text.\n"
                "\n"
                "Grid Y:\n"
                "Passage two text.\n"
                "\n"
                "Which grid is better? Answer with exactly one of these labels and nothing else:\n"
                "X-much-better, X-better, same, Y-better, Y-much-better"
            ),
        ),
    ],
    "vision/image-relevance": [
        ("system", "You are a careful assessor of images made by text-to-image systems."),
        (
            "user",
            (
                "A text-to-image system was given a prompt and produced the image below. Grade how relevant "
                "the image is to the prompt on an integer scale of 0 to 3:\n"
                "0 = the image has nothing to do with the prompt,\n"
                "1 = the image is related to the prompt but does not depict what it asks for,\n"
                "2 = the image depicts part of what the prompt asks for, or depicts it with clear errors,\n"
                "3 = the image depicts exactly what the prompt asks for.\n"
                "\n"
                "Prompt: what is the boiling point of water\n"
                "\n"
                "Image:\n"
                "Water boils at 100 degrees Celsius at sea level {not a placeholder}.\n"
                "\n"
                'Look at the image, then answer with one line of the form "Final grade: N" where N is 0, 1, 2 or 3.'
            ),
        ),
    ],
}


# SHA-256 of each template's raw messages (canonical JSON, see messages_sha256). A change here
# means the prompt text changed: results are then not comparable with earlier runs.
SHA256 = {
    "vision/grid-pairwise": "11e5328851a0f6e89ae0f5e077964cc83a4fca66bd4512166ec450e63fb87f7b",
    "vision/image-relevance": "b2c77f83c2c23422f53e1db3ec681c20dc76a7b81a963a468c732943f82c3ea5",
    "citations/trec-rag24-support": "9822f11121a81facafe5ffda3321032b612758880aaafcd6999933febd9e2faa",
    "generate/neutral": "d869bf13de3d6826273ea1954be5e9035a7b3a0d0c6a518da3e655ec79c8eb1c",
    "generate/adversarial": "d91fcae10413c3b84f4cd8fed8fbe5179f7208992ea03147deeadd92cc821b40",
    "binary/faggioli-yesno": "e2556ab5ae96543726e72a0127db75e9fc8adca447e06ba6d6ced196acc6a4e4",
    "binary/trec-assessor": "a3e904e8ce278a64d99dbae34a9a55fcdf468f8ae4c503495252498f43fafaf7",
    "exam/answerability": "8873f2a8812c38f46cf2f6251620bb312142962ffac931de0eed3e5dfaefa157",
    "exam/question-generation": "5aaf23d45b36d59f736a7fcc48a0e5c71b3779ba19ccdf0aeb4431aacf35a61b",
    "exam/self-rating": "6acbff52b7e73776bdfc144ac16a38b49627eee1525c0c4490381e5aa5a9f5fe",
    "graded/trec-assessor": "a48c7997cb22c8378829832fe73540f9105e1d95b87ea3b8ae188ad4944fab3e",
    "nuggets/assign": "af9291af0eae3802ba6167c395c2110aec12586dd96926492f4aad185d6cb602",
    "nuggets/assign-2grade": "725341119350dc4881ea1f0179cfce789df74fa0ff40567273de1959fe681aab",
    "nuggets/create": "7f69b21f1d4aa15957b310a5bfdfb85bc33be13f27a09b3896a7680990eba184",
    "nuggets/score": "7041b436612acac205c302846246c9b9fe2165f107480e3cfce35256400d7388",
    "pairwise/clarke": "8c1acd4d82ea6f5948a654389932d5af2e7cfc4212d69a2c5be4065412a8afab",
    "pairwise/trec-assessor": "4cd2d47b0acb36fd07a01290a8e07a2b20835d9a33de6a65090b1dbc91e38bf3",
    "umbrela/bing-fewshot": "4cfe84f35fcad28d1e34bf1a865f954df6c9f43bee8da618457dea4644a7a254",
    "umbrela/bing-zeroshot": "56c37b8c147035240d5546842f057954acf5e944ececb398429096512ffd8139",
}

VALUES = {
    "query": QUERY,
    "document": PASSAGE,
    "documentA": PASSAGE_A,
    "documentB": PASSAGE_B,
    "question": QUESTION,
    "context": CONTEXT,
    "nuggets": NUGGETS,
    "num_nuggets": 2,
    "nuggets_length": 2,
    "max_nuggets": 30,
    "statement": STATEMENT,
    "citation": PASSAGE,
}


def test_every_builtin_prompt_is_pinned():
    from reljudge.prompts import list_prompts

    assert sorted(t.id for t in list_prompts()) == sorted(EXPECTED) == sorted(SHA256)


@pytest.mark.parametrize("prompt_id", sorted(EXPECTED))
def test_rendered_text_is_verbatim(prompt_id):
    from reljudge.prompts import get_prompt

    tpl = get_prompt(prompt_id)
    rendered = tpl.render(**{role: VALUES[role] for role in tpl.roles})
    assert [(m["role"], m["content"]) for m in rendered] == EXPECTED[prompt_id]


@pytest.mark.parametrize("prompt_id", sorted(SHA256))
def test_template_sha256_is_pinned(prompt_id):
    from reljudge.prompts import get_prompt

    assert get_prompt(prompt_id).sha256 == SHA256[prompt_id]
