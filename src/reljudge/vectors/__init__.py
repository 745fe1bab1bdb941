"""Passage and answer vectors, shared by the analyses that compare texts by their embeddings
(``judge fd``, ``judge answers similarity``, ``judge evaluate --answers``).

- `reljudge.vectors.embedding_source`: what an embedding source and a text encoder are, and
  `PrecomputedEmbeddings`, vectors held in memory (pure: the analyses' computation imports it);
- `reljudge.vectors.npy`: precomputed vectors from a ``.npy`` matrix and its ids file;
- `reljudge.vectors.encoders`: the sentence-transformers encoder (optional extra
  ``reljudge[embeddings]``; `resolve_encoder` finds the model);
- `reljudge.vectors.endpoint`: an OpenAI-compatible embeddings endpoint as the encoder, through
  the project's LLM client;
- `reljudge.vectors.embedding_cache`: texts encoded on demand, the vectors cached on disk
  (`TextEmbeddings`), and `vector_source`, a command's vectors from a file or an encoder.

Nothing is imported here: numpy, sentence-transformers and the LLM client load on use.
"""
