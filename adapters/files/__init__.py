"""Files beside the store: the run log, the reflection lesson files and the evidence cache."""
