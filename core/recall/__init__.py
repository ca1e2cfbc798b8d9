"""The one recall pipeline: request building, candidates, lexical scoring, dense kNN,
fusion, rerank, slicing, related-item expansion, the prompt block and injection planning."""
