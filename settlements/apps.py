from django.apps import AppConfig


class SettlementsConfig(AppConfig):
    name = "settlements"
    verbose_name = "Settlements"

    def ready(self) -> None:
        # A share's payout outcome moves the share on the platform ledger.
        from payouts.signals import payout_returned, payouts_final
        from settlements.services.shares import (
            share_payout_returned_post,
            share_payouts_final_post,
        )

        payouts_final.connect(share_payouts_final_post, dispatch_uid="settlement_share_final")
        payout_returned.connect(
            share_payout_returned_post, dispatch_uid="settlement_share_returned"
        )
