"""Signals wallets send to the apps above them (which wallets never imports)."""

from django.dispatch import Signal

# Sent by ``wallets.services`` inside the transaction, under the wallet row lock, that makes an
# armed low-balance alert fire: a ledger write that leaves the available balance below
# ``low_balance_threshold``, or a new threshold the balance is already below. Arguments:
# ``wallet`` (saved, ``low_balance_alerted`` now true), ``available_balance`` (after the
# change), ``low_balance_threshold``, and ``ledger_entry`` (the entry that crossed; ``None``
# when setting the threshold raised the alert). The webhooks app records ``wallet.balance_low``
# on it, so the event exists if and only if the change commits.
wallet_balance_low = Signal()
