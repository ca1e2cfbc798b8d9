"""What an agent reads about proposing memories: the section ``swarmmem init --agent HOST``
adds to the host's instruction file (:attr:`swarmmem.hooks.hosts.Host.instructions`), the
line that ends a session brief, and the block shape both name (the one
:func:`swarmmem.core.writes.service.WriteService.ingest_task_output`
reads from the agent's replies).

The section sits between :data:`BEGIN` and :data:`END` markers, so running ``init`` again
replaces it in place (changing nothing when it is current) and ``init --remove`` takes out
exactly it. When ``init`` creates the file, the begin marker says so (:data:`BEGIN_CREATED`),
and a file left with nothing but the section's header is removed with it.
"""

from __future__ import annotations

import json
import re
import textwrap

BEGIN = "<!-- BEGIN swarmmem -->"
BEGIN_CREATED = "<!-- BEGIN swarmmem (file created by swarmmem) -->"
END = "<!-- END swarmmem -->"
_SECTION = re.compile(
    r"^<!-- BEGIN swarmmem(?: \(file created by swarmmem\))? -->\n.*?^<!-- END swarmmem -->\n?",
    re.M | re.S,
)

DURABLE_KINDS = (
    "repo_convention",
    "project_fact",
    "architecture_decision",
    "code_pattern",
    "test_pattern",
    "failure_pattern",
    "security_note",
    "user_preference",
)
"""The kinds a proposal may have to become memory, in the order the instructions list them."""

EXAMPLE_PROPOSAL = {
    "operation": "add",
    "kind": "failure_pattern",
    "text": "Tests that touch the database fail with 'no such table' until alembic upgrade "
    "head has run; tests/conftest.py does not create the tables.",
    "rationale": "The test suite failed this way on a fresh checkout.",
    "evidenceRefs": ["tests/conftest.py", "alembic.ini"],
}
"""The example entry every text here shows (a test files it through the real Stop hook)."""

PROPOSE_LINE = (
    "To keep a durable fact about this project for later sessions, end a reply with a fenced "
    '```json {"memoryProposals": [{"operation": "add", "kind": ..., "text": ..., '
    '"rationale": ..., "evidenceRefs": [...]}]}``` block (or call swarm_memory_propose); a '
    "person reviews it before it is remembered."
)
"""The line that ends a session brief."""


def example_block() -> str:
    """The example ``memoryProposals`` block, fenced as an agent writes it."""
    body = json.dumps({"memoryProposals": [EXAMPLE_PROPOSAL]}, indent=2)
    return f"```json\n{body}\n```"


def section_body() -> str:
    """The section's text between the markers."""
    kinds = textwrap.fill(
        f"- `kind`: one of {', '.join(DURABLE_KINDS)}.", width=95, subsequent_indent="  "
    )
    return f"""\
## Project memory (swarmmem)

This project keeps a reviewed memory of facts learned from its code. When you learn something
durable that a later session would need and could not see at a glance (a convention, a gotcha,
the cause of a failure and its fix, a decision and its reason), end your reply with a JSON
block like the one below. A hook files each entry as a proposal, and a person reviews it
before it is remembered. The `swarm_memory_propose` tool of the swarmmem MCP server does the
same.

- One fact per entry, in your own words, at most 500 characters; never secrets, tokens or
  personal data.
{kinds}
- `evidenceRefs`: where the fact comes from, relative to the repository root: `path`,
  `path:START-END`, `path#symbol` or a commit; each must exist.
- `operation`: `add`; to correct a memory you were given, `update` with its id as
  `targetMemoryId` and the corrected `kind` and `text`.
- Not worth proposing: what the task was, what you changed, what one look at a file shows.

{example_block()}
"""


def with_section(text: str | None, header: str = "") -> str:
    """``text`` (``None``: the file is missing) with the current section: replaced in place
    (keeping its begin marker), else added after a blank line, or a new file holding it,
    starting with ``header`` (the host's :attr:`~swarmmem.hooks.hosts.Host.instructions_header`)."""
    if text is None:
        return header + f"{BEGIN_CREATED}\n{section_body()}{END}\n"
    match = _SECTION.search(text)
    if match is not None:
        begin = match.group(0).split("\n", 1)[0]
        return text[: match.start()] + f"{begin}\n{section_body()}{END}\n" + text[match.end() :]
    glue = "" if not text or text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
    return f"{text}{glue}{BEGIN}\n{section_body()}{END}\n"


def without_section(text: str, header: str = "") -> str | None:
    """``text`` without the section (and the blank line added before it); ``None`` when the
    file should go: ``init`` created it and nothing but its ``header`` is left."""
    match = _SECTION.search(text)
    if match is None:
        return text
    before, after = text[: match.start()], text[match.end() :]
    if match.group(0).startswith(BEGIN_CREATED) and (before + after).strip() in (
        "",
        header.strip(),
    ):
        return None
    if not after.strip():
        return before.rstrip("\n") + "\n" if before.strip() else ""
    if before.endswith("\n\n") and after.startswith("\n"):
        after = after[1:]
    return before + after
