"""Reference data seeded by migrations and restored after test-database flushes.

Banks: (name, bank code as used by the payout/name-enquiry provider — the CBN code for banks,
the provider's code for MFBs and fintechs —, NIP institution code, active). Checked against
public NIBSS NIP institution lists and Paystack's ``GET /bank`` list.
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

BANKS: tuple[tuple[str, str, str, bool], ...] = (
    # Commercial banks
    ("Access Bank", "044", "000014", True),
    ("Access Bank (Diamond)", "063", "000005", True),
    ("Citibank Nigeria", "023", "000009", True),
    ("Ecobank Nigeria", "050", "000010", True),
    ("Fidelity Bank", "070", "000007", True),
    ("First Bank of Nigeria", "011", "000016", True),
    ("First City Monument Bank", "214", "000003", True),
    ("Globus Bank", "00103", "000027", True),
    ("Guaranty Trust Bank", "058", "000013", True),
    # Licence revoked by the CBN in June 2024: kept for history, not offered.
    ("Heritage Bank", "030", "000020", False),
    ("Jaiz Bank", "301", "000006", True),
    ("Keystone Bank", "082", "000002", True),
    ("Lotus Bank", "303", "000029", True),
    ("Optimus Bank", "107", "000036", True),
    ("Parallex Bank", "104", "000030", True),
    ("Polaris Bank", "076", "000008", True),
    ("PremiumTrust Bank", "105", "000031", True),
    ("Providus Bank", "101", "000023", True),
    ("Signature Bank", "106", "000034", True),
    ("Stanbic IBTC Bank", "221", "000012", True),
    ("Standard Chartered Bank", "068", "000021", True),
    ("Sterling Bank", "232", "000001", True),
    ("SunTrust Bank", "100", "000022", True),
    ("TAJBank", "302", "000026", True),
    ("Titan Trust Bank", "102", "000025", True),
    ("Union Bank of Nigeria", "032", "000018", True),
    ("United Bank For Africa", "033", "000004", True),
    ("Unity Bank", "215", "000011", True),
    ("Wema Bank", "035", "000017", True),
    ("Zenith Bank", "057", "000015", True),
    # Merchant banks
    ("Coronation Merchant Bank", "559", "060001", True),
    ("Rand Merchant Bank", "502", "000024", True),
    # Microfinance banks, payment service banks and fintechs
    ("OPay Digital Services (OPay)", "999992", "100004", True),
    ("PalmPay", "999991", "100033", True),
    ("Moniepoint Microfinance Bank", "50515", "090405", True),
    ("Kuda Microfinance Bank", "50211", "090267", True),
    ("VFD Microfinance Bank", "566", "090110", True),
    ("Carbon", "565", "100026", True),
    ("FairMoney Microfinance Bank", "51318", "090551", True),
    ("Paga", "100002", "100002", True),
    ("Rubies Microfinance Bank", "125", "090175", True),
    ("Sparkle Microfinance Bank", "51310", "090325", True),
    ("LAPO Microfinance Bank", "50549", "090177", True),
    ("Eyowo Microfinance Bank", "50126", "090328", True),
    ("9 Payment Service Bank (9PSB)", "120001", "120001", True),
    ("Hope Payment Service Bank", "120002", "120002", True),
    ("MTN MoMo Payment Service Bank", "120003", "120003", True),
    ("Airtel Smartcash Payment Service Bank", "120004", "120004", True),
)

DEFAULT_FEE_SCHEDULE_NAME = "Paystack NGN transfer pricing"
DEFAULT_FEE_SCHEDULE_EFFECTIVE_FROM = datetime(2024, 1, 1, tzinfo=UTC)
# (min_amount, max_amount or None for no upper bound, flat fee)
DEFAULT_FEE_TIERS: tuple[tuple[Decimal, Decimal | None, Decimal], ...] = (
    (Decimal("0.01"), Decimal("5000.00"), Decimal("10.00")),
    (Decimal("5000.01"), Decimal("50000.00"), Decimal("25.00")),
    (Decimal("50000.01"), None, Decimal("50.00")),
)


def reference_data_seed(
    *, bank_model: type[Any], fee_schedule_model: type[Any], fee_tier_model: type[Any]
) -> None:
    """Seeds banks and the default fee schedule where none exist. Takes models as arguments so
    migrations can pass their historical models."""
    if not bank_model.objects.exists():
        bank_model.objects.bulk_create(
            bank_model(name=name, bank_code=code, institution_code=nip, is_active=active)
            for name, code, nip, active in BANKS
        )
    if not fee_schedule_model.objects.exists():
        schedule = fee_schedule_model.objects.create(
            name=DEFAULT_FEE_SCHEDULE_NAME,
            currency="NGN",
            effective_from=DEFAULT_FEE_SCHEDULE_EFFECTIVE_FROM,
        )
        fee_tier_model.objects.bulk_create(
            fee_tier_model(schedule=schedule, min_amount=low, max_amount=high, fee_amount=fee)
            for low, high, fee in DEFAULT_FEE_TIERS
        )
