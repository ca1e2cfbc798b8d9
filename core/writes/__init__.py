"""The write side: proposals, curator decisions, outcomes, trusted import and the safety
policy (validation, redaction, PII) every write passes."""
