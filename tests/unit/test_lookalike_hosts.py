"""Look-alike letters in domain names are flagged where a person decides (review, show, the
web viewer): a Cyrillic ``а`` in ``pаypal.com`` reads as the familiar name."""

from __future__ import annotations

from swarmmem.cli.render.review import review_proposal_text
from swarmmem.core.model.text import lookalike_hosts, lookalike_note


def test_mixed_scripts_are_flagged_with_the_ascii_form() -> None:
    text = (
        "Docs at https://pаypal.com/api (Cyrillic а), gооgle.com, ωmega.io; "
        "ordinary: example.com, пример.рф, café.fr, v1.2.3 and 3.14"
    )
    assert lookalike_hosts(text) == [
        ("pаypal.com", "xn--pypal-4ve.com"),
        ("gооgle.com", "xn--ggle-55da.com"),
        ("ωmega.io", "xn--mega-fpd.io"),
    ]
    assert lookalike_note("plain text, example.com") is None
    assert lookalike_note("pаypal.com", None, "see pаypal.com") == (
        "'pаypal.com' is xn--pypal-4ve.com"
    )


def test_the_terminal_review_names_them() -> None:
    entry = {
        "id": "prop_1",
        "operation": "add",
        "kind": "api_finding",
        "text": "Tokens are refreshed at https://lоgin.example.com/token.",
        "rationale": "read in the docs",
        "evidence_refs": ["README.md"],
        "proposed_by": {},
        "age": "just now",
    }
    text = review_proposal_text(entry, 1)
    assert "Look-alike letters in a domain: 'lоgin.example.com' is xn--lgin-" in text
