"""Back office: manual resolution of ambiguous payouts, which takes two people.

One finance operator proposes the outcome of an ambiguous payout with an internal reason and
evidence (``payouts.propose_resolution``); a different person with
``payouts.approve_resolution`` approves it (the payout settles through
``payout_resolution_approve``) or rejects it, passing ``audit.two_person``'s check. The reason
and evidence are never shown to the merchant. ``ResolutionPagesMixin`` gives ``PayoutAdmin`` its
propose and review pages; the proposals and resolutions have read-only admins of their own.
``ProposalStateFilter`` and ``TwoPersonProposalAdminMixin`` (decision and review columns) serve
the lists of both kinds of two-person proposal: these and bulk payouts (``admin_bulk``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from django import forms
from django.contrib import admin, messages
from django.contrib.auth.models import User  # request.user here: the admin site admits staff only
from django.core.exceptions import PermissionDenied
from django.db.models import BooleanField, Case, QuerySet, Value, When
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html

from audit.backoffice import BackOfficeAdminMixin, page_context, service_run
from core.admin import ReadOnlyAdminMixin, ReadOnlyTabularInline
from payouts.models import (
    Payout,
    PayoutResolution,
    PayoutResolutionProposal,
    PayoutStatus,
    ResolutionDecision,
    ResolutionStatus,
    TwoPersonProposal,
)
from payouts.services import (
    EVIDENCE_MAX_LENGTHS,
    RESOLUTION_REASON_MIN_LENGTH,
    SAME_USER_MESSAGE,
    payout_resolution_approve,
    payout_resolution_propose,
    payout_resolution_reject,
)

APPROVE_PERMISSION = "payouts.approve_resolution"


class PayoutResolutionInline(ReadOnlyTabularInline):
    model = PayoutResolution
    allow_delete = True
    fields = ("created_at", "resolved_by", "from_status", "to_status", "reason")
    readonly_fields = fields
    verbose_name_plural = "manual resolutions (internal)"


class PayoutResolutionProposalInline(ReadOnlyTabularInline):
    model = PayoutResolutionProposal
    fields = (
        "proposed_at",
        "proposed_by",
        "proposed_status",
        "reason",
        "provider_reference",
        "nip_session_id",
        "decision",
        "decided_by",
        "decided_at",
        "decision_note",
    )
    readonly_fields = fields
    verbose_name_plural = "resolution proposals (internal)"


def resolution_reason_field(*, help_text: str) -> forms.CharField:
    """The internal reason of a proposed resolution, long enough to say what was checked; finance
    staff and the audit trail see it, the merchant never does."""
    return forms.CharField(
        label="Internal reason",
        widget=forms.Textarea(attrs={"rows": 4, "cols": 80}),
        min_length=RESOLUTION_REASON_MIN_LENGTH,
        strip=True,
        help_text=help_text,
    )


def _evidence_field(name: str, *, label: str, help_text: str) -> forms.CharField:
    """Optional evidence of a proposed outcome, no longer than the proposal keeps it."""
    return forms.CharField(
        label=label,
        required=False,
        max_length=EVIDENCE_MAX_LENGTHS[name],
        strip=True,
        help_text=help_text,
    )


class ProposeResolutionForm(forms.Form):
    proposed_status = forms.ChoiceField(
        label="Resolve as",
        choices=ResolutionStatus.choices,
        widget=forms.RadioSelect,
        help_text="successful captures the reserved funds; failed returns them to the merchant",
    )
    reason = resolution_reason_field(
        help_text="What was checked and with whom. Finance staff and the audit trail see it; "
        'the merchant never does (a failed payout tells them "Transfer failed").',
    )
    provider_reference = _evidence_field(
        "provider_reference",
        label="Provider reference",
        help_text="Evidence: the provider's reference of the transfer, if known",
    )
    nip_session_id = _evidence_field(
        "nip_session_id",
        label="NIP session id",
        help_text="Evidence: the NIP session id on the bank or provider statement, if any",
    )
    checked = forms.BooleanField(
        label="I have confirmed this outcome with the provider or the beneficiary bank",
        required=True,
    )


class DecisionForm(forms.Form):
    """An approver's decision on a proposal: a note, required (and long enough) to reject."""

    rejected = "the proposal"  # what the refusal message names
    note = forms.CharField(
        label="Decision note",
        required=False,
        strip=True,
        widget=forms.Textarea(attrs={"rows": 3, "cols": 80}),
        help_text=f"Internal. Required to reject (at least {RESOLUTION_REASON_MIN_LENGTH} "
        "characters).",
    )

    def __init__(self, *args: Any, rejecting: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.rejecting = rejecting

    def clean_note(self) -> str:
        note = self.cleaned_data.get("note") or ""
        if self.rejecting and len(note) < RESOLUTION_REASON_MIN_LENGTH:
            raise forms.ValidationError(
                f"Say why {self.rejected} is rejected (at least {RESOLUTION_REASON_MIN_LENGTH} "
                "characters)."
            )
        return note


def open_proposal(payout: Payout) -> PayoutResolutionProposal | None:
    return (
        PayoutResolutionProposal.objects.select_related("proposed_by")
        .filter(payout=payout, decision="")
        .first()
    )


if TYPE_CHECKING:
    _PayoutAdminBase = admin.ModelAdmin[Payout]
else:
    _PayoutAdminBase = object


class ResolutionPagesMixin(_PayoutAdminBase):
    """``PayoutAdmin``'s resolution controls and pages: the buttons a user may use on an
    ambiguous payout, the proposal form and the review page of a proposal."""

    if TYPE_CHECKING:  # provided by PayoutAdmin

        def has_propose_resolution_permission(self, request: HttpRequest) -> bool: ...
        def has_approve_resolution_permission(self, request: HttpRequest) -> bool: ...
        def ledger_entries_table(self, obj: Payout) -> str: ...
        def provider_responses_pretty(self, obj: Payout) -> str: ...

    def resolution_buttons(self, request: HttpRequest, payout: Payout) -> list[tuple[str, str]]:
        """The resolution controls this user may use on this payout, as (label, url)."""
        if payout.status != PayoutStatus.AMBIGUOUS:
            return []
        proposal = open_proposal(payout)
        if proposal is None:
            if self.has_propose_resolution_permission(request):
                url = reverse("admin:payouts_payout_propose_resolution", args=[payout.pk])
                return [("Propose a resolution…", url)]
            return []
        if self.has_approve_resolution_permission(request) and (
            proposal.proposed_by_id != request.user.pk
        ):
            url = reverse("admin:payouts_payout_review_resolution", args=[proposal.pk])
            return [("Review the proposed resolution…", url)]
        return []

    def _page_context(self, request: HttpRequest, payout: Payout, title: str) -> dict[str, Any]:
        return {
            **page_context(self, request, title),
            "payout": payout,
            "change_url": reverse("admin:payouts_payout_change", args=[payout.pk]),
            "ledger_entries_table": self.ledger_entries_table(payout),
            "provider_responses": self.provider_responses_pretty(payout),
        }

    def propose_resolution_view(self, request: HttpRequest, payout_id: int) -> HttpResponse:
        if not self.has_propose_resolution_permission(request):
            raise PermissionDenied("You may not propose payout resolutions.")
        payout = get_object_or_404(Payout.objects.select_related("merchant"), pk=payout_id)
        change_url = reverse("admin:payouts_payout_change", args=[payout.pk])
        if payout.status != PayoutStatus.AMBIGUOUS:
            self.message_user(
                request,
                f"Payout {payout.internal_reference} is {payout.status}; only ambiguous payouts "
                "can be resolved manually.",
                level=messages.ERROR,
            )
            return HttpResponseRedirect(change_url)
        if open_proposal(payout) is not None:
            self.message_user(
                request,
                f"Payout {payout.internal_reference} already has an open proposal; it must be "
                "approved or rejected first.",
                level=messages.ERROR,
            )
            return HttpResponseRedirect(change_url)
        form = ProposeResolutionForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            proposal = service_run(
                self,
                request,
                lambda: payout_resolution_propose(
                    payout_id=payout.pk,
                    proposed_status=form.cleaned_data["proposed_status"],
                    reason=form.cleaned_data["reason"],
                    proposed_by=cast(User, request.user),
                    provider_reference=form.cleaned_data["provider_reference"],
                    nip_session_id=form.cleaned_data["nip_session_id"],
                    request=request,
                ),
                refusal_denied=False,
            )
            if proposal is None:
                return HttpResponseRedirect(change_url)
            self.message_user(
                request,
                f"Resolution of {payout.internal_reference} as {proposal.proposed_status} "
                "proposed. Nothing moves until a different finance approver approves it.",
                level=messages.SUCCESS,
            )
            return HttpResponseRedirect(change_url)
        context = {
            **self._page_context(
                request, payout, f"Propose a resolution of payout {payout.internal_reference}"
            ),
            "form": form,
        }
        return TemplateResponse(request, "admin/payouts/payout/propose_resolution.html", context)

    def review_resolution_view(self, request: HttpRequest, proposal_id: int) -> HttpResponse:
        if not self.has_approve_resolution_permission(request):
            raise PermissionDenied("You may not approve or reject payout resolutions.")
        proposal = get_object_or_404(
            PayoutResolutionProposal.objects.select_related(
                "payout__merchant", "proposed_by", "decided_by"
            ),
            pk=proposal_id,
        )
        payout = proposal.payout
        own = proposal.proposed_by_id == request.user.pk
        rejecting = "_reject" in request.POST
        form = DecisionForm(request.POST or None, rejecting=rejecting)
        if request.method == "POST":
            if own:
                raise PermissionDenied(SAME_USER_MESSAGE + ".")
            if not rejecting and "_approve" not in request.POST:
                form.add_error(None, "Choose to approve or to reject the proposal.")
            elif form.is_valid():
                return self._decide(request, proposal, form, rejecting=rejecting)
        can_approve = proposal.is_open and not own and payout.status == PayoutStatus.AMBIGUOUS
        context = {
            **self._page_context(
                request, payout, f"Review the resolution of payout {payout.internal_reference}"
            ),
            "proposal": proposal,
            "form": form,
            "own_proposal": own,
            "can_approve": can_approve,
            "approve_label": f"Approve and settle as {proposal.proposed_status}"
            if can_approve
            else "",
            "reject_label": "Reject the proposal" if proposal.is_open and not own else "",
        }
        return TemplateResponse(request, "admin/payouts/payout/review_resolution.html", context)

    def _decide(
        self,
        request: HttpRequest,
        proposal: PayoutResolutionProposal,
        form: DecisionForm,
        *,
        rejecting: bool,
    ) -> HttpResponse:
        change_url = reverse("admin:payouts_payout_change", args=[proposal.payout_id])
        service = payout_resolution_reject if rejecting else payout_resolution_approve
        decided = service_run(
            self,
            request,
            lambda: service(
                proposal_id=proposal.pk,
                approver=cast(User, request.user),
                note=form.cleaned_data["note"],
                request=request,
            ),
        )
        if decided is None:
            return HttpResponseRedirect(change_url)
        if decided.decision == ResolutionDecision.APPROVED:
            message = (
                f"Approved: payout {proposal.payout.internal_reference} is now "
                f"{decided.proposed_status}."
            )
        else:
            message = (
                f"Rejected: payout {proposal.payout.internal_reference} stays as it was and "
                "may get a new proposal."
            )
        self.message_user(request, message, level=messages.SUCCESS)
        return HttpResponseRedirect(change_url)


class ProposalStateFilter(admin.SimpleListFilter):
    """Open or decided (approved, rejected): resolution proposals and bulk proposals alike."""

    title = "decision"
    parameter_name = "state"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("open", "Open"), *ResolutionDecision.choices]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        value = self.value()
        if value == "open":
            return queryset.filter(decision="")
        if value in ResolutionDecision.values:
            return queryset.filter(decision=value)
        return queryset


class TwoPersonProposalAdminMixin:
    """The list of two-person proposals (resolution proposals and bulk proposals alike): the
    decision column, and for approvers a review column that links each open proposal to its
    review page (``review_url_name``), except the viewer's own."""

    review_url_name: str
    list_display: tuple[str, ...]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        return (
            super()  # type: ignore[misc]
            .get_queryset(request)
            .annotate(
                proposed_by_viewer=Case(
                    When(proposed_by_id=request.user.pk, then=Value(True)),
                    default=Value(False),
                    output_field=BooleanField(),
                )
            )
        )

    def get_list_display(self, request: HttpRequest) -> tuple[str, ...]:
        if request.user.has_perm(APPROVE_PERMISSION):
            return (*self.list_display, "review_link")
        return self.list_display

    @admin.display(description="decision")
    def decision_display(self, obj: TwoPersonProposal) -> str:
        return obj.get_decision_display() if obj.decision else "open"

    @admin.display(description="review")
    def review_link(self, obj: TwoPersonProposal) -> str:
        if not obj.is_open:
            return "—"
        if getattr(obj, "proposed_by_viewer", False):
            return "your proposal: another approver decides"
        url = reverse(self.review_url_name, args=[obj.pk])
        return format_html('<a href="{}">Review…</a>', url)


@admin.register(PayoutResolutionProposal)
class PayoutResolutionProposalAdmin(
    TwoPersonProposalAdminMixin, ReadOnlyAdminMixin, BackOfficeAdminMixin, admin.ModelAdmin
):
    """Proposed manual resolutions (internal): read-only; decided on the review page."""

    review_url_name = "admin:payouts_payout_review_resolution"

    list_display = (
        "payout",
        "proposed_status",
        "proposed_by",
        "proposed_at",
        "decision_display",
        "decided_by",
        "decided_at",
    )
    list_filter = (ProposalStateFilter, "proposed_status")
    search_fields = ("=payout__internal_reference", "=provider_reference", "=nip_session_id")
    list_select_related = ("payout", "proposed_by", "decided_by")
    readonly_fields = (
        "payout",
        "proposed_status",
        "reason",
        "provider_reference",
        "nip_session_id",
        "proposed_by",
        "proposed_at",
        "decision",
        "decided_by",
        "decided_at",
        "decision_note",
    )


@admin.register(PayoutResolution)
class PayoutResolutionAdmin(ReadOnlyAdminMixin, BackOfficeAdminMixin, admin.ModelAdmin):
    """Manual resolutions (internal): read-only."""

    list_display = ("payout", "from_status", "to_status", "resolved_by", "created_at")
    list_filter = ("to_status",)
    search_fields = ("=payout__internal_reference", "reason")
    list_select_related = ("payout", "resolved_by")
    readonly_fields = ("payout", "from_status", "to_status", "reason", "resolved_by", "created_at")
