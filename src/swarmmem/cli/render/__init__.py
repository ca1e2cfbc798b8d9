"""Every text and JSON rendering of the ``swarmmem`` command line.

The commands compute a result (through the :class:`~swarmmem.memory.Memory` facade and the
runner functions) and hand it to :func:`swarmmem.cli.app.emit` with one of the text
renderers of the modules here (agent commands, memory management, maintenance reports, data
commands, review); ``--json`` prints the same result as a JSON document instead. A text
renderer takes that JSON document and returns the text form. The JSON shapes the MCP server
shares (a recall bundle, a proposal, errors) come from :mod:`swarmmem.results`; the
maintenance reports' Markdown from :mod:`.markdown`.
"""

from __future__ import annotations

from swarmmem.cli.render._common import (
    Data,
    error_json,
    error_text,
    json_text,
    similar_line,
    terminal_text,
)
from swarmmem.cli.render.agent import (
    IDENTITY_SOURCES,
    curate_text,
    outcome_text,
    proposal_text,
    recall_text,
    rescope_text,
    rls_text,
    skipped_recall_json,
    status_text,
    undo_text,
    verdict_text,
)
from swarmmem.cli.render.config import config_get_text, config_set_text, config_show_text
from swarmmem.cli.render.data import (
    dataset_text,
    evaluation_text,
    evidence_added_text,
    evidence_json,
    evidence_list_text,
    evidence_text,
    export_text,
    gate_text,
    grant_text,
    import_text,
    init_text,
    migration_text,
    profiles_text,
)
from swarmmem.cli.render.manage import forget_text, memory_list_json, memory_list_text, memory_text
from swarmmem.cli.render.reports import (
    ago,
    audit_key_text,
    audit_text,
    compaction_text,
    pending_text,
    proposal_show_text,
    proposer_text,
    rebuild_text,
    recall_log_text,
    reflect_text,
    stale_text,
    value_log_text,
)
from swarmmem.cli.render.review import (
    REVIEW_COUNTS,
    REVIEW_DONE_PROMPT,
    REVIEW_KEYS,
    consolidate_text,
    review_batch_text,
    review_empty_text,
    review_help_text,
    review_prompt,
    review_proposal_text,
    review_summary_text,
    verify_text,
)
from swarmmem.results import (
    bundle_json,
    curate_json,
    pending_json,
    proposal_details_json,
    proposal_json,
)

__all__ = [
    "IDENTITY_SOURCES",
    "REVIEW_COUNTS",
    "REVIEW_DONE_PROMPT",
    "REVIEW_KEYS",
    "Data",
    "ago",
    "audit_key_text",
    "audit_text",
    "bundle_json",
    "compaction_text",
    "config_get_text",
    "config_set_text",
    "config_show_text",
    "consolidate_text",
    "curate_json",
    "curate_text",
    "dataset_text",
    "error_json",
    "error_text",
    "evaluation_text",
    "evidence_added_text",
    "evidence_json",
    "evidence_list_text",
    "evidence_text",
    "export_text",
    "forget_text",
    "gate_text",
    "grant_text",
    "import_text",
    "init_text",
    "json_text",
    "memory_list_json",
    "memory_list_text",
    "memory_text",
    "migration_text",
    "outcome_text",
    "pending_json",
    "pending_text",
    "profiles_text",
    "proposal_details_json",
    "proposal_json",
    "proposal_show_text",
    "proposal_text",
    "proposer_text",
    "rebuild_text",
    "recall_log_text",
    "recall_text",
    "reflect_text",
    "rescope_text",
    "review_batch_text",
    "review_empty_text",
    "review_help_text",
    "review_prompt",
    "review_proposal_text",
    "review_summary_text",
    "rls_text",
    "similar_line",
    "skipped_recall_json",
    "stale_text",
    "status_text",
    "terminal_text",
    "undo_text",
    "value_log_text",
    "verdict_text",
    "verify_text",
]
