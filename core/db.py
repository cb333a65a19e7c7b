"""Hand-built statements for hot paths, where compiling the ORM's costs more than the database's
own work: ``rows_update`` writes many rows in one statement, ``row_insert`` inserts one new row
as ``save()`` would, ``ModelRow`` reads a model's columns out of a hand-written ``SELECT``.

``rows_update``: many rows' columns written in one statement, cheaply built.

``QuerySet.bulk_update`` writes every field as ``CASE WHEN id = 1 THEN … WHEN id = 2 THEN …``:
one Django expression per field and row, each resolved and compiled in Python, which costs more
than the database's own work for a few dozen rows. ``rows_update`` sends the new values as a
``VALUES`` list joined on the primary key instead, the values prepared by each field
(``get_db_prep_save``: money as kobo, JSON as text, instants in UTC) exactly as a save would:
``UPDATE t SET c = CAST(v.c AS <type>) FROM (VALUES …) AS v (pk, c, …) WHERE t.pk = v.pk`` (the
casts give each column its type whatever the first row holds).

Like ``bulk_update``, it sends no signal and calls no ``save()``: fields with ``auto_now`` are
written only when listed and set by the caller. Database triggers fire as for any ``UPDATE``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

from django.db import connections, router
from django.db.models import NOT_PROVIDED, Field, Model
from django.db.models.signals import post_save, pre_save

ROWS_PER_STATEMENT = 500


def quoted_table(model: type[Model], connection: Any) -> str:
    """The model's table name as hand-written SQL names it (``Model._meta.db_table``, quoted)."""
    return str(connection.ops.quote_name(model._meta.db_table))


def quoted_column(model: type[Model], field_name: str, connection: Any) -> str:
    """The column of the model's field ``field_name`` as hand-written SQL names it
    (``Model._meta.get_field(name).column``, quoted: ``wallet`` is ``"wallet_id"``)."""
    field = model._meta.get_field(field_name)
    if not isinstance(field, Field):  # a reverse relation has no column
        raise ValueError(f"{model.__name__}.{field_name}: not a concrete field")
    return str(connection.ops.quote_name(field.column))


def rows_update(objs: Sequence[Model], fields: Sequence[str], *, using: str | None = None) -> int:
    """Writes ``fields`` of every object in ``objs`` (all of one model, all saved) to its row,
    in one statement per ``ROWS_PER_STATEMENT`` objects; returns how many rows were updated."""
    if not objs:
        return 0
    if not fields:
        raise ValueError("rows_update: name at least one field")
    model = type(objs[0])
    meta = model._meta
    alias = using or router.db_for_write(model)
    connection = connections[alias]
    concrete: list[Any] = [meta.get_field(name) for name in fields]  # checked just below
    for field in concrete:
        if not field.concrete or field.primary_key or field.many_to_many:
            raise ValueError(f"rows_update: {field.name} is not a concrete, non-key column")
    pk = meta.pk
    updated = 0
    for start in range(0, len(objs), ROWS_PER_STATEMENT):
        chunk = objs[start : start + ROWS_PER_STATEMENT]
        params: list[Any] = []
        for obj in chunk:
            if type(obj) is not model or obj.pk is None:
                raise ValueError("rows_update: every object must be a saved row of one model")
            params.append(pk.get_db_prep_value(obj.pk, connection))
            params.extend(
                field.get_db_prep_save(getattr(obj, field.attname), connection)
                for field in concrete
            )
        sql = _update_sql(connection, meta.db_table, str(pk.column), concrete, rows=len(chunk))
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            updated += cursor.rowcount
    return updated


def row_insert(obj: Model, *, using: str | None = None) -> Model:
    """Inserts the new, unsaved ``obj`` as ``obj.save()`` does (the columns in the model's order,
    ``auto_now``/``auto_now_add`` set, each value prepared by its field, the generated key read
    back with ``RETURNING``, ``pre_save``/``post_save`` sent when something listens) in one
    statement whose text is built once per model and database: the ORM compiles its ``INSERT``
    again for every save. For models with an automatic primary key and no parent model only;
    returns ``obj``, now saved."""
    model = type(obj)
    meta = model._meta
    auto_field = meta.auto_field
    if meta.parents or auto_field is None or not obj._state.adding or obj.pk is not None:
        raise ValueError("row_insert: a new row of a model with an automatic key and no parent")
    alias = using or router.db_for_write(model, instance=obj)
    connection = connections[alias]
    unsaved: Any = obj  # the check save() makes of related objects (undeclared in django-stubs)
    unsaved._prepare_related_fields_for_save(operation_name="save")
    listened = pre_save.has_listeners(model) or post_save.has_listeners(model)
    if listened:
        pre_save.send(sender=model, instance=obj, raw=False, using=alias, update_fields=None)
    sql, fields = _insert_sql(model, alias)
    values = [field.pre_save(obj, True) for field in fields]
    if any(hasattr(value, "resolve_expression") for value in values):
        raise ValueError("row_insert: plain values only, no expressions")
    params = [
        field.get_db_prep_save(value, connection)
        for field, value in zip(fields, values, strict=True)
    ]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    setattr(obj, auto_field.attname, row[0])
    obj._state.adding = False
    obj._state.db = alias
    if listened:
        post_save.send(
            sender=model, instance=obj, created=True, update_fields=None, raw=False, using=alias
        )
    return obj


@cache
def _insert_sql(model: type[Model], alias: str) -> tuple[str, tuple[Any, ...]]:
    """The ``INSERT … RETURNING`` of a new row of ``model`` as the ORM writes it, and the fields
    its parameters are, in order."""
    meta = model._meta
    auto_field: Any = meta.auto_field
    connection = connections[alias]
    quote = connection.ops.quote_name
    fields = tuple(
        field
        for field in meta.local_concrete_fields
        if field is not auto_field and not getattr(field, "generated", False)
    )
    if any(field.db_default is not NOT_PROVIDED for field in fields):
        raise ValueError(f"row_insert: {model.__name__} has a column with a database default")
    table = quote(meta.db_table)
    columns = ", ".join(quote(str(field.column)) for field in fields)
    placeholders = ", ".join(["%s"] * len(fields))
    returning = f"{table}.{quote(auto_field.column)}"
    sql = f"INSERT INTO {table} ({columns}) VALUES ({placeholders}) RETURNING {returning}"  # noqa: S608
    return sql, fields


def _cast_type(field: Any, connection: Any) -> str:
    """The type a ``VALUES`` column is cast to: the column's own, but ``text`` for a bounded
    string (a cast to ``varchar(n)`` would cut a longer value silently; the assignment to the
    column refuses it, as any ``UPDATE`` would)."""
    cast = field.cast_db_type(connection)
    return "text" if re.fullmatch(r"(varchar|character varying)\(\d+\)", cast) else cast


def _update_sql(
    connection: Any, table: str, pk_column: str, fields: list[Any], *, rows: int
) -> str:
    quote = connection.ops.quote_name
    row = "(" + ", ".join(["%s"] * (len(fields) + 1)) + ")"
    values = ", ".join([row] * rows)
    names = [quote(pk_column), *(quote(field.column) for field in fields)]
    assignments = ", ".join(
        f"{quote(field.column)} = CAST(v.{quote(field.column)} AS {_cast_type(field, connection)})"
        for field in fields
    )
    return (
        f"UPDATE {quote(table)} AS t SET {assignments} "  # noqa: S608 (names, not values)
        f"FROM (VALUES {values}) AS v ({', '.join(names)}) "
        f"WHERE t.{quote(pk_column)} = CAST(v.{quote(pk_column)} AS bigint)"
    )


class ModelRow:
    """A model's concrete columns under a table alias in a hand-written ``SELECT``, and the
    instance of a row's slice of them made as a queryset makes it: each value through the
    backend's converters and the field's own (``from_db_value``: money as ``Decimal``), then
    ``Model.from_db``.

    ``columns`` gives the select list; ``instance`` takes the values in that order (``None``
    when they are all NULL: the row of an outer join that found nothing).
    """

    def __init__(self, model: type[Model], alias: str) -> None:
        self.model = model
        self.alias = alias
        self.fields: tuple[Field, ...] = tuple(model._meta.concrete_fields)
        self.attnames = [field.attname for field in self.fields]
        self._converters: dict[str, list[tuple[Any, list[Callable[..., Any]]]]] = {}

    def __len__(self) -> int:
        return len(self.fields)

    def columns(self, connection: Any) -> str:
        quote = connection.ops.quote_name
        return ", ".join(f"{self.alias}.{quote(field.column)}" for field in self.fields)

    def _field_converters(self, connection: Any) -> list[tuple[Any, list[Callable[..., Any]]]]:
        """Each column's expression and converters; the same for every connection of one alias
        (they depend on its settings only)."""
        converters = self._converters.get(connection.alias)
        if converters is None:
            converters = []
            for field in self.fields:
                column = field.get_col(self.alias)
                functions = connection.ops.get_db_converters(column)
                converters.append((column, functions + column.get_db_converters(connection)))
            self._converters[connection.alias] = converters
        return converters

    def instance(self, values: Sequence[Any], connection: Any) -> Model | None:
        if len(values) != len(self.fields):
            raise ValueError(f"ModelRow: {len(values)} values for {len(self.fields)} columns")
        if all(value is None for value in values):
            return None
        converted = list(values)
        for index, (column, converters) in enumerate(self._field_converters(connection)):
            for converter in converters:
                converted[index] = converter(converted[index], column, connection)
        return self.model.from_db(connection.alias, self.attnames, converted)
