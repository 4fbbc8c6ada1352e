"""The one secret scrubber: known secrets anywhere, and the password of every URL, in any form."""

from __future__ import annotations

import logging
import sys

import pytest
from pydantic import SecretStr

from recon.redact import MASK, Scrubber, ScrubLogs, hide_url, scrubber_for
from recon.settings import Settings

PASSWORD = "S3CRETPW"


@pytest.mark.parametrize(
    ("url", "kept"),
    [
        ("postgresql://u:S3CRETPW@host/db", "postgresql://u:***@host/db"),
        ("postgresql:/u:S3CRETPW@host/db", "postgresql:/u:***@host/db"),
        ("postgresql:u:S3CRETPW@host/db", "postgresql:u:***@host/db"),
        ("postgresql://u:S3CRETPW@host:notaport/db", "postgresql://u:***@host:notaport/db"),
        ("mysql+pymysql://u:S3C@RETPW@host/db", "mysql+pymysql://u:***@host/db"),
        ("mysql+pymysql://u:S3C/RET:PW@host/db", "mysql+pymysql://u:***@host/db"),
        ("postgresql://:S3CRETPW@host/db", "postgresql://:***@host/db"),
        ("postgresql://u:S3CRET%40PW@host/db", "postgresql://u:***@host/db"),
        ("postgresql://u@host/db?password=S3CRETPW", "postgresql://u@host/db?password=***"),
        (
            "postgresql://u@host/db?sslmode=require&PassWord=S3CRETPW&x=1",
            "postgresql://u@host/db?sslmode=require&PassWord=***&x=1",
        ),
        (
            "mysql://u@host/db?charset=utf8&passwd=S3CRETPW",
            "mysql://u@host/db?charset=utf8&passwd=***",
        ),
        ("u:S3CRETPW@host/db", "u:***@host/db"),
        ("https://api.test/x?token=S3CRETPW", "https://api.test/x?token=***"),
    ],
)
def test_the_password_of_a_url_is_hidden_in_every_form(url: str, kept: str) -> None:
    """Well-formed or not, parsed or never parsed: the credentials of a URL are masked."""
    assert hide_url(url) == kept
    assert Scrubber()(f"cannot use {url!r}: bad") == f"cannot use {kept!r}: bad"


@pytest.mark.parametrize(
    "text",
    [
        "sqlite:///recon.db",
        "http://127.0.0.1:8700 as sandbox-public-key",
        "postgresql://recon@127.0.0.1:5432/recon",
        "mail to ops@example.test, lead@example.test via 127.0.0.1:25",
        "recon: error: transaction.get: HTTP 503: unavailable",
        "2026-11-23T01:41:47+00:00 at 10:30",
    ],
)
def test_text_without_secrets_is_left_alone(text: str) -> None:
    """URLs without a password, addresses, times and ports are not touched."""
    assert Scrubber()(text) == text


def test_a_known_secret_is_hidden_wherever_it_appears() -> None:
    """The API secret and tokens are masked in any text, longest first, encoded forms too."""
    scrub = Scrubber(["tok-123456", "tok-123456-refresh", SecretStr("p@ss w/rd"), None, ""])
    text = "a tok-123456-refresh b tok-123456 c p@ss w/rd d p%40ss%20w%2Frd e p%40ss+w%2Frd"
    assert scrub(text) == f"a {MASK} b {MASK} c {MASK} d {MASK} e {MASK}"


def test_a_very_short_secret_is_hidden_only_where_it_stands_in_a_url() -> None:
    """A one-letter password is not blanked out of every word, but it is out of its URL."""
    scrub = Scrubber(["p"])
    assert scrub("cannot connect to mysql://u:p@host: password rejected") == (
        f"cannot connect to mysql://u:{MASK}@host: password rejected"
    )


def test_the_scrubber_of_the_settings_knows_every_secret_setting() -> None:
    """API secret, SMTP password, path token and the database password, even percent-encoded."""
    settings = Settings(
        api_secret="api-secret-1",
        smtp_password="smtp-pw-22",
        receiver_path_token="path-token-333",
        database_url="postgresql://u:db%2Fpw%404444@host/db",
    )
    scrub = scrubber_for(settings)
    text = "api-secret-1 smtp-pw-22 path-token-333 db/pw@4444 db%2Fpw%404444"
    assert scrub(text) == " ".join([MASK] * 5)


def test_the_scrubber_of_the_settings_hides_the_password_of_a_malformed_database_url() -> None:
    """A database URL nothing can parse still has its password masked wherever it shows up."""
    settings = Settings(database_url="postgresql://u:S3CRETPW@host:notaport/db")
    assert PASSWORD not in scrubber_for(settings)(f"the driver said: {PASSWORD} is wrong")


def test_log_records_are_scrubbed_with_their_arguments_and_traceback() -> None:
    """A record's formatted message and its exception text pass through the scrubber."""
    scrub = Scrubber(["tok-123456"])
    try:
        raise ValueError("refused tok-123456 for postgresql://u:S3CRETPW@host/db")
    except ValueError:
        record = logging.LogRecord(
            "recon.x", logging.ERROR, __file__, 1, "sent %s to %s", ("tok-123456", "x"), None
        )
        record.exc_info = sys.exc_info()
    assert ScrubLogs(scrub).filter(record)
    text = logging.Formatter().format(record)
    assert "tok-123456" not in text
    assert PASSWORD not in text
    assert f"sent {MASK} to x" in text
