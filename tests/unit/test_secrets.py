"""Regex secret detector: every pattern, the documented non-matches, and complete redaction."""

from __future__ import annotations

import re

import pytest

from swarmmem.adapters.detectors.regex_secrets import (
    DEFAULT_PATTERNS,
    MAX_REDACTION_ROUNDS,
    SECRET_PATTERNS,
    RegexSecretDetector,
    redaction_marker,
)
from swarmmem.core.writes.redaction import (
    PROPOSAL_REDACTION_FIELDS,
    redact_fields,
    redact_value,
    redaction_rejection_reason,
)
from swarmmem.ports.detectors import SecretDetector, SecretFinding

AWS_KEY_ID = "AKIAIOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
JWT = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N"
RSA_BLOCK = (
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\nabc/def+==\n-----END RSA PRIVATE KEY-----"
)
OPENSSH_BLOCK = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n"
    "-----END OPENSSH PRIVATE KEY-----"
)

EXPECTED_ORDER = (
    "openai_api_key",
    "github_token",
    "aws_access_key_id",
    "private_key_block",
    "authorization_bearer",
    "env_secret",
    "gitlab_token",
    "slack_token",
    "jwt_token",
    "aws_secret_access_key",
    "aws_secret_access_key_context",
    "stripe_secret_key",
    "google_api_key",
    "openssh_private_key_block",
)

EXTRA_ORDER = (
    "url_credentials",
    "password_assignment",
    "azure_storage_key",
    "npm_token",
    "anthropic_api_key",
    "slack_webhook_url",
    "authorization_basic",
    "private_key_unterminated",
    "aws_secret_near_key_id",
    "url_credentials_at",
    "prefixed_password",
    "pgp_private_key_block",
    "huggingface_token",
    "pypi_token",
    "sendgrid_api_key",
    "digitalocean_token",
    "google_oauth_token",
    "aws_secret_labelled",
)

# (expected type, secret) -- each secret is matched in full by the pattern of that type.
POSITIVES = [
    ("url_credentials", "postgres://app:s3cr3tpw@"),
    ("url_credentials", "amqp://guest:hunter22@"),
    ("url_credentials", "https://deploy:t0k3n-x@"),
    ("password_assignment", "password=hunter22x"),
    ("password_assignment", "passwd: correcthorse"),
    ("azure_storage_key", "AccountKey=" + "Ab1+" * 21 + "=="),
    ("npm_token", "npm_" + "a1B2" * 9),
    ("anthropic_api_key", "sk-ant-api03-" + "x_Y-" * 10),
    ("slack_webhook_url", "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXX"),
    ("authorization_basic", "Authorization: Basic dXNlcjpwYXNzd29yZA=="),
    ("private_key_unterminated", "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7"),
    ("aws_secret_near_key_id", "AKIAIOSFODNN7EXAMPLE /JalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKE+"),
    ("aws_secret_labelled", f"AWS secret key: {AWS_SECRET}"),
    ("aws_secret_labelled", f"aws-secret-access-key {AWS_SECRET}"),
    ("aws_secret_labelled", f"AWS secret is {AWS_SECRET}"),
    ("aws_secret_labelled", f"SecretKey: '{AWS_SECRET}"),
    ("openai_api_key", "sk-proj1234567890abcdefghij"),
    ("openai_api_key", "sk-abc_def-ghi_jkl-mno_pqr"),
    ("github_token", "ghp_abcdefghijklmnopqrstuvwxyz0123"),
    ("github_token", "gho_ABCDEFGHIJKLMNOPQRST"),
    ("github_token", "ghu_abcdefghij0123456789"),
    ("github_token", "ghs_abcdefghij0123456789"),
    ("github_token", "ghr_abcdefghij0123456789"),
    ("github_token", "github_pat_11ABCDEFG0123456789_abcdefghijkl"),
    ("aws_access_key_id", AWS_KEY_ID),
    ("private_key_block", RSA_BLOCK),
    ("private_key_block", "-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----"),
    ("private_key_block", "-----BEGIN EC PRIVATE KEY-----MHcCAQEE-----END EC PRIVATE KEY-----"),
    ("authorization_bearer", "Authorization: Bearer abcdefghijkl"),
    ("authorization_bearer", "authorization:BEARER  abc.def~ghi+jkl/mno="),
    ("env_secret", "OPENAI_API_KEY=abcdefgh"),
    ("env_secret", "db_password=abcdefgh"),
    ("env_secret", 'AWS_SESSION_TOKEN = "abcdefgh12345"'),
    ("env_secret", "MY_APP_SECRET='s3cr3t-value!'"),
    ("env_secret", "X2_KEY =\tabcdefgh"),
    ("gitlab_token", "glpat-abcdefghijklmnop"),
    ("gitlab_token", "glptt-0123456789abcde"),
    ("slack_token", "xoxb-1234567890-abcdef"),
    ("slack_token", "xoxa-abcdefghij"),
    ("slack_token", "xoxp-0123456789"),
    ("slack_token", "xoxr-0123456789"),
    ("slack_token", "xoxs-0123456789"),
    ("jwt_token", JWT),
    ("aws_secret_access_key", f"SecretAccessKey: {AWS_SECRET}"),
    ("aws_secret_access_key", f"AWS_SECRET_ACCESS_KEY: {AWS_SECRET}"),
    ("aws_secret_access_key", f"secret_access_key\"= '{AWS_SECRET}"),
    ("aws_secret_access_key_context", f"{AWS_KEY_ID} {AWS_SECRET}"),
    ("aws_secret_access_key_context", f"{AWS_KEY_ID}, secret is: {AWS_SECRET}"),
    ("stripe_secret_key", "sk_live_abcdefghijklmnopqrstuvwx"),
    ("stripe_secret_key", "rk_test_ABCDEFGHIJKLMNOPQRSTUVWX0123"),
    ("google_api_key", "AIzaSyA1234567890abcdefghijklmnopqrs_-x"),
    ("openssh_private_key_block", OPENSSH_BLOCK),
]

# Documented (and a few obvious) non-matches: nothing at all is found in these texts.
NEGATIVES = [
    "https://example.com/search?key=abcdefghijklmnop",
    "?key=abcdefghijkl",
    "0_PASSWORD=abcdefghijkl",
    "A_KEY=abcdefghijkl",
    "TOKEN_COUNT = twelve_items",
    "API_KEY=short",
    "MY_TOKEN=`abcdefghijkl`",
    "sk-tooshort12345678",
    "task-abcdefghijklmnopqrstuvwxyz",
    "ghp_tooshort",
    "AKIAIOSFODNN7EXAMPL",
    "XAKIAIOSFODNN7EXAMPLE",
    "-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----",
    "Authorization: Bearer short",
    "glpat-tooshort",
    "xoxc-0123456789",
    "xoxb-short",
    "eyJhbGciOiJIUzI1NiJ9.notjwt.payload",
    "sk_live_tooshort",
    "pk_live_abcdefghijklmnopqrstuvwx",
    "AIzaTooShort",
    f"{AWS_SECRET}",
    "the tokenizer uses KEY and TOKEN and SECRET words",
    "",
]


@pytest.fixture
def detector() -> RegexSecretDetector:
    """The default detector."""
    return RegexSecretDetector()


def reference_sequential_redact(text: str) -> str:
    """The reference algorithm: substitute pattern after pattern, each seeing earlier output."""
    for name, pattern in SECRET_PATTERNS:
        text = pattern.sub(redaction_marker(name), text)
    return text


def test_pattern_order_and_types_match_the_reference() -> None:
    """The reference's fourteen types come first, in its order, then ours."""
    assert tuple(name for name, _ in SECRET_PATTERNS) == EXPECTED_ORDER
    assert RegexSecretDetector().types == EXPECTED_ORDER + EXTRA_ORDER


@pytest.mark.parametrize(
    "text",
    [
        "PASSWORD=abcdefghijkl",
        "-----BEGIN RSA PRIVATE KEY-----\nno end marker",
        "Authorization: Basic dXNlcjpwYXNzd29yZA==",
        "DATABASE_URL=postgres://app:s3cr3tpw@db:5432/shop",
    ],
)
def test_secrets_the_reference_misses_are_caught(text: str) -> None:
    """What the reference's fourteen patterns let through, the default detector catches."""
    assert RegexSecretDetector(SECRET_PATTERNS).find(text) == []
    detector = RegexSecretDetector()
    assert detector.contains_secret(text)
    assert detector.find(detector.redact(text)) == []


@pytest.mark.parametrize(
    ("text", "hidden"),
    [
        ("key AKIA\u200bIOSFODNN7EXAMPLE here", "IOSFODNN7EXAMPLE"),
        ("token sk-\u00adabcdefghijklmnopqrstuvwx end", "abcdefghijklmnopqrstuvwx"),
        ("\uff53\uff4b\uff0d" + "\uff41" * 24 + " tail", "\uff41" * 24),
        ("password\u2060=hunter22x ok", "hunter22x"),
    ],
)
def test_secrets_split_by_invisible_or_wide_characters_are_caught(text: str, hidden: str) -> None:
    """Detection runs on the text as it reads (NFKC, zero-width and soft hyphens dropped);
    redaction removes the original characters."""
    detector = RegexSecretDetector()
    assert detector.contains_secret(text)
    redacted = detector.redact(text)
    assert hidden not in redacted and "[REDACTED:" in redacted
    assert redacted.endswith(text.split()[-1])


@pytest.mark.parametrize(
    "text",
    [
        "val password: String,",
        "password=${DB_PASSWORD}",
        "pwd = <your password>",
        "see https://example.com/a@b and mail user@example.com",
        "-----BEGIN PUBLIC KEY-----\nMIIB",
    ],
)
def test_our_patterns_leave_ordinary_text_alone(text: str) -> None:
    assert RegexSecretDetector().find(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "AWS secret key: see the vault, rotated monthly",
        "the secret key rotation job hashes to 0123456789abcdef0123456789abcdef012345678",
        f"sha: {'a1' * 20} (no label)",
        "aws docs: the secret to fast uploads is multipart",
    ],
)
def test_labelled_aws_secret_needs_the_label_and_exactly_40_characters(text: str) -> None:
    assert RegexSecretDetector().find(text) == []


def test_flags_are_ascii_everywhere_and_ignorecase_on_two() -> None:
    """Every pattern is ASCII-only; only bearer and env_secret ignore case."""
    for name, pattern in SECRET_PATTERNS:
        assert pattern.flags & re.ASCII, name
        case_insensitive = bool(pattern.flags & re.IGNORECASE)
        assert case_insensitive == (name in ("authorization_bearer", "env_secret")), name


def test_detector_satisfies_the_port(detector: RegexSecretDetector) -> None:
    """The regex detector is a SecretDetector."""
    assert isinstance(detector, SecretDetector)


@pytest.mark.parametrize(("kind", "secret"), POSITIVES)
def test_each_pattern_matches_its_secret_in_full(
    detector: RegexSecretDetector, kind: str, secret: str
) -> None:
    """The secret is found with its type, spanning the whole planted string."""
    text = f"before {secret} after"
    start = text.index(secret)
    findings = detector.find(text)
    assert SecretFinding(type=kind, start=start, end=start + len(secret)) in findings
    assert detector.contains_secret(text)


@pytest.mark.parametrize(("kind", "secret"), POSITIVES)
def test_each_secret_is_redacted_completely(
    detector: RegexSecretDetector, kind: str, secret: str
) -> None:
    """The redacted text keeps its surroundings and nothing detectable remains."""
    redacted = detector.redact(f"before {secret} after")
    assert redacted.startswith("before [REDACTED:")
    assert redacted.endswith("] after")
    assert secret not in redacted
    assert detector.find(redacted) == []


@pytest.mark.parametrize("text", NEGATIVES)
def test_documented_non_matches(detector: RegexSecretDetector, text: str) -> None:
    """Texts the reference leaves alone are neither found nor changed."""
    assert detector.find(text) == []
    assert not detector.contains_secret(text)
    assert detector.redact(text) == text


def test_env_secret_needs_a_letter_initial_prefix_of_two_chars(
    detector: RegexSecretDetector,
) -> None:
    """`AB_KEY` qualifies, `A_KEY` and `0_KEY` do not."""
    assert [f.type for f in detector.find("AB_KEY=abcdefgh")] == ["env_secret"]
    assert detector.find("A_KEY=abcdefgh") == []
    assert detector.find("0_KEY=abcdefgh") == []


def test_env_secret_value_needs_eight_characters(detector: RegexSecretDetector) -> None:
    """Seven value characters are not enough, eight are."""
    assert detector.find("DB_PASSWORD=abcdefg") == []
    # (our prefixed_password pattern reports the same span too)
    assert "env_secret" in [f.type for f in detector.find("DB_PASSWORD=abcdefgh")]


def test_find_reports_patterns_in_order_with_spans(detector: RegexSecretDetector) -> None:
    """Findings are grouped by pattern order, each with its exact span."""
    text = "slack xoxb-0123456789 then ghp_abcdefghijklmnopqrstuvwxyz and sk-abcdefghijklmnopqrstu"
    findings = detector.find(text)
    assert [f.type for f in findings] == ["openai_api_key", "github_token", "slack_token"]
    for finding, token in zip(
        findings,
        ["sk-abcdefghijklmnopqrstu", "ghp_abcdefghijklmnopqrstuvwxyz", "xoxb-0123456789"],
        strict=True,
    ):
        assert text[finding.start : finding.end] == token


def test_overlapping_matches_are_all_reported(detector: RegexSecretDetector) -> None:
    """An OpenSSH block is found by both block patterns; `KEY=sk-` by two patterns."""
    assert [f.type for f in detector.find(OPENSSH_BLOCK)] == [
        "private_key_block",
        "openssh_private_key_block",
    ]
    types = [f.type for f in detector.find("OPENAI_API_KEY=sk-abcdefghijklmnopqrstuvwxyz")]
    assert types == ["openai_api_key", "env_secret"]


def test_reference_labels_are_kept_for_nested_matches(detector: RegexSecretDetector) -> None:
    """The reference's documented outcomes: env_secret wins over sk-, the block over OpenSSH."""
    assert detector.redact("OPENAI_API_KEY=sk-abcdefghijklmnopqrstuvwxyz") == (
        "[REDACTED:env_secret]"
    )
    assert detector.redact(OPENSSH_BLOCK) == "[REDACTED:private_key_block]"
    assert reference_sequential_redact(OPENSSH_BLOCK) == "[REDACTED:private_key_block]"


def test_aws_secret_after_key_id_on_one_line_is_fully_redacted(
    detector: RegexSecretDetector,
) -> None:
    """The reference leaks the 40-char secret after AKIA...; this detector does not."""
    text = f"aws creds: {AWS_KEY_ID} {AWS_SECRET} (rotate soon)"
    leaked = reference_sequential_redact(text)
    assert AWS_SECRET in leaked  # the reference behaviour this project improves on
    redacted = detector.redact(text)
    assert redacted == "aws creds: [REDACTED:aws_secret_access_key_context] (rotate soon)"
    assert AWS_SECRET not in redacted
    assert AWS_KEY_ID not in redacted
    assert detector.find(redacted) == []


def test_aws_secret_on_a_later_line_is_not_tied_to_the_key_id(
    detector: RegexSecretDetector,
) -> None:
    """The context heuristic stops at a newline: only the key id is found then."""
    text = f"{AWS_KEY_ID}\n{AWS_SECRET}"
    assert [f.type for f in detector.find(text)] == ["aws_access_key_id"]
    assert detector.redact(text) == f"[REDACTED:aws_access_key_id]\n{AWS_SECRET}"


def test_context_heuristic_reaches_at_most_200_characters(detector: RegexSecretDetector) -> None:
    """A secret 200 characters after the key id is tied to it, 201 is not."""
    near = f"{AWS_KEY_ID} {'x' * 198} {AWS_SECRET}"
    far = f"{AWS_KEY_ID} {'x' * 199} {AWS_SECRET}"
    assert "aws_secret_access_key_context" in {f.type for f in detector.find(near)}
    assert "aws_secret_access_key_context" not in {f.type for f in detector.find(far)}


def test_touching_spans_merge_into_one_marker(detector: RegexSecretDetector) -> None:
    """Adjacent secrets become a single marker labelled by the earliest pattern."""
    text = "sk-abcdefghijklmnopqrstuvwxyz" + RSA_BLOCK
    assert detector.redact(text) == "[REDACTED:openai_api_key]"


def test_separate_secrets_get_separate_markers(detector: RegexSecretDetector) -> None:
    """Secrets apart from each other are replaced one by one, text between kept."""
    text = f"a {JWT} b xoxb-0123456789 c"
    assert detector.redact(text) == "a [REDACTED:jwt_token] b [REDACTED:slack_token] c"


def test_multiline_document_with_many_secrets(detector: RegexSecretDetector) -> None:
    """A config file with several secrets keeps only the harmless lines."""
    text = "\n".join(
        [
            "# settings",
            "DEBUG=true",
            "STRIPE_KEY=sk_live_abcdefghijklmnopqrstuvwx",
            f"aws = {AWS_KEY_ID} {AWS_SECRET}",
            RSA_BLOCK,
            "Authorization: Bearer abcdefghijklmnop",
            "url = https://example.com/?key=abcdefghijkl",
        ]
    )
    redacted = detector.redact(text)
    assert redacted.splitlines() == [
        "# settings",
        "DEBUG=true",
        "[REDACTED:env_secret]",
        "aws = [REDACTED:aws_secret_access_key_context]",
        "[REDACTED:private_key_block]",
        "[REDACTED:authorization_bearer]",
        "url = https://example.com/?key=abcdefghijkl",
    ]


def test_markers_are_not_secrets(detector: RegexSecretDetector) -> None:
    """No redaction marker is itself detected."""
    for name in EXPECTED_ORDER:
        assert detector.find(redaction_marker(name)) == []


def test_javascript_unicode_whitespace_is_whitespace(detector: RegexSecretDetector) -> None:
    """NO-BREAK SPACE and IDEOGRAPHIC SPACE count as `\\s`, as in JavaScript."""
    assert [f.type for f in detector.find("API_KEY\u00a0=\u3000abcdefgh")] == ["env_secret"]
    assert [f.type for f in detector.find("Authorization:\u00a0Bearer\u2003abcdefghijkl")] == [
        "authorization_bearer"
    ]


def test_non_ascii_letters_do_not_form_word_boundaries(detector: RegexSecretDetector) -> None:
    """`\\b` is ASCII: a token glued to a non-ASCII letter is still found, as in JavaScript."""
    assert [f.type for f in detector.find("éghp_abcdefghijklmnopqrstuvwxyz")] == ["github_token"]


def test_redaction_repeats_when_a_marker_completes_a_new_match() -> None:
    """A second round catches a match that only exists after the first replacement."""
    detector = RegexSecretDetector([("p", re.compile("ab")), ("q", re.compile(r"\]c"))])
    assert detector.redact("abc") == "[REDACTED:p[REDACTED:q]"
    assert detector.find(detector.redact("abc")) == []


def test_redaction_gives_up_to_an_empty_text_when_matches_never_end() -> None:
    """A pattern that matches its own marker cannot make anything survive."""
    detector = RegexSecretDetector([("loop", re.compile("[A-Z]{3,}"))])
    assert MAX_REDACTION_ROUNDS >= 2
    assert detector.redact("SECRET") == ""


def test_fallback_uses_one_marker_when_that_is_clean() -> None:
    """When rounds run out, the whole text becomes one marker if that is clean, else empty."""
    detector = RegexSecretDetector([("a", re.compile(r"x|\[REDACTED:a\]"))])
    assert detector.redact("x") == ""
    detector = RegexSecretDetector([("p", re.compile(r"ab|\[REDACTED:p\](?=c)"))])
    assert detector.redact("abc") == "[REDACTED:p]"


def test_redact_value_handles_none_strings_and_lists(detector: RegexSecretDetector) -> None:
    """None stays None, strings and lists come back redacted with a changed flag."""
    assert redact_value(detector, None) == (None, False)
    assert redact_value(detector, "plain") == ("plain", False)
    assert redact_value(detector, ["a", "xoxb-0123456789"]) == (
        ["a", "[REDACTED:slack_token]"],
        True,
    )
    with pytest.raises(TypeError, match="int"):
        redact_value(detector, 42)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="list item"):
        redact_value(detector, ["ok", 3])  # type: ignore[list-item]


def test_redact_fields_reports_changed_fields_in_order(detector: RegexSecretDetector) -> None:
    """Changed field names follow the input order; values are all redacted."""
    fields = {
        "rationale": "seen in .env: DB_PASSWORD=hunter22hunter",
        "evidenceRefs": ["README.md", "Authorization: Bearer abcdefghijklmnop"],
        "targetMemoryId": None,
        "relatedMemoryIds": ["mem_0123456789abcdef"],
        "text": "tests run with pytest",
    }
    assert tuple(fields) == PROPOSAL_REDACTION_FIELDS
    result = redact_fields(detector, fields)
    assert result.changed == ("rationale", "evidenceRefs")
    assert result.any_changed
    assert result.values["rationale"] == "seen in .env: [REDACTED:env_secret]"
    assert result.values["evidenceRefs"] == ["README.md", "[REDACTED:authorization_bearer]"]
    assert result.values["targetMemoryId"] is None
    assert result.values["text"] == "tests run with pytest"
    assert redaction_rejection_reason(result.changed) == (
        "proposal field(s) contained a likely secret and were redacted: rationale, evidenceRefs"
    )


def test_redact_fields_without_secrets_changes_nothing(detector: RegexSecretDetector) -> None:
    """Clean fields are returned equal and no name is reported."""
    result = redact_fields(detector, {"text": "hello", "evidenceRefs": ["a.py"]})
    assert result.changed == ()
    assert not result.any_changed
    assert result.values == {"text": "hello", "evidenceRefs": ["a.py"]}


def test_aws_secret_after_another_40_character_run_is_redacted() -> None:
    """A 40-character word between the key id and the secret (found by the planted-secret
    property): every such run after the key id is redacted, the secret included."""
    secret = "/" + "0" * 38 + "/"
    text = f" AKIA0000000000000000 {'a' * 40} {secret} "
    detector = RegexSecretDetector()
    redacted = detector.redact(text)
    assert secret not in redacted and "AKIA0000000000000000" not in redacted
    assert detector.find(redacted) == []


class CountedMatches:
    """A compiled pattern that counts the places its ``match`` is tried."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern, self.tries = pattern, 0

    def match(self, text: str, pos: int = 0, endpos: int = 2**62) -> re.Match[str] | None:
        self.tries += 1
        return self.pattern.match(text, pos, endpos)


@pytest.mark.parametrize(
    ("name", "run", "anchor"),
    [
        ("url_credentials", "a.", "://x "),
        ("url_credentials_at", "a-", "://x "),
        ("jwt_token", "eyJ-", ".eyJ "),
    ],
)
def test_a_long_run_is_tried_once_per_anchor(
    name: str, run: str, anchor: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hostile: 400 KB of scheme characters ("a.a.a...") took the URL-credential pattern 240 s,
    since the engine tried every start in the run and scanned to its end from each. Searched
    from the literal after the run, the whole pattern is tried at most once per anchor."""
    pattern = dict(DEFAULT_PATTERNS)[name]
    counted = CountedMatches(pattern._re)  # type: ignore[union-attr]
    monkeypatch.setattr(pattern, "_re", counted)
    for anchors in (1, 50):
        counted.tries = 0
        text = (run * (200_000 // len(run)) + anchor) * anchors
        assert list(pattern.finditer(text)) == []
        assert counted.tries <= anchors
