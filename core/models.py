"""Model building blocks shared by every app (abstract: no table of their own).

* ``TimeStampedModel``: ``created_at`` set on insert and ``updated_at`` on every save.
* ``AppendOnlyModel`` and ``AppendOnlyQuerySet``: a record that is written once and never
  updated or deleted (ledger entries, the audit trail). Each model names the error it raises
  and the words of its message; PostgreSQL triggers enforce the same rule below the ORM.
* ``staff_user_field``: a reference to the staff user who did something.
"""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar

from django.conf import settings
from django.db import models

_M = TypeVar("_M", bound="AppendOnlyModel")


class TimeStampedModel(models.Model):
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True


class AppendOnlyQuerySet(models.QuerySet[_M]):
    """Refuses bulk updates and deletes of an ``AppendOnlyModel``."""

    def update(self, **kwargs: Any) -> int:
        raise self.model.immutable_error(f"{self.model.immutable_noun} cannot be updated")

    def delete(self) -> tuple[int, dict[str, int]]:
        raise self.model.immutable_error(f"{self.model.immutable_noun} cannot be deleted")


class AppendOnlyModel(models.Model):
    """A record that is inserted once and then only read: saving it again, or deleting it (one
    at a time or through its queryset), raises ``immutable_error``."""

    # The exception raised, and the records' name in its message ("ledger entries").
    immutable_error: ClassVar[type[Exception]]
    immutable_noun: ClassVar[str]

    class Meta:
        abstract = True

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            raise self.immutable_error(f"{self.immutable_noun} cannot be updated")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        raise self.immutable_error(f"{self.immutable_noun} cannot be deleted")


def staff_user_field(
    *,
    related_name: str,
    optional: bool = False,
    on_delete: Any = models.PROTECT,
    help_text: str = "",
) -> models.ForeignKey[Any, Any]:
    """A reference to the staff user who did something (``optional``: may be empty, e.g. for a
    command-line actor). By default their account can never be deleted under it."""
    return models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=on_delete,
        null=optional,
        blank=optional,
        related_name=related_name,
        help_text=help_text,
    )
