"""The strict string field shared by every app's input serializers, and output serializers built
once per process."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import Decimal
from types import SimpleNamespace
from zoneinfo import ZoneInfo

import pytest
from django.utils import timezone
from hypothesis import given, settings
from hypothesis import strategies as st
from rest_framework import serializers

from core.api.fields import (
    MoneyField,
    StrictCharField,
    representation,
    timestamp_representation,
)


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


class _InnerOutputSerializer(serializers.Serializer):
    name = serializers.CharField()
    amount = MoneyField()


class _OuterOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    inner = _InnerOutputSerializer(source="*")
    note = serializers.SerializerMethodField()
    flag = serializers.BooleanField()

    def get_note(self, obj: object) -> str | None:
        return getattr(obj, "note", None) or None


def test_representation_is_the_serializers_data_in_the_same_order() -> None:
    objects = [
        SimpleNamespace(id=1, name="Ade", amount=Decimal("10.5"), note="", flag=True),
        SimpleNamespace(id=2, name="Bola", amount=Decimal("0.01"), note="n", flag=False),
    ]
    for obj in objects:
        built_per_object = _OuterOutputSerializer(obj).data
        assert representation(_OuterOutputSerializer, obj) == built_per_object
        assert json.dumps(representation(_OuterOutputSerializer, obj)) == json.dumps(
            built_per_object
        )


def test_representation_builds_the_serializer_once() -> None:
    built: list[object] = []

    class CountedOutputSerializer(serializers.Serializer):
        name = serializers.CharField()

        def __init__(self, *args: object, **kwargs: object) -> None:
            built.append(self)
            super().__init__(*args, **kwargs)

    answers = [
        representation(CountedOutputSerializer, SimpleNamespace(name=f"n{n}")) for n in range(3)
    ]
    assert answers == [{"name": "n0"}, {"name": "n1"}, {"name": "n2"}]
    assert len(built) == 1


# --- timestamp_representation ----------------------------------------------------------------

_DRF_DATETIME = serializers.DateTimeField()


@settings(max_examples=300, derandomize=True, database=None)
@given(
    instant=st.datetimes(
        min_value=datetime(1900, 1, 1),  # noqa: DTZ001 (hypothesis takes naive bounds)
        max_value=datetime(2200, 1, 1),  # noqa: DTZ001
        timezones=st.sampled_from([UTC, ZoneInfo("Africa/Lagos"), ZoneInfo("America/New_York")]),
    ),
    zone=st.sampled_from(["Africa/Lagos", "UTC", "Asia/Kolkata"]),
)
def test_timestamp_representation_is_what_drf_writes(instant: datetime, zone: str) -> None:
    with timezone.override(zone):
        assert timestamp_representation(instant) == _DRF_DATETIME.to_representation(instant)
        assert timestamp_representation(
            instant, zone=timezone.get_current_timezone()
        ) == _DRF_DATETIME.to_representation(instant)


def test_timestamp_representation_of_no_instant_is_none() -> None:
    assert timestamp_representation(None) is None


def _strict_serializers() -> list[type[serializers.Serializer]]:
    """Every input serializer of the service (every route's module imported)."""
    import config.urls  # noqa: F401
    from core.api.fields import InputSerializer

    found: list[type[serializers.Serializer]] = []
    pending: list[type[serializers.Serializer]] = [InputSerializer]
    while pending:
        cls = pending.pop()
        found.append(cls)
        pending.extend(cls.__subclasses__())
    return found


def _validator_state(validator: object) -> tuple[type, dict[str, object]]:
    """A validator's kind and settings, its message as text (DRF's lazy messages have no
    equality)."""
    settings_ = {
        name: str(value) if name == "message" else value
        for name, value in vars(validator).items()
        if name != "_constructor_args"
    }
    return type(validator), settings_


def _state(field: serializers.Field) -> dict[str, object]:
    """A field's attributes, validators compared by kind and settings."""
    state = {k: v for k, v in vars(field).items() if k not in ("_creation_counter", "_validators")}
    state["validators"] = [_validator_state(v) for v in field.validators]
    return state


def test_input_serializers_copy_their_fields_as_drf_does() -> None:
    import copy

    classes = _strict_serializers()
    assert len(classes) > 20
    for cls in classes:
        declared = cls._declared_fields  # type: ignore[attr-defined]
        for name, field in cls().fields.items():
            deep = copy.deepcopy(declared[name])
            deep.bind(field_name=name, parent=field.parent)
            assert type(field) is type(deep), (cls, name)
            if isinstance(field, serializers.BaseSerializer) or "child" in vars(field):
                assert repr(field) == repr(deep), (cls, name)  # deep-copied as DRF does
                continue
            assert _state(field) == _state(deep), (cls, name)
            assert field is not declared[name]


def test_a_change_to_one_serializers_field_reaches_no_other() -> None:
    from payouts.api.serializers import PayoutCreateInputSerializer

    first, second = PayoutCreateInputSerializer(), PayoutCreateInputSerializer()
    first.fields["account_number"].required = True
    first.fields["bank_code"].validators.append(lambda value: None)
    first.fields["bank_code"].error_messages["blank"] = "changed"
    assert second.fields["account_number"].required is False
    assert len(second.fields["bank_code"].validators) == len(
        PayoutCreateInputSerializer().fields["bank_code"].validators
    )
    assert second.fields["bank_code"].error_messages["blank"] != "changed"
    assert PayoutCreateInputSerializer._declared_fields["account_number"].required is False  # type: ignore[attr-defined]
