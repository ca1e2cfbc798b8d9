"""Adapters: storage providers, detectors, embedders and rerankers behind the ports."""
