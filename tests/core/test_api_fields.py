"""The strict string field shared by every app's input serializers."""

from __future__ import annotations

import pytest
from rest_framework import serializers

from core.api.fields import StrictCharField


def test_strict_char_field_accepts_a_string() -> None:
    assert StrictCharField().run_validation("Invoice 42") == "Invoice 42"


@pytest.mark.parametrize("value", [42, 4.2, True, {"a": 1}, ["a"]])
def test_strict_char_field_refuses_what_is_not_a_string(value: object) -> None:
    with pytest.raises(serializers.ValidationError) as raised:
        StrictCharField().run_validation(value)
    assert raised.value.detail == ["must be a string"]


def test_strict_char_field_refuses_a_lone_surrogate() -> None:
    with pytest.raises(serializers.ValidationError) as raised:
        StrictCharField().run_validation("abc\ud800")
    assert raised.value.detail == ["must be valid Unicode text"]
