"""Local model adapters: the ONNX MiniLM embedder, the hashing embedder and the rerankers."""
