"""Property tests: planted secrets never survive redaction; no input crashes a detector."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from strategies import any_text

from swarmmem.adapters.detectors.regex_pii import PII_CONFIDENCE, RegexPiiDetector
from swarmmem.adapters.detectors.regex_secrets import (
    DEFAULT_PATTERNS,
    PATTERN_HINTS,
    RegexSecretDetector,
)
from swarmmem.core.writes.redaction import secret_field

SECRETS = RegexSecretDetector()
UNHINTED = RegexSecretDetector(DEFAULT_PATTERNS, hints={})
MARKER = re.compile(r"\[REDACTED:[a-z_]+\]")
PII = RegexPiiDetector()

UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
LOWER = "abcdefghijklmnopqrstuvwxyz"
DIGITS = "0123456789"
ALNUM = UPPER + LOWER + DIGITS


def chars(alphabet: str, min_size: int, max_size: int | None = None) -> st.SearchStrategy[str]:
    """A string over ``alphabet``."""
    return st.text(alphabet=alphabet, min_size=min_size, max_size=max_size or min_size + 30)


def word_tail(alphabet: str, min_size: int) -> st.SearchStrategy[str]:
    """``min_size`` or more characters of ``alphabet`` that end on a letter or digit."""
    return st.builds(lambda body, last: body + last, chars(alphabet, min_size - 1), chars(ALNUM, 1))


# Each strategy yields (secret, payload): the secret as planted, and the sensitive part that
# must not appear in the redacted text.
def _same(s: st.SearchStrategy[str]) -> st.SearchStrategy[tuple[str, str]]:
    return s.map(lambda x: (x, x))


def _openai() -> st.SearchStrategy[tuple[str, str]]:
    return _same(word_tail(ALNUM + "_-", 20).map(lambda t: "sk-" + t))


def _github() -> st.SearchStrategy[tuple[str, str]]:
    prefix = st.sampled_from(["ghp", "gho", "ghu", "ghs", "ghr", "github_pat"])
    return _same(st.builds(lambda p, t: f"{p}_{t}", prefix, chars(ALNUM + "_", 20)))


def _aws_key_id() -> st.SearchStrategy[tuple[str, str]]:
    return _same(chars(UPPER + DIGITS, 16, 16).map(lambda t: "AKIA" + t))


def _private_key() -> st.SearchStrategy[tuple[str, str]]:
    label = chars(UPPER + " ", 0, 12)
    body = chars(ALNUM + "+/=\n", 16, 80)
    return st.builds(
        lambda lab, b: (
            f"-----BEGIN {lab}PRIVATE KEY-----\n{b}\n-----END {lab}PRIVATE KEY-----",
            b,
        ),
        label,
        body,
    )


def _bearer() -> st.SearchStrategy[tuple[str, str]]:
    header = st.sampled_from(
        ["Authorization: Bearer ", "authorization:bearer  ", "AUTHORIZATION :BEARER\t"]
    )
    token = chars(ALNUM + "._~+/=-", 12)
    return st.builds(lambda h, t: (h + t, t), header, token)


def _env_secret() -> st.SearchStrategy[tuple[str, str]]:
    segment = st.builds(lambda a, b: a + b, chars(UPPER, 1, 1), chars(UPPER + DIGITS, 1, 6))
    name = st.builds(
        lambda segs, suffix, lower: (
            ("_".join(segs) + "_" + suffix).swapcase() if lower else "_".join(segs) + "_" + suffix
        ),
        st.lists(segment, min_size=1, max_size=3),
        st.sampled_from(["KEY", "TOKEN", "SECRET", "PASSWORD"]),
        st.booleans(),
    )
    value = chars(ALNUM + "!#$%&()*+,-./:;<>?@[]^_{|}~", 8)
    quote = st.sampled_from(["", '"', "'"])
    sep = st.sampled_from(["=", " = ", "=\t"])
    return st.builds(lambda n, s, q, v: (f"{n}{s}{q}{v}{q}", v), name, sep, quote, value)


def _gitlab() -> st.SearchStrategy[tuple[str, str]]:
    prefix = st.sampled_from(["glpat-", "glptt-"])
    return _same(st.builds(lambda p, t: p + t, prefix, word_tail(ALNUM + "_-", 15)))


def _slack() -> st.SearchStrategy[tuple[str, str]]:
    prefix = st.sampled_from(["xoxa-", "xoxb-", "xoxp-", "xoxr-", "xoxs-"])
    return _same(st.builds(lambda p, t: p + t, prefix, word_tail(ALNUM + "-", 10)))


def _jwt() -> st.SearchStrategy[tuple[str, str]]:
    part = chars(ALNUM + "_", 1, 30)
    return _same(st.builds(lambda a, b, c: f"eyJ{a}.eyJ{b}.{c}", part, part, part))


AWS_SECRET_BODY = st.builds(
    lambda first, body, last: first + body + last,
    chars(ALNUM, 1, 1),
    chars(ALNUM + "/+=", 38, 38),
    chars(ALNUM, 1, 1),
)


def _aws_secret() -> st.SearchStrategy[tuple[str, str]]:
    label = st.sampled_from(
        ["aws_secret_access_key", "AWS_SECRET_ACCESS_KEY", "secret_access_key", "SecretAccessKey"]
    )
    glue = st.sampled_from(["=", ": ", '": "', " = '"])
    return st.builds(lambda lab, g, s: (lab + g + s, s), label, glue, AWS_SECRET_BODY)


def _aws_context() -> st.SearchStrategy[tuple[str, str]]:
    key_id = chars(UPPER + DIGITS, 16, 16).map(lambda t: "AKIA" + t)
    middle = any_text(max_size=60, without="\n")
    return st.builds(lambda k, m, s: (f"{k} {m} {s}", s), key_id, middle, AWS_SECRET_BODY)


def _stripe() -> st.SearchStrategy[tuple[str, str]]:
    prefix = st.sampled_from(["sk_live_", "sk_test_", "rk_live_", "rk_test_"])
    return _same(st.builds(lambda p, t: p + t, prefix, chars(ALNUM, 24)))


def _google() -> st.SearchStrategy[tuple[str, str]]:
    return _same(
        word_tail(ALNUM + "_-", 35).filter(lambda t: len(t) == 35).map(lambda t: "AIza" + t)
    )


def _armored(label: str, alphabet: str, gap: str = "") -> st.SearchStrategy[tuple[str, str]]:
    """A ``-----BEGIN <label>-----`` block (``gap`` after its first line) whose body of
    ``alphabet`` characters is the payload."""
    body = chars(alphabet, 16, 80)
    return body.map(lambda b: (f"-----BEGIN {label}-----\n{gap}{b}\n-----END {label}-----", b))


def _openssh() -> st.SearchStrategy[tuple[str, str]]:
    return _armored("OPENSSH PRIVATE KEY", ALNUM + "+/=\n")


def _url_credentials() -> st.SearchStrategy[tuple[str, str]]:
    scheme = st.sampled_from(["postgres", "mysql", "mongodb+srv", "redis", "amqp", "https"])
    password = chars(ALNUM + "!$%^&*_-", 3, 20)
    return st.builds(
        lambda sc, user, pw: (f"{sc}://{user}:{pw}@", pw), scheme, chars(ALNUM, 0, 10), password
    )


TYPE_WORDS = {"string", "str", "int", "bool", "boolean", "chararray", "securestring"}
TYPE_WORDS |= {"optional", "option", "none", "null", "nil", "undefined", "any", "text"}


def _password() -> st.SearchStrategy[tuple[str, str]]:
    value = chars(ALNUM + "!#_-", 4, 20).filter(
        lambda v: v[0].isalnum() and not any(v.lower().startswith(w) for w in TYPE_WORDS)
    )
    label = st.sampled_from(["password=", "passwd: ", "PASSWORD = '", 'password": "', "pwd="])
    return st.builds(lambda lab, v: (lab + v, v), label, value)


def _azure() -> st.SearchStrategy[tuple[str, str]]:
    return chars(ALNUM + "+/", 40, 88).map(lambda b: (f"AccountKey={b}", b))


def _npm() -> st.SearchStrategy[tuple[str, str]]:
    return _same(chars(ALNUM, 36, 36).map(lambda t: "npm_" + t))


def _anthropic() -> st.SearchStrategy[tuple[str, str]]:
    return _same(word_tail(ALNUM + "_-", 20).map(lambda t: "sk-ant-" + t))


def _slack_webhook() -> st.SearchStrategy[tuple[str, str]]:
    return _same(
        chars(ALNUM + "/_-", 20, 40).map(lambda t: "https://hooks.slack.com/services/" + t)
    )


def _basic() -> st.SearchStrategy[tuple[str, str]]:
    return chars(ALNUM + "+/=", 8, 40).map(lambda b: (f"Authorization: Basic {b}", b))


def _unterminated_key() -> st.SearchStrategy[tuple[str, str]]:
    body = chars(ALNUM + "+/=\n", 16, 80)
    return body.map(lambda b: (f"-----BEGIN RSA PRIVATE KEY-----\n{b}", b))


def _aws_near_key_id() -> st.SearchStrategy[tuple[str, str]]:
    key_id = chars(UPPER + DIGITS, 16, 16).map(lambda t: "AKIA" + t)
    middle = chars(LOWER + " ", 0, 40)
    edge = st.sampled_from(["/", "+", "="])
    secret = st.builds(lambda a, body, b: a + body + b, edge, chars(ALNUM + "/+=", 38, 38), edge)
    return st.builds(lambda k, m, sec: (f"{k} {m} {sec}", sec), key_id, middle, secret)


def _url_at() -> st.SearchStrategy[tuple[str, str]]:
    password = st.builds(lambda a, b: f"{a}@{b}", chars(ALNUM, 2, 10), chars(ALNUM, 1, 10))
    return password.map(lambda p: (f"postgres://admin:{p}@", p))


def _prefixed_password() -> st.SearchStrategy[tuple[str, str]]:
    name = st.builds(
        lambda a, rest, s: a + rest + "_" + s,
        chars(LOWER, 1, 1),
        chars(LOWER + DIGITS, 0, 6),
        st.sampled_from(["password", "passwd", "pass", "pwd", "PASS"]),
    )
    glue = st.sampled_from([": ", "=", '": "', " = "])
    # a value spelling a placeholder ("undefined") is, by design, no password
    value = chars(ALNUM, 8, 24).filter(lambda v: v.lower() != "undefined")
    return st.builds(lambda n, g, v: (f"{n}{g}{v}", v), name, glue, value)


def _pgp() -> st.SearchStrategy[tuple[str, str]]:
    return _armored("PGP PRIVATE KEY BLOCK", ALNUM + "+/=", gap="\n")


def _hf() -> st.SearchStrategy[tuple[str, str]]:
    return _same(chars(ALNUM, 30, 40).map(lambda t: "hf_" + t))


def _pypi() -> st.SearchStrategy[tuple[str, str]]:
    return _same(chars(ALNUM + "_-", 50, 90).map(lambda t: "pypi-AgE" + t))


def _sendgrid() -> st.SearchStrategy[tuple[str, str]]:
    return _same(
        st.builds(lambda a, b: f"SG.{a}.{b}", chars(ALNUM + "_-", 16, 32), chars(ALNUM, 30, 64))
    )


def _digitalocean() -> st.SearchStrategy[tuple[str, str]]:
    prefix = st.sampled_from(["dop_v1_", "doo_v1_", "dor_v1_"])
    return _same(st.builds(lambda p, t: p + t, prefix, chars("0123456789abcdef", 64, 64)))


def _ya29() -> st.SearchStrategy[tuple[str, str]]:
    return _same(chars(ALNUM + "_-", 20, 60).map(lambda t: "ya29." + t))


def _aws_labelled() -> st.SearchStrategy[tuple[str, str]]:
    label = st.sampled_from(
        [
            "AWS secret key: ",
            "aws secret access key ",
            "SecretKey: ",
            "aws-secret-access-key=",
            "AWS secret is ",
            "secret key = '",
            "AWS Secret: ",
        ]
    )
    edge = st.sampled_from(["/", "+"])
    secret = st.builds(lambda a, body, b: a + body + b, edge, chars(ALNUM + "/+", 38, 38), edge)
    return st.builds(lambda lab, sec: (lab + sec, sec), label, secret)


PLANTERS = {
    "openai_api_key": _openai(),
    "github_token": _github(),
    "aws_access_key_id": _aws_key_id(),
    "private_key_block": _private_key(),
    "authorization_bearer": _bearer(),
    "env_secret": _env_secret(),
    "gitlab_token": _gitlab(),
    "slack_token": _slack(),
    "jwt_token": _jwt(),
    "aws_secret_access_key": _aws_secret(),
    "aws_secret_access_key_context": _aws_context(),
    "stripe_secret_key": _stripe(),
    "google_api_key": _google(),
    "openssh_private_key_block": _openssh(),
    "url_credentials": _url_credentials(),
    "password_assignment": _password(),
    "azure_storage_key": _azure(),
    "npm_token": _npm(),
    "anthropic_api_key": _anthropic(),
    "slack_webhook_url": _slack_webhook(),
    "authorization_basic": _basic(),
    "private_key_unterminated": _unterminated_key(),
    "aws_secret_near_key_id": _aws_near_key_id(),
    "url_credentials_at": _url_at(),
    "prefixed_password": _prefixed_password(),
    "pgp_private_key_block": _pgp(),
    "huggingface_token": _hf(),
    "pypi_token": _pypi(),
    "sendgrid_api_key": _sendgrid(),
    "digitalocean_token": _digitalocean(),
    "google_oauth_token": _ya29(),
    "aws_secret_labelled": _aws_labelled(),
}

SURROUNDING = any_text(max_size=120)
SEPARATOR = st.sampled_from([" ", "\n", "\t", ", ", " (", ") "])

# Fragments that interact with the patterns (labels, quotes, block markers), mixed with text,
# to hunt for inputs where one replacement completes another match.
FRAGMENTS = st.sampled_from(
    [
        "MY_API_KEY=",
        "DB_PASSWORD = '",
        '"',
        "'",
        "`",
        " ",
        "\n",
        "AKIAIOSFODNN7EXAMPLE",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "Authorization: Bearer ",
        "-----BEGIN RSA PRIVATE KEY-----",
        "-----END RSA PRIVATE KEY-----",
        "-----BEGIN OPENSSH PRIVATE KEY-----",
        "-----END OPENSSH PRIVATE KEY-----",
        "sk-abcdefghijklmnopqrstuvwx",
        "ghp_abcdefghijklmnopqrstuvwx",
        "eyJa.eyJb.c",
        "xoxb-0123456789",
        "SecretAccessKey: ",
        "[REDACTED:env_secret]",
        "=",
        ":",
        "_",
        "-",
    ]
)
MIXED = st.lists(st.one_of(FRAGMENTS, SURROUNDING.map(lambda s: s[:12])), max_size=25).map("".join)


def test_there_is_a_planter_and_a_hint_for_every_pattern() -> None:
    """Every secret type has a generator in this module and a prefilter hint."""
    assert set(PLANTERS) == {name for name, _ in DEFAULT_PATTERNS}
    assert set(PATTERN_HINTS) == set(PLANTERS)


def _planted(kind: str) -> st.SearchStrategy[tuple[str, str, str]]:
    return st.builds(
        lambda before, sep1, secret, sep2, after: (
            before + sep1 + secret[0] + sep2 + after,
            secret[0],
            secret[1],
        ),
        SURROUNDING,
        SEPARATOR,
        PLANTERS[kind],
        SEPARATOR,
        SURROUNDING,
    )


def _check_planted(kind: str, planted: tuple[str, str, str]) -> None:
    text, secret, payload = planted
    assume(payload not in text.replace(secret, "", 1))
    pattern = dict(DEFAULT_PATTERNS)[kind]
    assert pattern.fullmatch(secret), f"generator for {kind} made a non-matching secret"
    assert SECRETS.contains_secret(text)
    assert SECRETS.find(text) == UNHINTED.find(text)
    redacted = SECRETS.redact(text)
    assert SECRETS.find(redacted) == []
    outside_markers = MARKER.sub("\x00", redacted)
    assert payload not in outside_markers
    assert secret not in outside_markers


@pytest.mark.parametrize("kind", list(PLANTERS))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_planted_secret_never_survives(kind: str, data: st.DataObject) -> None:
    """A generated secret of each type, planted in arbitrary text, never survives redaction."""
    _check_planted(kind, data.draw(_planted(kind), label="planted"))


@settings(max_examples=300, deadline=None)
@given(text=st.text())
def test_arbitrary_text_never_crashes_and_redaction_is_clean(text: str) -> None:
    """Any Unicode text: find/redact/contains agree and the redacted text has no finding."""
    findings = SECRETS.find(text)
    assert findings == UNHINTED.find(text)
    assert SECRETS.contains_secret(text) == bool(findings)
    redacted = SECRETS.redact(text)
    assert SECRETS.find(redacted) == []
    if not findings:
        assert redacted == text
    for finding in findings:
        assert 0 <= finding.start < finding.end <= len(text)


@settings(max_examples=400, deadline=None)
@given(text=MIXED)
def test_pattern_laden_text_redacts_clean_and_idempotently(text: str) -> None:
    """Texts built from labels, markers and secrets redact to something with no finding."""
    assert SECRETS.find(text) == UNHINTED.find(text)
    redacted = SECRETS.redact(text)
    assert SECRETS.find(redacted) == []
    assert SECRETS.redact(redacted) == redacted


@settings(max_examples=300, deadline=None)
@given(text=st.text())
def test_pii_detect_never_crashes(text: str) -> None:
    """Any Unicode text yields a well-formed summary."""
    findings = PII.detect(text)
    assert set(findings.counts_by_type) <= set(PII_CONFIDENCE)
    assert all(count > 0 for count in findings.counts_by_type.values())
    expected = max((PII_CONFIDENCE[k] for k in findings.counts_by_type), default=0.0)
    assert findings.score == expected


@settings(max_examples=200, deadline=None)
@given(
    text=st.text(
        alphabet=st.sampled_from(list("0123456789 -.()+@abc\u200b\uff10\uff11\u00ad")),
        max_size=80,
    )
)
def test_pii_detect_handles_digit_heavy_text(text: str) -> None:
    """Digit, separator and evasion-character soup never crashes and counts stay sane."""
    findings = PII.detect(text)
    assert findings.score in {0.0, *PII_CONFIDENCE.values()}
    assert sum(findings.counts_by_type.values()) <= len(text)


@settings(max_examples=200, deadline=None)
@given(
    local=st.from_regex(re.compile(r"[a-z][a-z0-9._]{0,10}[a-z0-9]", re.ASCII), fullmatch=True),
    domain=st.from_regex(re.compile(r"[a-z][a-z0-9-]{0,10}[a-z0-9]", re.ASCII), fullmatch=True),
    invisible=st.sampled_from(["", "\u200b", "\u00ad", "\u2060", "\ufeff"]),
)
def test_emails_split_by_invisible_characters_are_found(
    local: str, domain: str, invisible: str
) -> None:
    """An email with an invisible character inserted is still counted."""
    email = f"{local}@{invisible}{domain}.com"
    assert PII.detect(f"contact {email} now").counts_by_type.get("email") == 1


@pytest.mark.parametrize("kind", list(PLANTERS))
@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(data=st.data())
def test_screen_of_many_texts_never_misses_a_secret(kind: str, data: st.DataObject) -> None:
    """may_contain_secret(texts) is True whenever one text holds a secret (planted secrets,
    pattern-laden text, key blocks whose END line is in another text), and secret_field
    answers exactly as the field-by-field check."""
    planted = data.draw(_planted(kind), label="planted")[0]
    texts = data.draw(
        st.lists(
            st.one_of(
                MIXED,
                st.just(planted),
                st.sampled_from(
                    [
                        "-----END RSA PRIVATE KEY-----",
                        "-----BEGIN RSA PRIVATE KEY-----MIIEow",
                        "password=",
                        "hunter22",
                        "AKIA" + "A" * 16,
                    ]
                ),
            ),
            max_size=6,
        ),
        label="texts",
    )
    expected = any(SECRETS.contains_secret(t) for t in texts)
    if expected:
        assert SECRETS.may_contain_secret(texts)
        assert UNHINTED.may_contain_secret(texts)
    if not SECRETS.may_contain_secret(texts):
        assert not expected
    value = {"tags": texts, **{t: i for i, t in enumerate(texts)}}
    first = next(
        (f"row.tags[{i}]" for i, t in enumerate(texts) if SECRETS.contains_secret(t)), None
    )
    for key in value:  # dict order: tags first, then each text as a key
        if first is None and key != "tags" and SECRETS.contains_secret(key):
            first = "row key"
            break
    assert secret_field(SECRETS, value, "row") == first


KEY_PIECES = st.sampled_from(
    [
        "-----BEGIN RSA PRIVATE KEY-----",
        "-----END RSA PRIVATE KEY-----",
        "-----BEGIN OPENSSH PRIVATE KEY-----",
        "-----END OPENSSH PRIVATE KEY-----",
        "-----END X KEY-----",
        "MIIEowIBAAKCAQEA",
        "\\n",
        "\n",
        " ",
        "abc",
    ]
)


@settings(max_examples=300, deadline=None)
@given(text=st.lists(KEY_PIECES, max_size=30).map("".join))
def test_region_patterns_find_what_the_plain_patterns_find(text: str) -> None:
    """The key-block patterns are searched only where they can match (before the last END
    line, or after it), which keeps many BEGIN lines linear: their matches must be exactly
    those of the plain regular expressions."""
    from swarmmem.adapters.detectors.regex_secrets import RegionPattern

    wrapped = [(n, p) for n, p in DEFAULT_PATTERNS if isinstance(p, RegionPattern)]
    assert {n for n, _ in wrapped} == {
        "private_key_block",
        "openssh_private_key_block",
        "private_key_unterminated",
    }
    for _name, pattern in wrapped:
        plain = re.compile(pattern.pattern, pattern.flags)
        assert [m.span() for m in pattern.finditer(text)] == [
            m.span() for m in plain.finditer(text)
        ]
        assert (pattern.search(text) is None) == (plain.search(text) is None)


RUN_PIECES = st.sampled_from(
    ["a", "Z9", ".", "-", "_", "+", "%", ":", "://", "/", "@", " ", "eyJ", ".eyJ", ".co", "\n"]
)


@settings(max_examples=500, deadline=None)
@given(text=st.lists(RUN_PIECES, max_size=40).map("".join))
def test_anchored_run_patterns_find_what_the_plain_patterns_find(text: str) -> None:
    """The URL, JWT and email patterns are searched from the literal after their leading run
    (``://``, ``.eyJ``, ``@``), which keeps long runs linear: their matches must be exactly
    those of the plain regular expressions."""
    from swarmmem.adapters.detectors.regex_pii import _EMAIL
    from swarmmem.adapters.detectors.runs import AnchoredRunPattern

    wrapped = [(n, p) for n, p in DEFAULT_PATTERNS if isinstance(p, AnchoredRunPattern)]
    assert {n for n, _ in wrapped} == {"jwt_token", "url_credentials", "url_credentials_at"}
    for pattern in [p for _, p in wrapped] + [_EMAIL]:
        plain = re.compile(pattern.pattern, pattern.flags)
        assert [m.span() for m in pattern.finditer(text)] == [
            m.span() for m in plain.finditer(text)
        ]
        assert (pattern.search(text) is None) == (plain.search(text) is None)
