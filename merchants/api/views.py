"""The keys routes (an extension): roll the secret key, create, list and revoke restricted keys.
All of the calling key's merchant and mode, all needing ``keys:write``; a plaintext appears only
in the answer that issued it."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.request import Request

from core.api.base import MerchantApi
from core.api.responses import EnvelopeResponse, request_example, response_example
from core.api.schema_components import ApiTag
from merchants.api import examples
from merchants.api.serializers import (
    IssuedKeyOutputSerializer,
    KeyOutputSerializer,
    KeyRollInputSerializer,
    KeyRollOutputSerializer,
    RestrictedKeyCreateInputSerializer,
)
from merchants.scopes import Scope
from merchants.selectors import key_list
from merchants.services import key_revoke, restricted_key_create, secret_key_roll

ROLLED_MESSAGE = "Secret key rolled; the new key is shown once"
CREATED_MESSAGE = "Restricted key created; it is shown once"


class KeyRollApi(MerchantApi):
    """Roll the calling secret key: a new one now, the old one until its expiry."""

    openapi_tag = ApiTag.KEYS
    required_scopes = {"POST": Scope.KEYS_WRITE}
    error_statuses = (409,)

    @extend_schema(
        operation_id="key_roll",
        summary="Roll the secret key (the old one answers until its expiry)",
        request=KeyRollInputSerializer,
        responses={201: OpenApiResponse(KeyRollOutputSerializer, description="rolled")},
        description=(
            "Issues a new secret key of the calling key's mode (`secret`, shown in this answer "
            "only) and gives the calling key an expiry `expires_in_hours` from now (0 to 168, "
            "default 24): until then both keys answer, after it the old one gets 401 like an "
            "unknown key. Only the current secret key rolls: a restricted key gets 403, a key "
            "already rolled 409 (so of concurrent rolls of one key, one succeeds)."
        ),
        examples=[
            request_example("One day", examples.ROLL_REQUEST, "the old key answers for a day"),
            response_example("Rolled", examples.ROLLED, ROLLED_MESSAGE, 201),
        ],
    )
    def post(self, request: Request) -> EnvelopeResponse:
        serializer = KeyRollInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        rolled = secret_key_roll(
            calling_key=self.calling_key(request),
            expires_in_hours=serializer.validated_data["expires_in_hours"],
            request=request._request,
        )
        return EnvelopeResponse(
            KeyRollOutputSerializer(
                {
                    "key": rolled.issued.secret_key,
                    "secret": rolled.issued.plaintext,
                    "rolled_key": rolled.rolled,
                }
            ).data,
            message=ROLLED_MESSAGE,
            status=201,
        )


class KeyListCreateApi(MerchantApi):
    """List (GET) the keys of the calling key's mode; create (POST) a restricted key."""

    openapi_tag = ApiTag.KEYS
    required_scopes = {"GET": Scope.KEYS_WRITE, "POST": Scope.KEYS_WRITE}
    error_statuses = (409,)

    @extend_schema(
        operation_id="key_create",
        summary="Create a restricted key holding only the scopes named",
        request=RestrictedKeyCreateInputSerializer,
        responses={201: OpenApiResponse(IssuedKeyOutputSerializer, description="created")},
        description=(
            "Issues a restricted key (`rk_test_…` or `rk_live_…`, the calling key's mode; "
            "`secret` shown in this answer only) holding `scopes`. An unknown scope is 400 "
            "naming `scopes`; a scope the calling key does not hold itself is 403 (a restricted "
            "key never makes a wider one); 409 once the mode has 50 keys answering."
        ),
        examples=[
            request_example("Read only", examples.CREATE_REQUEST, "a key for a dashboard"),
            response_example("Created", examples.CREATED, CREATED_MESSAGE, 201),
        ],
    )
    def post(self, request: Request) -> EnvelopeResponse:
        serializer = RestrictedKeyCreateInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        issued = restricted_key_create(
            calling_key=self.calling_key(request),
            name=serializer.validated_data["name"],
            scopes=serializer.validated_data["scopes"],
            request=request._request,
        )
        return EnvelopeResponse(
            IssuedKeyOutputSerializer({"key": issued.secret_key, "secret": issued.plaintext}).data,
            message=CREATED_MESSAGE,
            status=201,
        )

    @extend_schema(
        operation_id="key_list",
        summary="The keys of this mode that answer, newest first",
        responses=KeyOutputSerializer(many=True),
        description=(
            "The merchant's keys of the calling key's mode that still answer: the current "
            "secret key, rolled ones until their expiry, restricted ones until revoked. Never "
            "a key's plaintext or hash; at most 50, so the list is not paginated."
        ),
        examples=[
            response_example(
                "Keys",
                [examples.SECRET_KEY, examples.RESTRICTED_KEY, examples.ROLLED_KEY],
                "Keys retrieved successfully",
            )
        ],
    )
    def get(self, request: Request) -> EnvelopeResponse:
        keys = key_list(merchant=self.merchant(request), mode=self.mode(request))
        return EnvelopeResponse(
            KeyOutputSerializer(keys, many=True).data, message="Keys retrieved successfully"
        )


class KeyDetailApi(MerchantApi):
    """Revoke (DELETE) one key of the calling key's mode."""

    openapi_tag = ApiTag.KEYS
    required_scopes = {"DELETE": Scope.KEYS_WRITE}
    error_statuses = (404, 409)

    @extend_schema(
        operation_id="key_revoke",
        summary="Revoke a restricted key, or a rolled secret key before its expiry",
        request=None,
        responses={200: KeyOutputSerializer},
        description=(
            "Revokes the key at once: from the next request it gets 401. 404 for another "
            "merchant's or mode's key, or one already revoked or expired; 409 for the calling "
            "key itself and for the current secret key (roll it instead); 403 for a key holding "
            "a scope the calling key lacks."
        ),
        examples=[response_example("Revoked", examples.RESTRICTED_KEY, "Key revoked")],
    )
    def delete(self, request: Request, key_id: int) -> EnvelopeResponse:
        key = key_revoke(
            calling_key=self.calling_key(request), key_id=key_id, request=request._request
        )
        return EnvelopeResponse(KeyOutputSerializer(key).data, message="Key revoked")
