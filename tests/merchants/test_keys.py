"""The webhook secret's format: new secrets are ``whsec_`` + the standard base64 of 32 random
bytes, which the Standard Webhooks libraries decode to the signing key; a secret issued before
that format signs with its own UTF-8 bytes."""

from __future__ import annotations

import base64

from standardwebhooks import Webhook

from merchants.keys import (
    webhook_secret_generate,
    webhook_secret_is_standard,
    webhook_secret_signing_key,
)

LEGACY_SECRET = "whsec_Jm3tQ8vX1cZ6bN0sR4yK7pL2hW9fD5gA3eU8iO1uT"


def test_a_new_secret_is_whsec_and_the_base64_of_32_random_bytes() -> None:
    secret = webhook_secret_generate()
    encoded = secret.removeprefix("whsec_")
    assert secret.startswith("whsec_")
    assert len(base64.b64decode(encoded, validate=True)) == 32
    assert webhook_secret_generate() != secret


def test_the_signing_key_of_a_new_secret_is_what_the_library_decodes() -> None:
    secret = webhook_secret_generate()
    assert webhook_secret_is_standard(secret)
    assert webhook_secret_signing_key(secret) == Webhook(secret)._whsecret


def test_a_secret_from_before_the_format_signs_with_its_utf8_bytes() -> None:
    assert not webhook_secret_is_standard(LEGACY_SECRET)
    assert webhook_secret_signing_key(LEGACY_SECRET) == LEGACY_SECRET.encode("utf-8")


def test_short_or_non_canonical_base64_is_not_the_standard_format() -> None:
    short = "whsec_" + base64.b64encode(b"x" * 16).decode()
    assert not webhook_secret_is_standard(short)
    assert not webhook_secret_is_standard("whsec_" + base64.b64encode(b"y" * 32).decode()[:-1])
    assert not webhook_secret_is_standard(base64.b64encode(b"z" * 32).decode())  # no prefix
