from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from payment_items.validators import validate_form_data

GOOD_FIELD = {"name": "student_id", "type": "input", "value": "", "options": [], "required": True}


def test_empty_list_is_valid() -> None:
    validate_form_data([])


def test_well_formed_fields_are_valid() -> None:
    validate_form_data(
        [
            GOOD_FIELD,
            {
                "name": "term",
                "type": "select",
                "value": "first",
                "options": ["first", "second"],
                "required": False,
            },
        ]
    )


@pytest.mark.parametrize("value", [None, {}, "[]", 3, {"name": "x"}])
def test_non_list_is_rejected(value: object) -> None:
    with pytest.raises(ValidationError, match="must be an array"):
        validate_form_data(value)


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("student_id", r"form_data\[0\]: must be an object"),
        ({k: v for k, v in GOOD_FIELD.items() if k != "required"}, "missing required"),
        ({k: v for k, v in GOOD_FIELD.items() if k != "name"}, "missing name"),
        ({**GOOD_FIELD, "colour": "red"}, "unknown key"),
        ({**GOOD_FIELD, "name": ""}, r"form_data\[0\].name: must be a non-empty string"),
        ({**GOOD_FIELD, "name": 5}, r"form_data\[0\].name: must be a non-empty string"),
        ({**GOOD_FIELD, "type": None}, r"form_data\[0\].type: must be a non-empty string"),
        ({**GOOD_FIELD, "value": 0}, r"form_data\[0\].value: must be a string"),
        ({**GOOD_FIELD, "value": None}, r"form_data\[0\].value: must be a string"),
        ({**GOOD_FIELD, "options": "a,b"}, "options: must be an array of strings"),
        ({**GOOD_FIELD, "options": [1, 2]}, "options: must be an array of strings"),
        ({**GOOD_FIELD, "required": "yes"}, "required: must be true or false"),
        ({**GOOD_FIELD, "required": 1}, "required: must be true or false"),
        ({**GOOD_FIELD, "name": "x" * 201}, "at most 200"),
    ],
)
def test_malformed_entry_is_rejected(entry: object, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        validate_form_data([entry])


def test_every_bad_entry_is_reported() -> None:
    with pytest.raises(ValidationError) as caught:
        validate_form_data([GOOD_FIELD, {**GOOD_FIELD, "name": "b", "required": "no"}, 7])
    messages = caught.value.messages
    assert any(m.startswith("form_data[1].required") for m in messages)
    assert any(m.startswith("form_data[2]") for m in messages)
    assert not any(m.startswith("form_data[0]") for m in messages)


def test_duplicate_names_are_rejected() -> None:
    with pytest.raises(ValidationError, match="duplicate field name"):
        validate_form_data([GOOD_FIELD, GOOD_FIELD])


def test_too_many_fields_are_rejected() -> None:
    fields = [{**GOOD_FIELD, "name": f"f{i}"} for i in range(51)]
    with pytest.raises(ValidationError, match="at most 50"):
        validate_form_data(fields)
