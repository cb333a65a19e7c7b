from __future__ import annotations

import pytest

from merchants.models import Merchant
from merchants.services import MerchantCreated


@pytest.fixture
def merchant(merchant_account: MerchantCreated) -> Merchant:
    return merchant_account.merchant
