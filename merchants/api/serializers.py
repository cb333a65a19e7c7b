"""Input and output serializers for the keys routes: a key is shown by its id, name, kind,
prefix, scopes and dates, never by its hash; its plaintext only in the answer that issued it."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from core.api.fields import StrictCharField, StrictSerializer
from merchants.scopes import Scope
from merchants.services import ROLL_DEFAULT_EXPIRES_IN_HOURS, ROLL_MAX_EXPIRES_IN_HOURS

KEY_NAME_MAX_LENGTH = 100


class WholeNumberField(serializers.IntegerField):
    """A JSON integer only: strings, booleans and fractions are refused rather than converted."""

    def to_internal_value(self, data: Any) -> int:
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return int(super().to_internal_value(data))


class KeyRollInputSerializer(StrictSerializer):
    expires_in_hours = WholeNumberField(
        required=False,
        min_value=0,
        max_value=ROLL_MAX_EXPIRES_IN_HOURS,
        default=ROLL_DEFAULT_EXPIRES_IN_HOURS,
        help_text="how long the rolled key keeps answering, in whole hours: 0 (it stops at "
        f"once) to {ROLL_MAX_EXPIRES_IN_HOURS}; default {ROLL_DEFAULT_EXPIRES_IN_HOURS}",
    )


class RestrictedKeyCreateInputSerializer(StrictSerializer):
    name = StrictCharField(
        max_length=KEY_NAME_MAX_LENGTH, help_text="what the key is for, shown in the key list"
    )
    scopes = serializers.ListField(
        child=serializers.ChoiceField(choices=Scope.choices),
        allow_empty=False,
        max_length=len(Scope.values),
        help_text="the scopes the key holds; the calling key must hold each of them",
    )


class KeyOutputSerializer(serializers.Serializer):
    """A key as the keys routes show it: never its hash, never its plaintext."""

    id = serializers.IntegerField()
    name = serializers.CharField()
    kind = serializers.CharField(help_text="secret (every scope) or restricted")
    prefix = serializers.CharField(help_text="the visible start of the key")
    scopes = serializers.SerializerMethodField()
    created_at = serializers.DateTimeField()
    expires_at = serializers.DateTimeField(
        allow_null=True, help_text="when the key stops answering (a rolled secret key); null"
    )

    def get_scopes(self, key: Any) -> list[str]:
        held = key.scope_set
        return [scope for scope in Scope.values if scope in held]


class IssuedKeyOutputSerializer(serializers.Serializer):
    """A key just issued, with its plaintext: shown in this answer only."""

    key = KeyOutputSerializer()
    secret = serializers.CharField(help_text="the key itself; shown once, store it now")


class KeyRollOutputSerializer(IssuedKeyOutputSerializer):
    rolled_key = KeyOutputSerializer(help_text="the key that rolled, with its expiry")
