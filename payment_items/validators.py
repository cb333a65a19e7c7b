"""Validation of a payment item's ``form_data``: the custom fields a payer must supply."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError

FORM_FIELD_KEYS = ("name", "type", "value", "options", "required")
MAX_FORM_FIELDS = 50
MAX_TEXT_LENGTH = 200


def _entry_errors(index: int, entry: Any) -> list[str]:
    where = f"form_data[{index}]"
    if not isinstance(entry, dict):
        return [f"{where}: must be an object with {', '.join(FORM_FIELD_KEYS)}"]
    errors: list[str] = []
    missing = [key for key in FORM_FIELD_KEYS if key not in entry]
    if missing:
        errors.append(f"{where}: missing {', '.join(missing)}")
    unknown = sorted(set(entry) - set(FORM_FIELD_KEYS))
    if unknown:
        errors.append(f"{where}: unknown key(s) {', '.join(map(str, unknown))}")
    for key in ("name", "type"):
        if key in entry and (not isinstance(entry[key], str) or not entry[key].strip()):
            errors.append(f"{where}.{key}: must be a non-empty string")
    for key in ("name", "type", "value"):
        if isinstance(entry.get(key), str) and len(entry[key]) > MAX_TEXT_LENGTH:
            errors.append(f"{where}.{key}: must be at most {MAX_TEXT_LENGTH} characters")
    if "value" in entry and not isinstance(entry["value"], str):
        errors.append(f"{where}.value: must be a string")
    if "options" in entry:
        options = entry["options"]
        if not isinstance(options, list) or not all(isinstance(o, str) for o in options):
            errors.append(f"{where}.options: must be an array of strings")
    if "required" in entry and not isinstance(entry["required"], bool):
        errors.append(f"{where}.required: must be true or false")
    return errors


def validate_form_data(value: Any) -> None:
    """``form_data`` is a list of ``{name, type, value, options, required}`` with unique names.

    Raises ``ValidationError`` listing every malformed entry.
    """
    if not isinstance(value, list):
        raise ValidationError("form_data must be an array (use [] when there are no fields)")
    if len(value) > MAX_FORM_FIELDS:
        raise ValidationError(f"form_data may hold at most {MAX_FORM_FIELDS} fields")
    errors: list[str] = []
    for index, entry in enumerate(value):
        errors.extend(_entry_errors(index, entry))
    names = [e["name"] for e in value if isinstance(e, dict) and isinstance(e.get("name"), str)]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        errors.append(f"form_data: duplicate field name(s) {', '.join(duplicates)}")
    if errors:
        raise ValidationError(errors)
