"""Choosing a provider by the key's mode, for every kind of provider (payouts, collections).

A setting maps each mode to a provider name (its default when unset); the kind's table maps
each name to its class, a dotted path imported when the provider is built. The table is read on
every call, so a name added to it (a test's provider) is found.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.utils.module_loading import import_string


class UnknownProviderError(LookupError):
    pass


@dataclass(frozen=True)
class ProviderRegistry:
    kind: str
    setting: str
    classes: dict[str, str]
    default_by_mode: Mapping[str, str]

    def name_for_mode(self, mode: str) -> str:
        by_mode = getattr(settings, self.setting, None) or self.default_by_mode
        try:
            return by_mode[mode]
        except KeyError:
            raise UnknownProviderError(
                f"no {self.kind} provider configured for mode {mode!r}"
            ) from None

    def build(self, name: str) -> Any:
        try:
            path = self.classes[name]
        except KeyError:
            raise UnknownProviderError(f"unknown {self.kind} provider {name!r}") from None
        return import_string(path)()
