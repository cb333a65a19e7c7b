"""Back office: bulk payouts uploaded as CSV, which take two people.

* upload (``payouts.propose_resolution`` or ``payouts.approve_resolution``): a CSV of payouts
  for a chosen merchant and mode, checked row by row as a dry run and shown with the totals;
* propose: the checked file becomes a ``PayoutBatchProposal`` (``payout_batch_propose``);
  nothing is reserved;
* review (``payouts.approve_resolution``, a different person: ``audit.two_person``): the page
  names the merchant, the mode, the number of payouts, the total and every row's account, bank
  and amount; approving submits the stored rows as one bulk payout through the same service as
  ``POST …/payouts/bulk`` (``payout_batch_proposal_approve``), rejecting closes the proposal.

``PayoutAdmin`` routes ``bulk-upload/`` here; proposals have their own read-only admin with the
review page. Every step writes an audit record.
"""

from __future__ import annotations

import csv
import hashlib
import io
import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any, cast

from django import forms
from django.contrib import admin, messages
from django.contrib.auth.models import User  # request.user here: the admin site admits staff only
from django.core import signing
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.loader import render_to_string
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.safestring import SafeString

from audit.backoffice import BackOfficeAdminMixin, page_context, service_run
from audit.two_person import distinct_people_problem
from core.admin import ReadOnlyAdminMixin, money_cell, money_column, time_column
from core.exceptions import ApplicationError
from core.money import format_amount_display
from merchants.models import Merchant, Mode
from payouts.admin_resolution import (
    APPROVE_PERMISSION,
    DecisionForm,
    ProposalStateFilter,
    TwoPersonProposalAdminMixin,
)
from payouts.api.serializers import payout_batch_items_parse
from payouts.models import PayoutBatchProposal
from payouts.services import (
    BATCH_MAX_ITEMS,
    PayoutBatchCreateResult,
    payout_batch_preview,
)
from payouts.services.bulk_proposals import (
    batch_preview_rows,
    payout_batch_proposal_approve,
    payout_batch_proposal_reject,
    payout_batch_propose,
)
from wallets.selectors import wallet_get

BULK_CSV_REQUIRED = ("account_number", "bank_code", "amount", "idempotency_key")
BULK_CSV_COLUMNS = ("account_number", "bank_code", "amount", "narration", "idempotency_key")
BULK_UPLOAD_MAX_BYTES = 1024 * 1024
BULK_MAX_ROWS = BATCH_MAX_ITEMS
BULK_PREVIEW_SALT = "payouts.admin.bulk_upload"
BULK_TOKEN_MAX_AGE_SECONDS = 3600
_ITEM_INDEX = re.compile(r"items\[(\d+)\]")


def bulk_csv_rows(content: bytes) -> list[dict[str, str]]:
    """The payouts of an uploaded CSV file as the bulk route's items (strings, as a JSON body
    would carry them); a ``forms.ValidationError`` naming what is wrong with the file itself.
    Values are trimmed; an empty narration is left out; blank lines are skipped."""
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise forms.ValidationError("The file is not UTF-8 text.") from None
    if "\x00" in text:
        raise forms.ValidationError("The file holds NUL characters: it is not a CSV file.")
    reader = csv.DictReader(io.StringIO(text))
    header = [name.strip() for name in reader.fieldnames or []]
    missing = [name for name in BULK_CSV_REQUIRED if name not in header]
    unknown = [name for name in header if name not in BULK_CSV_COLUMNS]
    if missing or unknown:
        raise forms.ValidationError(
            f"The header must name the columns {', '.join(BULK_CSV_COLUMNS)} (narration may be "
            f"left out); missing: {', '.join(missing) or 'none'}; unknown: "
            f"{', '.join(unknown) or 'none'}."
        )
    reader.fieldnames = header
    rows: list[dict[str, str]] = []
    try:
        for line in reader:
            if None in line:
                raise forms.ValidationError(
                    f"Line {reader.line_num} has more values than the header has columns."
                )
            values = {name: (value or "").strip() for name, value in line.items()}
            if not any(values.values()):
                continue
            if not values.get("narration"):
                values.pop("narration", None)
            rows.append(values)
            if len(rows) > BULK_MAX_ROWS:
                break
    except csv.Error as error:
        raise forms.ValidationError(f"The file is not valid CSV: {error}.") from None
    if not rows:
        raise forms.ValidationError("The file holds no payouts.")
    if len(rows) > BULK_MAX_ROWS:
        raise forms.ValidationError(
            f"A batch holds at most {BULK_MAX_ROWS} payouts; split the file."
        )
    return rows


def rows_named(message: str) -> str:
    """``items[4]`` in a service message, as the file's row 5 (its fifth payout)."""
    return _ITEM_INDEX.sub(lambda match: f"row {int(match[1]) + 1}", message)


class BulkUploadForm(forms.Form):
    merchant = forms.ModelChoiceField(
        # The platform's wallets pay subaccount shares only, never a bulk upload.
        queryset=Merchant.objects.filter(is_platform=False).order_by("name", "id"),
        help_text="Whose wallet pays: the payouts are the merchant's, as if sent with its key",
    )
    mode = forms.ChoiceField(
        choices=Mode.choices,
        initial=Mode.LIVE,
        help_text="The wallet of this mode pays (live moves real money)",
    )
    payouts_file = forms.FileField(
        label="CSV file",
        help_text="Header: " + ", ".join(BULK_CSV_COLUMNS) + f"; at most {BATCH_MAX_ITEMS} rows",
    )
    batch_reference = forms.CharField(
        required=False,
        max_length=100,
        strip=True,
        help_text="Optional. Default: one derived from the file's content, so the same file "
        "submitted twice is one batch",
    )
    atomic = forms.BooleanField(
        required=False,
        label="All or nothing",
        help_text="Pay every row or none: a single invalid row refuses the whole file",
    )

    def clean_payouts_file(self) -> Any:
        upload = self.cleaned_data["payouts_file"]
        if upload.size > BULK_UPLOAD_MAX_BYTES:
            raise forms.ValidationError(
                f"The file is larger than {BULK_UPLOAD_MAX_BYTES // 1024} KiB; split it."
            )
        content = upload.read()
        self.cleaned_data["rows"] = bulk_csv_rows(content)
        self.cleaned_data["file_sha256"] = hashlib.sha256(content).hexdigest()
        return upload


class BulkDecisionForm(DecisionForm):
    rejected = "the bulk payout"


def _money(value: str) -> SafeString | str:
    return money_cell(Decimal(value)) if value else "—"


def _shown_rows(preview: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The stored dry run of each row with its money as the admin shows money."""
    return [
        {
            **row,
            "amount_cell": _money(row["amount"]),
            "fee_cell": _money(row["fee"]),
            "total_cell": _money(row["total"]),
        }
        for row in preview
    ]


# --- Upload, check, propose (routed by PayoutAdmin) ------------------------------------------


def may_upload(request: HttpRequest) -> bool:
    """Finance staff who act on payouts may check a file and propose it."""
    return bool(
        request.user.has_perm("payouts.propose_resolution")
        or request.user.has_perm(APPROVE_PERMISSION)
    )


def _bulk_context(model_admin: admin.ModelAdmin, request: HttpRequest, title: str) -> dict:
    return {
        **page_context(model_admin, request, title),
        "upload_url": reverse("admin:payouts_payout_bulk"),
        "proposals_url": reverse("admin:payouts_payoutbatchproposal_changelist"),
        "columns": BULK_CSV_COLUMNS,
        "max_rows": BATCH_MAX_ITEMS,
    }


def bulk_upload_view(model_admin: admin.ModelAdmin, request: HttpRequest) -> HttpResponse:
    """Upload a CSV, see each row checked as a dry run with the totals, then propose it for a
    second person's approval."""
    if not may_upload(request):
        raise PermissionDenied("You may not upload bulk payouts.")
    if request.method == "POST" and "_propose" in request.POST:
        return _bulk_propose(model_admin, request)
    form = BulkUploadForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        preview = _bulk_preview(model_admin, request, form)
        if preview is not None:
            return preview
    context = {**_bulk_context(model_admin, request, "Upload a bulk payout"), "form": form}
    return TemplateResponse(request, "admin/payouts/payout/bulk_upload.html", context)


def _bulk_preview(
    model_admin: admin.ModelAdmin, request: HttpRequest, form: BulkUploadForm
) -> HttpResponse | None:
    data = form.cleaned_data
    merchant, mode, rows = data["merchant"], data["mode"], data["rows"]
    upload = data["payouts_file"]
    try:
        outcomes = payout_batch_preview(
            merchant=merchant, mode=mode, items=payout_batch_items_parse(rows)
        )
        wallet = wallet_get(merchant=merchant, mode=mode)
    except ApplicationError as error:
        form.add_error(None, rows_named(error.message))
        return None
    preview = batch_preview_rows(rows, outcomes)
    valid = [row for row in preview if row["result"] == "valid"]
    counts = {
        result: sum(row["result"] == result for row in preview)
        for result in ("valid", "duplicate", "invalid")
    }
    batch_reference = data["batch_reference"] or f"csv-{data['file_sha256'][:32]}"
    token = signing.dumps(
        {
            "user": request.user.pk,
            "merchant": merchant.pk,
            "mode": mode,
            "atomic": data["atomic"],
            "batch_reference": batch_reference,
            "rows": rows,
            "file_name": upload.name,
            "file_sha256": data["file_sha256"],
        },
        salt=BULK_PREVIEW_SALT,
        compress=True,
    )

    def total(name: str) -> SafeString | str:
        return money_cell(sum((Decimal(row[name]) for row in valid), Decimal("0.00")))

    context = {
        **_bulk_context(model_admin, request, "Check the bulk payout"),
        "merchant": merchant,
        "mode": mode,
        "atomic": data["atomic"],
        "batch_reference": batch_reference,
        "file_name": upload.name,
        "rows": _shown_rows(preview),
        "counts": counts,
        "available_balance": money_cell(wallet.available_balance),
        "total_amount": total("amount"),
        "total_fee_amount": total("fee"),
        "total_debit_amount": total("total"),
        "can_propose": counts["valid"] > 0 and not (data["atomic"] and counts["invalid"]),
        "token": token,
    }
    return TemplateResponse(request, "admin/payouts/payout/bulk_upload_preview.html", context)


def _bulk_propose(model_admin: admin.ModelAdmin, request: HttpRequest) -> HttpResponse:
    upload_url = reverse("admin:payouts_payout_bulk")
    try:
        data = signing.loads(
            request.POST.get("token", ""),
            salt=BULK_PREVIEW_SALT,
            max_age=BULK_TOKEN_MAX_AGE_SECONDS,
        )
    except signing.BadSignature:
        data = None
    merchant = None
    if data is not None and data.get("user") == request.user.pk:
        merchant = Merchant.objects.filter(pk=data.get("merchant")).first()
    if merchant is None:
        model_admin.message_user(
            request,
            "This preview expired or is not yours; upload the file again.",
            level=messages.ERROR,
        )
        return HttpResponseRedirect(upload_url)
    proposal = service_run(
        model_admin,
        request,
        lambda: payout_batch_propose(
            merchant=merchant,
            mode=data["mode"],
            rows=data["rows"],
            atomic=data["atomic"],
            batch_reference=data["batch_reference"],
            proposed_by=cast(User, request.user),
            file_name=data["file_name"],
            file_sha256=data["file_sha256"],
            request=request,
        ),
        shown=rows_named,
    )
    if proposal is None:
        return HttpResponseRedirect(upload_url)
    model_admin.message_user(
        request,
        f"Bulk payout proposal #{proposal.pk}: {proposal.payout_count} payout(s) from "
        f"{merchant.name} ({proposal.mode}), "
        f"{format_amount_display(proposal.total_debit_amount)} in all. Nothing is paid until "
        "a different finance approver approves it.",
        level=messages.SUCCESS,
    )
    return HttpResponseRedirect(
        reverse("admin:payouts_payoutbatchproposal_change", args=[proposal.pk])
    )


# --- Proposals: list, detail, review ---------------------------------------------------------


@admin.register(PayoutBatchProposal)
class PayoutBatchProposalAdmin(
    TwoPersonProposalAdminMixin, ReadOnlyAdminMixin, BackOfficeAdminMixin, admin.ModelAdmin
):
    """Bulk payouts waiting for (or given) a second person's decision: read-only; decided on
    the review page."""

    review_url_name = "admin:payouts_payoutbatchproposal_review"

    change_form_template = "admin/backoffice/change_form.html"
    list_display = (
        "id",
        "merchant",
        "mode",
        "payout_count",
        "total_display",
        "proposed_by",
        "created_display",
        "decision_display",
        "decided_by",
    )
    list_filter = (ProposalStateFilter, "mode")
    search_fields = ("=batch_reference", "file_name", "merchant__name")
    list_select_related = ("merchant", "proposed_by", "decided_by")
    fields = (
        "merchant",
        "mode",
        "atomic",
        "batch_reference",
        "file_name",
        "file_sha256",
        "payout_count",
        "total_amount",
        "total_fee_amount",
        "total_debit_amount",
        "rows_table",
        "fingerprint",
        "proposed_by",
        "created_at",
        "decision",
        "decided_by",
        "decided_at",
        "decision_note",
        "batch",
    )
    readonly_fields = fields

    def has_approve_permission(self, request: HttpRequest) -> bool:
        return self.user_has(request, APPROVE_PERMISSION)

    total_display = money_column("total_debit_amount", "total debit")

    created_display = time_column("created_at", "proposed")

    @admin.display(description="rows as checked")
    def rows_table(self, obj: PayoutBatchProposal) -> SafeString:
        return render_to_string(
            "admin/payouts/payoutbatchproposal/_rows.html", {"rows": _shown_rows(obj.preview)}
        )

    def detail_buttons(self, request: HttpRequest, object_id: str) -> list[tuple[str, str]]:
        proposal = (
            PayoutBatchProposal.objects.filter(pk=object_id).first()
            if object_id.isdigit()
            else None
        )
        buttons = []
        if (
            proposal is not None
            and proposal.is_open
            and proposal.proposed_by_id != request.user.pk
            and self.has_approve_permission(request)
        ):
            url = reverse("admin:payouts_payoutbatchproposal_review", args=[proposal.pk])
            buttons.append(("Review the bulk payout…", url))
        return buttons

    def backoffice_pages(self) -> list[tuple[str, Callable[..., HttpResponse], str]]:
        return [
            ("<int:proposal_id>/review/", self.review_view, "payouts_payoutbatchproposal_review"),
        ]

    def review_view(self, request: HttpRequest, proposal_id: int) -> HttpResponse:
        if not self.has_approve_permission(request):
            raise PermissionDenied("You may not approve or reject bulk payouts.")
        proposal = get_object_or_404(
            PayoutBatchProposal.objects.select_related(
                "merchant", "proposed_by", "decided_by", "batch"
            ),
            pk=proposal_id,
        )
        own = proposal.proposed_by_id == request.user.pk
        rejecting = "_reject" in request.POST
        form = BulkDecisionForm(request.POST or None, rejecting=rejecting)
        if request.method == "POST":
            if own:
                raise PermissionDenied(
                    "You proposed this bulk payout: a different approver decides."
                )
            if not rejecting and "_approve" not in request.POST:
                form.add_error(None, "Choose to approve or to reject the bulk payout.")
            elif form.is_valid():
                return self._decide(request, proposal, form, rejecting=rejecting)
        problem = (
            distinct_people_problem(
                proposer=proposal.proposed_by, approver=cast(User, request.user)
            )
            if proposal.is_open and not own
            else None
        )
        can_decide = proposal.is_open and not own and problem is None
        context = {
            **page_context(self, request, f"Review bulk payout proposal #{proposal.pk}"),
            "proposal": proposal,
            "rows": _shown_rows(proposal.preview),
            "total_amount": money_cell(proposal.total_amount),
            "total_fee_amount": money_cell(proposal.total_fee_amount),
            "total_debit_amount": money_cell(proposal.total_debit_amount),
            "form": form,
            "own_proposal": own,
            "two_person_problem": problem,
            "approve_label": (
                f"Approve and pay {proposal.payout_count} payout(s) from {proposal.merchant.name}"
                if can_decide
                else ""
            ),
            "reject_label": "Reject the bulk payout" if can_decide else "",
            "change_url": reverse("admin:payouts_payoutbatchproposal_change", args=[proposal.pk]),
        }
        return TemplateResponse(request, "admin/payouts/payoutbatchproposal/review.html", context)

    def _decide(
        self,
        request: HttpRequest,
        proposal: PayoutBatchProposal,
        form: BulkDecisionForm,
        *,
        rejecting: bool,
    ) -> HttpResponse:
        review_url = reverse("admin:payouts_payoutbatchproposal_review", args=[proposal.pk])
        note = form.cleaned_data["note"]
        decide = payout_batch_proposal_reject if rejecting else payout_batch_proposal_approve
        result = service_run(
            self,
            request,
            lambda: decide(
                proposal_id=proposal.pk,
                approver=cast(User, request.user),
                note=note,
                request=request,
            ),
            shown=rows_named,
        )
        if result is None:
            return HttpResponseRedirect(review_url)
        if not isinstance(result, PayoutBatchCreateResult):
            self.message_user(
                request,
                f"Rejected: bulk payout proposal #{proposal.pk} is closed; nothing was paid.",
                level=messages.SUCCESS,
            )
            return HttpResponseRedirect(
                reverse("admin:payouts_payoutbatchproposal_change", args=[proposal.pk])
            )
        batch = result.batch
        if result.duplicate:
            self.message_user(
                request,
                f"This file was already submitted as batch {batch.batch_reference} "
                f"(#{batch.pk}); nothing was submitted again.",
                level=messages.WARNING,
            )
        else:
            self.message_user(
                request,
                f"Approved: batch {batch.batch_reference} (#{batch.pk}) for "
                f"{proposal.merchant.name} ({proposal.mode}): {batch.accepted_count} payout(s) "
                f"accepted, {batch.duplicate_count} already paid, {batch.rejected_count} "
                f"rejected; {format_amount_display(batch.total_debit_amount)} reserved.",
                level=messages.SUCCESS if batch.rejected_count == 0 else messages.WARNING,
            )
        changelist = reverse("admin:payouts_payout_changelist")
        return HttpResponseRedirect(f"{changelist}?batch__id__exact={batch.pk}")
