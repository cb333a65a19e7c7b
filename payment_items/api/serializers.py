"""Output shapes of the payment-item routes: list view and detail view."""

from __future__ import annotations

from rest_framework import serializers

from core.api.fields import MoneyField
from payment_items.models import CatalogueStatus


class FormFieldOutputSerializer(serializers.Serializer):
    name = serializers.CharField()
    type = serializers.CharField()
    value = serializers.CharField(allow_blank=True)
    options = serializers.ListField(child=serializers.CharField())
    required = serializers.BooleanField()  # type: ignore[assignment]  # a declared field (the metaclass collects it), not Field.required


class CategoryListDetailsSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    status = serializers.ChoiceField(
        choices=CatalogueStatus.choices, help_text="1 active, 0 inactive"
    )


class CategoryDetailsSerializer(CategoryListDetailsSerializer):
    delete_at = serializers.DateTimeField(allow_null=True)
    created_at = serializers.DateTimeField()
    created_by = serializers.IntegerField(source="created_by_id", allow_null=True)
    is_deleted = serializers.BooleanField()
    updated_at = serializers.DateTimeField()


class SubCategoryDetailsSerializer(CategoryDetailsSerializer):
    business_registration_type_id = serializers.IntegerField(allow_null=True)


class PaymentItemListOutputSerializer(serializers.Serializer):
    """The list view of a payment item."""

    id = serializers.IntegerField()
    core_service_business_id = serializers.IntegerField(source="business_id")
    name = serializers.CharField()
    description = serializers.CharField(allow_null=True)
    amount = MoneyField()
    form_data = FormFieldOutputSerializer(many=True)
    is_enumerated_data = serializers.BooleanField()
    transaction_split_code = serializers.CharField(allow_blank=True)
    category = serializers.IntegerField(source="category_id")
    category_details = CategoryListDetailsSerializer(source="category")
    sub_category = serializers.IntegerField(source="sub_category_id")
    sub_category_details = CategoryListDetailsSerializer(source="sub_category")
    status = serializers.ChoiceField(
        choices=CatalogueStatus.choices, help_text="1 active, 0 inactive"
    )
    is_deleted = serializers.BooleanField()
    allow_quick_print = serializers.BooleanField()
    created_at = serializers.DateTimeField()
    delete_at = serializers.DateTimeField(allow_null=True)


class PaymentItemDetailOutputSerializer(PaymentItemListOutputSerializer):
    """The detail view of a payment item (also embedded in status check and search): the list
    view with full category details and the editing flags."""

    category_details = CategoryDetailsSerializer(source="category")
    sub_category_details = SubCategoryDetailsSerializer(source="sub_category")
    can_edit_item = serializers.BooleanField()
    show_on_agent_app = serializers.BooleanField()
    updated_at = serializers.DateTimeField()
