"""Secret and PII detectors: regular expressions and an optional local NER model."""
