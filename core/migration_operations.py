"""Migration operations shared by every app.

``ConvertToMinorUnits`` turns decimal money columns into ``FixedPointField``/``MoneyField``
integer columns (kobo), converting every existing row exactly: one ``ALTER TABLE`` whose
``USING round(column * 100)::bigint`` runs in numeric arithmetic, so ``1.13`` becomes ``113``
with no intermediate float.

Run it between ``RemoveConstraint`` and ``AddConstraint`` operations for the model's CHECK
constraints: a constraint with a literal (``percentage_rate <= 100``) means something else once
the column counts hundredths, and rows are rewritten while it is gone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db import migrations, models
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import ProjectState

Editor = BaseDatabaseSchemaEditor
State = ProjectState
# How a column converts: the USING expression of a (from, to) field pair, given the quoting.
Using = Callable[[Callable[[str], str], Any, Any], str]


def _to_minor_units(quote: Callable[[str], str], decimal: Any, integer: Any) -> str:
    return f"round({quote(decimal.column)} * {10**integer.decimal_places})::bigint"


def _from_minor_units(quote: Callable[[str], str], integer: Any, _decimal: Any) -> str:
    return f"{quote(integer.column)}::numeric / {10**integer.decimal_places}"


class ConvertToMinorUnits(migrations.operations.base.Operation):
    """Alters ``fields`` (name -> new ``FixedPointField``) of one model, scaling every value."""

    reversible = True

    def __init__(self, model_name: str, fields: dict[str, models.Field]) -> None:
        self.model_name = model_name
        self.fields = fields

    def deconstruct(self) -> tuple[str, list[Any], dict[str, Any]]:
        return (
            self.__class__.__qualname__,
            [],
            {"model_name": self.model_name, "fields": self.fields},
        )

    @property
    def model_name_lower(self) -> str:
        return self.model_name.lower()

    def state_forwards(self, app_label: str, state: ProjectState) -> None:
        for name, field in self.fields.items():
            state.alter_field(app_label, self.model_name_lower, name, field, True)

    def _pairs(
        self, app_label: str, from_state: ProjectState, to_state: ProjectState
    ) -> tuple[type[models.Model], type[models.Model], list[tuple[Any, Any]]]:
        from_model = from_state.apps.get_model(app_label, self.model_name)
        to_model = to_state.apps.get_model(app_label, self.model_name)
        pairs = [
            (from_model._meta.get_field(name), to_model._meta.get_field(name))
            for name in self.fields
        ]
        return from_model, to_model, pairs

    def _columns_alter(
        self, app_label: str, editor: Editor, from_state: State, to_state: State, using: Using
    ) -> None:
        """One ``ALTER TABLE``: each field's column takes the type of its ``to_state`` field,
        converted by ``using(quote, from_field, to_field)``."""
        _, to_model, pairs = self._pairs(app_label, from_state, to_state)
        if not self.allow_migrate_model(editor.connection.alias, to_model):
            return
        quote = editor.quote_name
        clauses = [
            f"ALTER COLUMN {quote(new.column)} TYPE {new.db_type(editor.connection)} "
            f"USING {using(quote, old, new)}"
            for old, new in pairs
        ]
        editor.execute(
            f"ALTER TABLE {quote(to_model._meta.db_table)} {', '.join(clauses)}", params=None
        )

    def database_forwards(self, app_label: str, editor: Editor, old: State, new: State) -> None:
        self._columns_alter(app_label, editor, old, new, _to_minor_units)

    def database_backwards(self, app_label: str, editor: Editor, old: State, new: State) -> None:
        # Backwards, ``old`` holds the integer fields and ``new`` the decimals.
        self._columns_alter(app_label, editor, old, new, _from_minor_units)

    def describe(self) -> str:
        return f"Store {', '.join(self.fields)} of {self.model_name} as integer minor units"

    @property
    def migration_name_fragment(self) -> str:
        return f"{self.model_name_lower}_minor_units"


def minor_units_operations(
    model_name: str,
    fields: dict[str, models.Field],
    check_constraints: list[models.CheckConstraint],
) -> list[migrations.operations.base.Operation]:
    """The model's CHECK constraints dropped, its ``fields`` converted, the constraints added
    again (compiled against the integer columns)."""
    return [
        *(
            migrations.RemoveConstraint(model_name=model_name, name=constraint.name)
            for constraint in check_constraints
        ),
        ConvertToMinorUnits(model_name=model_name, fields=fields),
        *(
            migrations.AddConstraint(model_name=model_name, constraint=constraint)
            for constraint in check_constraints
        ),
    ]
