"""Hosted checkout routes, under /checkout/ (HTML pages, CSRF-protected forms)."""

from django.urls import path

from collections_app.views import (
    CheckoutCancelView,
    CheckoutCardPayView,
    CheckoutPageView,
    CheckoutReturnView,
    CheckoutTransferSimulateView,
)

app_name = "checkout"

urlpatterns = [
    path("<str:reference>", CheckoutPageView.as_view(), name="page"),
    path("<str:reference>/card", CheckoutCardPayView.as_view(), name="card"),
    path("<str:reference>/transfer", CheckoutTransferSimulateView.as_view(), name="transfer"),
    path("<str:reference>/cancel", CheckoutCancelView.as_view(), name="cancel"),
    path("<str:reference>/return", CheckoutReturnView.as_view(), name="return"),
]
