"""Model fields shared by every app: money, and text encrypted at rest.

``MoneyField`` keeps an amount as an integer count of its minor unit (kobo) in a ``bigint``
column and hands Python code a ``Decimal`` with two places. CHECK constraints, ``F()`` arithmetic
and aggregates then run on integers, exactly. No module multiplies by 100 on its own.

``EncryptedTextField`` keeps a secret the service must read back (a webhook signing secret)
encrypted under ``FIELD_ENCRYPTION_KEYS`` (``core.crypto``): Python code reads and writes
plaintext, the column holds ``enc:v1:<Fernet token>``. ``encrypted_field_rotate`` re-encrypts a
field's stored values under the first key (``manage.py encryption_keys_rotate``);
``encrypted_field_decrypt`` writes them back as plaintext (a migration's reverse).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from django import forms
from django.apps import apps
from django.core import checks, exceptions
from django.db import DEFAULT_DB_ALIAS, models, transaction
from django.db.models.expressions import Combinable
from django.db.models.functions import Cast
from django.db.models.lookups import Exact

from core.crypto import (
    EncryptionKeyError,
    ValueState,
    value_decrypt,
    value_encrypt,
    value_is_encrypted,
    value_reencrypt,
)
from core.money import MAX_AMOUNT, minor_units_from_decimal, minor_units_to_decimal

BIGINT_MAX = 2**63 - 1


class FixedPointField(models.BigIntegerField):
    """A decimal with ``decimal_places`` places, stored as an integer count of its last place.

    Python values are ``Decimal`` (``int`` and numeric strings are accepted and read as the
    major unit; ``float`` is refused). A value with more places than the field keeps is an
    error, never rounded.
    """

    description = "Fixed-point decimal stored as an integer count of its smallest unit"
    # For the mypy Django plugin: model attributes of this field are Decimal, not int.
    _pyi_private_set_type: Decimal | int | str | Combinable  # type: ignore[assignment]  # the plugin's hook; narrower than IntegerField's on purpose
    _pyi_private_get_type: Decimal  # type: ignore[assignment]  # as above

    def __init__(self, *args: Any, decimal_places: int = 2, **kwargs: Any) -> None:
        self.decimal_places = decimal_places
        super().__init__(*args, **kwargs)

    def check(self, **kwargs: Any) -> list[checks.CheckMessage]:
        errors = super().check(**kwargs)
        if not isinstance(self.decimal_places, int) or not 0 <= self.decimal_places <= 6:
            errors.append(checks.Error("decimal_places must be an integer from 0 to 6", obj=self))
        return errors

    def deconstruct(self) -> tuple[str, str, Sequence[Any], dict[str, Any]]:
        name, path, args, kwargs = super().deconstruct()
        if self.decimal_places != 2:
            kwargs["decimal_places"] = self.decimal_places
        return name, path, args, kwargs

    # Python <-> database --------------------------------------------------------------------

    def from_db_value(self, value: Any, expression: Any, connection: Any) -> Decimal | None:
        if value is None:
            return None
        # SUM() over bigint is numeric on PostgreSQL: an integral Decimal, still exact.
        return minor_units_to_decimal(int(value), places=self.decimal_places)

    def get_prep_value(self, value: Any) -> int | None:
        if value is None or hasattr(value, "resolve_expression"):
            return value
        return minor_units_from_decimal(
            self._as_decimal(value, error=ValueError), places=self.decimal_places
        )

    def to_python(self, value: Any) -> Decimal | None:
        if value is None:
            return None
        decimal_value = self._as_decimal(value, error=exceptions.ValidationError)
        quantum = Decimal(1).scaleb(-self.decimal_places)
        if decimal_value != decimal_value.quantize(quantum):
            raise exceptions.ValidationError(
                f"Ensure that there are no more than {self.decimal_places} decimal places.",
                code="max_decimal_places",
            )
        return decimal_value.quantize(quantum)

    def _as_decimal(self, value: Any, *, error: type[Exception]) -> Decimal:
        if isinstance(value, bool | float):
            raise error(f"{self.name}: {type(value).__name__} is not an exact amount")
        if isinstance(value, Decimal):
            decimal_value = value
        elif isinstance(value, int | str):
            try:
                decimal_value = Decimal(value)
            except InvalidOperation:
                raise error(f"{self.name}: {value!r} is not a decimal number") from None
        else:
            raise error(f"{self.name}: {type(value).__name__} is not an exact amount")
        if not decimal_value.is_finite():
            raise error(f"{self.name}: {value!r} is not a finite number")
        return decimal_value

    # Forms and admin --------------------------------------------------------------------------

    def formfield(self, **kwargs: Any) -> forms.Field | None:
        defaults: dict[str, Any] = {
            "form_class": forms.DecimalField,
            "decimal_places": self.decimal_places,
            "max_digits": len(str(BIGINT_MAX)) - 1,
        }
        defaults.update(kwargs)
        # Skip IntegerField.formfield, which would force an integer form field.
        return models.Field.formfield(self, **defaults)

    @property
    def validators(self) -> list[Any]:
        # The bigint range is enforced in kobo by get_prep_value, not on the Decimal value.
        return list(self._validators)  # type: ignore[attr-defined]  # Field._validators: set by Field.__init__, absent from django-stubs


class MoneyField(FixedPointField):
    """An amount of money: a two-place ``Decimal`` in Python, integer kobo in the database."""

    description = "Money: two-place Decimal stored as integer minor units (kobo)"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["decimal_places"] = 2
        super().__init__(*args, **kwargs)

    def formfield(self, **kwargs: Any) -> forms.Field | None:
        # An amount typed in the back office obeys the same limit as one sent to the API.
        return super().formfield(**{"max_value": MAX_AMOUNT, **kwargs})

    def deconstruct(self) -> tuple[str, str, Sequence[Any], dict[str, Any]]:
        name, path, args, kwargs = super().deconstruct()
        kwargs.pop("decimal_places", None)
        return name, path, args, kwargs


# --- Text encrypted at rest ------------------------------------------------------------------

ENCRYPTED_BATCH_SIZE = 200


class EncryptedTextField(models.TextField):
    """Text encrypted at rest. ``""`` and ``None`` are stored as they are (nothing to hide, and
    "is a secret set?" stays answerable); any other value is encrypted on every write, so two
    writes of one value differ. A stored value without the ``enc:v1:`` prefix (written before
    the field was encrypted) is read as plaintext.

    Encryption is randomised, so a stored value cannot be searched: the only lookups are
    ``isnull`` and ``exact`` with ``""``; any other is an error, not a silent mismatch.
    Serialised (``dumpdata``), the value is its encrypted form, and reads back as plaintext.
    """

    description = "Text encrypted at rest"

    @property
    def label(self) -> str:
        """``merchants.WebhookSettings.secret``: names the field in errors, never the value."""
        model = getattr(self, "model", None)
        return f"{model._meta.label}.{self.name}" if model is not None else str(self.name)

    def from_db_value(self, value: Any, expression: Any, connection: Any) -> str | None:
        if not value:
            return value
        return value_decrypt(value, label=self.label)

    def to_python(self, value: Any) -> str | None:
        value = super().to_python(value)
        if value and value_is_encrypted(value):
            return value_decrypt(value, label=self.label)
        return value

    def get_prep_value(self, value: Any) -> Any:
        value = super().get_prep_value(value)
        if not value:
            return value
        return value_encrypt(value)

    def value_to_string(self, obj: models.Model) -> str:
        value: Any = self.value_from_object(obj)
        return value_encrypt(value) if value else ""

    def get_lookup(self, lookup_name: str) -> Any:
        if lookup_name == "exact":
            return EncryptedEmptyExact
        if lookup_name == "isnull":
            return super().get_lookup(lookup_name)
        return None

    def get_transform(self, lookup_name: str) -> Any:
        return None


class EncryptedEmptyExact(Exact):
    """``exact`` on an encrypted field: only ``""`` (no secret) can be compared."""

    def get_prep_lookup(self) -> Any:
        if self.rhs != "":
            label = getattr(self.lhs.output_field, "label", "an encrypted field")
            raise exceptions.FieldError(
                f"{label} is encrypted at rest: it can only be compared with '' or tested with "
                "isnull"
            )
        return super().get_prep_lookup()


def encrypted_fields() -> list[EncryptedTextField]:
    """Every ``EncryptedTextField`` of the installed models, in app and model order."""
    return [
        model_field
        for model in apps.get_models()
        for model_field in model._meta.concrete_fields
        if isinstance(model_field, EncryptedTextField)
    ]


def _stored_values(
    model: type[models.Model], field_name: str, *, using: str
) -> models.QuerySet[Any]:
    """The field's non-empty stored values (no decryption) as ``(pk, stored)``, by pk."""
    return (
        model._base_manager.using(using)
        .annotate(stored=Cast(field_name, output_field=models.TextField()))
        .filter(stored__gt="")
        .order_by("pk")
        .values_list("pk", "stored")
    )


def encrypted_field_count(
    model: type[models.Model], field_name: str, *, using: str = DEFAULT_DB_ALIAS
) -> int:
    """How many rows hold a non-empty value in the field."""
    return _stored_values(model, field_name, using=using).count()


def _stored_values_rewrite(
    model: type[models.Model],
    field_name: str,
    rewrite: Callable[[Any, str], str | None],
    *,
    using: str,
    batch_size: int,
) -> Iterator[int]:
    """Calls ``rewrite(pk, stored)`` on every non-empty stored value and writes the stored form
    it returns (``None``: unchanged). A batch's rows are locked while it is rewritten, so a
    concurrent write of a new value waits and is never overwritten by its old one. Yields how
    many rows each batch held."""
    last_pk: Any = None
    while True:
        with transaction.atomic(using=using):
            rows = _stored_values(model, field_name, using=using).select_for_update()
            if last_pk is not None:
                rows = rows.filter(pk__gt=last_pk)
            batch = list(rows[:batch_size])
            for pk, stored in batch:
                new_stored = rewrite(pk, stored)
                if new_stored is not None and new_stored != stored:
                    model._base_manager.using(using).filter(pk=pk).update(
                        **{field_name: models.Value(new_stored, output_field=models.TextField())}
                    )
        if not batch:
            return
        last_pk = batch[-1][0]
        yield len(batch)


@dataclass
class EncryptedFieldRotation:
    """What ``encrypted_field_rotate`` did to one field's stored values."""

    label: str
    values: int = 0
    states: dict[str, int] = field(default_factory=lambda: {state: 0 for state in ValueState})
    unreadable: list[str] = field(default_factory=list)  # primary keys, left as they were
    cleared: list[str] = field(default_factory=list)  # primary keys, unreadable and emptied

    def as_dict(self) -> dict[str, Any]:
        return {
            "field": self.label,
            "values": self.values,
            **self.states,
            "unreadable": list(self.unreadable),
            "cleared": list(self.cleared),
        }


def encrypted_field_rotate(
    model: type[models.Model],
    field_name: str,
    *,
    using: str = DEFAULT_DB_ALIAS,
    batch_size: int = ENCRYPTED_BATCH_SIZE,
    progress: Callable[[int], None] | None = None,
    clear_unreadable: bool = False,
) -> EncryptedFieldRotation:
    """Re-encrypts every stored value of the field under the first key of
    ``FIELD_ENCRYPTION_KEYS``: values under another listed key are re-encrypted, plaintext
    values encrypted, values already under the first key left alone. A value no listed key
    decrypts is left as it is and its row named in ``unreadable``, or, with
    ``clear_unreadable`` (its key is lost for good), emptied and named in ``cleared``.
    ``progress(rows_done)`` after each batch."""
    model_field = model._meta.get_field(field_name)
    label = getattr(model_field, "label", f"{model._meta.label}.{field_name}")
    rotation = EncryptedFieldRotation(label=label)

    def rewrite(pk: Any, stored: str) -> str | None:
        try:
            new_stored, state = value_reencrypt(stored, label=label)
        except EncryptionKeyError:
            if clear_unreadable:
                rotation.cleared.append(str(pk))
                return ""
            rotation.unreadable.append(str(pk))
            return None
        rotation.states[state] += 1
        return new_stored

    for rows in _stored_values_rewrite(
        model, field_name, rewrite, using=using, batch_size=batch_size
    ):
        rotation.values += rows
        if progress is not None:
            progress(rotation.values)
    return rotation


def encrypted_field_decrypt(
    model: type[models.Model],
    field_name: str,
    *,
    using: str = DEFAULT_DB_ALIAS,
    batch_size: int = ENCRYPTED_BATCH_SIZE,
) -> int:
    """Writes every encrypted stored value of the field back as plaintext (a migration's
    reverse); raises ``EncryptionKeyError`` on a value no listed key decrypts. Returns how many
    values it decrypted."""
    model_field = model._meta.get_field(field_name)
    label = getattr(model_field, "label", f"{model._meta.label}.{field_name}")
    decrypted = 0

    def rewrite(pk: Any, stored: str) -> str | None:
        nonlocal decrypted
        if not value_is_encrypted(stored):
            return None
        decrypted += 1
        return value_decrypt(stored, label=label)

    for _rows in _stored_values_rewrite(
        model, field_name, rewrite, using=using, batch_size=batch_size
    ):
        pass
    return decrypted
