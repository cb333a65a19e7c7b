"""Factories for saved beneficiaries: rows as ``beneficiary_create`` would write them, without
the name enquiry (use them for reads, deletes and payouts by id)."""

from __future__ import annotations

import factory

from beneficiaries.models import Beneficiary
from merchants.models import Mode
from wallets.providers.sandbox import sandbox_account_name
from wallets.selectors import bank_get_by_code


class BeneficiaryFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Beneficiary

    # ``merchant`` is required: BeneficiaryFactory(merchant=...)
    mode = Mode.TEST
    account_number = factory.Sequence(lambda n: f"{1_100_000_000 + n:010d}")
    account_name = factory.LazyAttribute(lambda o: sandbox_account_name(o.account_number))
    bank_code = "058"
    bank_name = factory.LazyAttribute(lambda o: bank_get_by_code(bank_code=o.bank_code).name)
    bank_id = factory.LazyAttribute(lambda o: bank_get_by_code(bank_code=o.bank_code).pk)
    nickname = ""
