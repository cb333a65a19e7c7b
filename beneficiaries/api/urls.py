"""The saved-beneficiary routes (an extension), under ``/api/v1/beneficiaries``."""

from django.urls import path

from beneficiaries.api.views import BeneficiaryDetailApi, BeneficiaryListCreateApi

urlpatterns = [
    path(
        "transactions/in/merchant-wallet/beneficiaries",
        BeneficiaryListCreateApi.as_view(),
        name="beneficiaries",
    ),
    path(
        "transactions/in/merchant-wallet/beneficiaries/<int:beneficiary_id>",
        BeneficiaryDetailApi.as_view(),
        name="beneficiary-detail",
    ),
]
