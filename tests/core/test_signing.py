"""The one hex HMAC-SHA512 helper: computed like an independent HMAC, checked in constant time,
and never raising for what a caller sends as a signature."""

from __future__ import annotations

import hashlib
import hmac

import pytest

from core.signing import SHA512_HEX_LENGTH, hmac_sha512_hex_compute, hmac_sha512_hex_valid

SECRET = "whsec_signing_secret"
BODY = b'{"event":"charge.success","data":{"reference":"TXN_1","amount":720500}}'


def independent(body: bytes, secret: str) -> str:
    return hmac.new(secret.encode(), body, hashlib.sha512).hexdigest()


def test_compute_matches_an_independent_hmac() -> None:
    signature = hmac_sha512_hex_compute(BODY, secret=SECRET)
    assert signature == independent(BODY, SECRET)
    assert len(signature) == SHA512_HEX_LENGTH
    assert signature == signature.lower()


def test_compute_keys_with_utf8() -> None:
    assert hmac_sha512_hex_compute(BODY, secret="clé") == independent(BODY, "clé")


def test_the_right_signature_is_valid() -> None:
    assert hmac_sha512_hex_valid(BODY, independent(BODY, SECRET), secret=SECRET)


def test_letter_case_and_surrounding_whitespace_do_not_matter() -> None:
    signature = independent(BODY, SECRET)
    assert hmac_sha512_hex_valid(BODY, signature.upper(), secret=SECRET)
    assert hmac_sha512_hex_valid(BODY, f"  {signature}\n", secret=SECRET)


def test_another_body_is_invalid() -> None:
    assert not hmac_sha512_hex_valid(BODY + b" ", independent(BODY, SECRET), secret=SECRET)


def test_another_secret_is_invalid() -> None:
    assert not hmac_sha512_hex_valid(BODY, independent(BODY, "other"), secret=SECRET)


@pytest.mark.parametrize(
    "signature",
    [
        None,
        "",
        "   ",
        "é" * SHA512_HEX_LENGTH,
        "０" * SHA512_HEX_LENGTH,  # full-width digits: not ASCII
        "z" * SHA512_HEX_LENGTH,
        "0" * SHA512_HEX_LENGTH,
        "abc",
        "0" * (SHA512_HEX_LENGTH + 2),
    ],
)
def test_unusable_signatures_are_invalid_without_raising(signature: str | None) -> None:
    assert hmac_sha512_hex_valid(BODY, signature, secret=SECRET) is False


def test_a_signature_that_is_not_a_string_is_invalid() -> None:
    signature = independent(BODY, SECRET).encode()
    assert hmac_sha512_hex_valid(BODY, signature, secret=SECRET) is False  # type: ignore[arg-type]


def test_nothing_is_valid_without_a_secret() -> None:
    assert not hmac_sha512_hex_valid(BODY, independent(BODY, ""), secret="")


def test_the_check_compares_in_constant_time(monkeypatch: pytest.MonkeyPatch) -> None:
    compared: list[tuple[bytes, bytes]] = []
    real = hmac.compare_digest

    def recording(a: bytes, b: bytes) -> bool:
        compared.append((a, b))
        return real(a, b)

    monkeypatch.setattr("core.signing.hmac.compare_digest", recording)
    assert hmac_sha512_hex_valid(BODY, independent(BODY, SECRET), secret=SECRET)
    assert len(compared) == 1
