"""The YAML form of ``/api/schema/``: a string that a YAML 1.2 reader would take for a number,
a boolean or null is written in quotes.

drf-spectacular's renderer dumps with PyYAML, which knows YAML 1.1 only: there ``0123456789``
(an 8 or 9 rules out octal) and ``058`` are strings and go out bare, yet every YAML 1.2 reader
(ReDoc and Swagger UI among them) reads them back as numbers. The dumper here resolves plain
scalars by YAML 1.1 *and* the YAML 1.2 core schema, so such a string would not read back as a
string when plain and the emitter quotes it; numbers, booleans and null are written as before.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Mapping
from datetime import time, timedelta
from decimal import Decimal
from typing import Any
from uuid import UUID

import yaml
from django.utils.safestring import SafeString
from drf_spectacular.renderers import (
    OpenApiJsonRenderer,
    OpenApiJsonRenderer2,
    OpenApiYamlRenderer,
    OpenApiYamlRenderer2,
)
from drf_spectacular.views import SpectacularAPIView
from rest_framework.exceptions import ErrorDetail

# The YAML 1.2 core schema's plain scalars that are not strings: (tag, pattern, first chars).
YAML_12_CORE_RESOLVERS: tuple[tuple[str, str, str], ...] = (
    ("tag:yaml.org,2002:null", r"^(?:~|null|Null|NULL)$", "~nN"),
    ("tag:yaml.org,2002:bool", r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
    ("tag:yaml.org,2002:int", r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", "-+0123456789"),
    (
        "tag:yaml.org,2002:float",
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
        "-+.0123456789",
    ),
)


_SafeDumper: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class SchemaYamlDumper(_SafeDumper):  # type: ignore[valid-type,misc]
    """PyYAML's safe dumper, no aliases, resolving plain scalars by YAML 1.1 and 1.2 alike."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


for _tag, _pattern, _first in YAML_12_CORE_RESOLVERS:
    SchemaYamlDumper.add_implicit_resolver(_tag, re.compile(_pattern), list(_first))


def _str(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    # SafeString's own type trips the representer; ``encode().decode()`` gives a plain str.
    scalar = dumper.represent_str(data.encode().decode())
    scalar.style = "|" if "\n" in data else None
    return scalar


def _decimal(dumper: yaml.SafeDumper, data: Decimal) -> yaml.ScalarNode:
    # No "!!float" tag on a fractionless decimal.
    value = f"{data:f}"
    tag = "tag:yaml.org,2002:float" if "." in value else "tag:yaml.org,2002:int"
    return dumper.represent_scalar(tag, value)


SchemaYamlDumper.add_representer(str, _str)
SchemaYamlDumper.add_representer(SafeString, _str)
SchemaYamlDumper.add_representer(Decimal, _decimal)
SchemaYamlDumper.add_representer(
    ErrorDetail, lambda d, data: d.represent_dict({"string": str(data), "code": data.code})
)
SchemaYamlDumper.add_representer(
    timedelta, lambda d, data: d.represent_str(str(data.total_seconds()))
)
SchemaYamlDumper.add_representer(time, lambda d, data: d.represent_str(data.isoformat()))
SchemaYamlDumper.add_representer(UUID, lambda d, data: d.represent_str(str(data)))
SchemaYamlDumper.add_representer(OrderedDict, lambda d, data: d.represent_dict(dict(data)))


def schema_yaml_dump(data: Any) -> bytes:
    """The schema as YAML that YAML 1.1 and YAML 1.2 readers load to the same values."""
    text = yaml.dump(
        data,
        default_flow_style=False,
        sort_keys=False,
        allow_unicode=True,
        Dumper=SchemaYamlDumper,
    )
    return text.encode("utf-8")


class _QuotingYamlRender:
    def render(
        self,
        data: Any,
        accepted_media_type: str | None = None,
        renderer_context: Mapping[str, Any] | None = None,
    ) -> bytes:
        return schema_yaml_dump(data)


class SchemaYamlRenderer(_QuotingYamlRender, OpenApiYamlRenderer):
    """drf-spectacular's YAML renderer with :func:`schema_yaml_dump`."""


class SchemaYamlRenderer2(_QuotingYamlRender, OpenApiYamlRenderer2):
    """The same for the ``application/vnd.oai.openapi`` media type."""


class SchemaApi(SpectacularAPIView):
    """``/api/schema/``: drf-spectacular's view with the YAML above (JSON unchanged)."""

    renderer_classes = [
        SchemaYamlRenderer,
        SchemaYamlRenderer2,
        OpenApiJsonRenderer,
        OpenApiJsonRenderer2,
    ]
