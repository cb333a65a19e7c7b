from __future__ import annotations

from typing import Any

import factory

from merchants.keys import secret_key_generate, secret_key_hash, secret_key_prefix
from merchants.models import KeyKind, Merchant, Mode, SecretKey, WebhookSettings


class MerchantFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Merchant

    name = factory.Sequence(lambda n: f"Merchant {n}")
    email = factory.Sequence(lambda n: f"merchant{n}@example.com")
    is_active = True


class SecretKeyFactory(factory.django.DjangoModelFactory):
    """A stored key; its plaintext is on the returned object as ``key.plaintext``."""

    class Meta:
        model = SecretKey

    merchant = factory.SubFactory(MerchantFactory)
    mode = Mode.TEST
    plaintext = factory.LazyAttribute(lambda o: secret_key_generate(mode=o.mode))
    key_hash = factory.LazyAttribute(lambda o: secret_key_hash(o.plaintext))
    prefix = factory.LazyAttribute(lambda o: secret_key_prefix(o.plaintext))

    @classmethod
    def _create(cls, model_class: type[SecretKey], *args: Any, **kwargs: Any) -> SecretKey:
        plaintext = kwargs.pop("plaintext")
        instance = super()._create(model_class, *args, **kwargs)
        instance.plaintext = plaintext
        return instance


class RestrictedKeyFactory(SecretKeyFactory):
    """A restricted key (``rk_<mode>_…``) holding ``scopes``; plaintext on ``key.plaintext``."""

    kind = KeyKind.RESTRICTED
    name = factory.Sequence(lambda n: f"restricted key {n}")
    scopes = factory.LazyFunction(lambda: ["read"])
    plaintext = factory.LazyAttribute(lambda o: secret_key_generate(mode=o.mode, restricted=True))


class WebhookSettingsFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = WebhookSettings

    merchant = factory.SubFactory(MerchantFactory)
    mode = Mode.TEST
    url = "https://merchant.example.com/webhooks"
    secret = factory.Sequence(lambda n: f"whsec_test_secret_{n}")
