"""The curation policy: opt-in rules under which a new proposal becomes memory without a
person, everything else waiting for review.

A proposal is approved at once only when it adds one concise fact of a durable kind, its first
evidence ref is a file or commit of the repository (checked at propose time), no secret or
personal data was found in it, and no active memory resembles it. The decision is an ordinary,
audited curator decision whose reviewer is ``auto_policy``; it can be undone like any other.
The composition root enables the policy only from the user's own configuration, never from the
repository (a cloned repository must not approve its own agents' proposals).
"""

from __future__ import annotations

import attrs

from swarmmem.core.model.ids import normalize_text
from swarmmem.core.model.records import DURABLE_MEMORY_KINDS, MemoryProposal

APPROVAL_REASON = (
    "approved by the curation policy: a concise fact of a durable kind, sourced from the "
    "repository, no secret or personal data, nothing similar stored"
)


@attrs.frozen(kw_only=True)
class CurationPolicy:
    """The rules (see the module docstring); ``kinds`` and ``max_chars`` narrow them."""

    kinds: frozenset[str] = DURABLE_MEMORY_KINDS
    max_chars: int = 500

    def approval(self, proposal: MemoryProposal) -> str | None:
        """The reason to approve ``proposal`` now, or ``None`` when it waits for a person."""
        record = proposal.proposed_record
        if proposal.status != "pending" or proposal.operation != "add" or record is None:
            return None
        if record.kind not in self.kinds or record.stability != "durable":
            return None
        if len(normalize_text(record.text)) > self.max_chars:
            return None
        if record.source.type not in ("file", "commit"):
            return None
        if proposal.metadata.get("pii") or proposal.metadata.get("similar"):
            return None
        return APPROVAL_REASON
