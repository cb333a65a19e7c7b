"""Signals payouts send to the apps above them (which payouts never imports).

Both are sent inside the database transaction that makes the change, so a receiver's writes
commit or roll back with it. ``settlements`` listens to them for the payouts that pay
subaccount shares (platform ledger postings at the payout's outcome).
"""

from django.dispatch import Signal

# Payouts that became final (``successful`` or ``failed``) together, with ``payouts`` (the
# updated instances, their new status set): sent by ``PayoutFinalEffects.apply``, the one way
# every settling path (dispatch, requery, manual resolution) writes.
payouts_final = Signal()

# A successful payout sent back by the beneficiary's bank, with ``payout``: sent by
# ``payout_return`` once, when the return is applied.
payout_returned = Signal()
