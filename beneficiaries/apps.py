from django.apps import AppConfig


class BeneficiariesConfig(AppConfig):
    name = "beneficiaries"
    verbose_name = "Beneficiaries"
