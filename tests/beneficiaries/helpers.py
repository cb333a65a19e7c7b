"""Helpers shared by the beneficiary tests (fixtures are in conftest.py)."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from wallets.providers.base import AccountResolution
from wallets.providers.sandbox import SandboxNameEnquiryProvider

BENEFICIARIES_URL = "/api/v1/transactions/in/merchant-wallet/beneficiaries"
NAME_ENQUIRY_URL = "/api/v1/transactions/in/merchant-wallet/payouts/name-enquiry"
PAYOUTS_URL = "/api/v1/transactions/in/merchant-wallet/payouts"
GOOD_ACCOUNT = "0123456789"
OTHER_ACCOUNT = "0987654321"
GTB_CODE = "058"
ACCESS_CODE = "044"
RECORDING_PROVIDER = "tests.beneficiaries.helpers.RecordingNameEnquiryProvider"


def beneficiary_url(beneficiary_id: int) -> str:
    return f"{BENEFICIARIES_URL}/{beneficiary_id}"


class RecordingNameEnquiryProvider:
    """The sandbox's answers, with every call recorded; ``renamed`` changes the name the
    provider gives for an account number (an account renamed at its bank)."""

    name = "recording"
    calls: ClassVar[list[str]] = []
    renamed: ClassVar[dict[str, str]] = {}

    @classmethod
    def reset(cls) -> None:
        cls.calls.clear()
        cls.renamed.clear()

    def resolve_account(
        self, *, account_number: str, bank_code: str, reference: str
    ) -> AccountResolution:
        type(self).calls.append(account_number)
        resolution = SandboxNameEnquiryProvider().resolve_account(
            account_number=account_number, bank_code=bank_code, reference=reference
        )
        new_name = self.renamed.get(account_number)
        if new_name is None:
            return resolution
        return dataclasses.replace(resolution, account_name=new_name)
