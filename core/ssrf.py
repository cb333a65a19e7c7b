"""SSRF-safe URL checks for addresses the service will call: callback URLs and webhook targets.

``url_check_public(url)`` accepts an absolute ``https`` URL whose host resolves only to public
addresses. The rule is ``ipaddress``'s ``is_global``: every address it does not call global is
refused, and so are the special-purpose ranges some Python versions still call global
(``_EXTRA_NON_PUBLIC``: IPv6 site-local ``fec0::/10``, documentation ``3fff::/20``, local-use
NAT64, the 6to4 relay anycast, Teredo, …) and IPv6 addresses that carry a non-public IPv4 one
(IPv4-mapped, NAT64, 6to4). Refusal messages name the kind: loopback, private (RFC 1918, IPv6
ULA), link-local, multicast, reserved, unspecified, shared (CGNAT 100.64.0.0/10), IPv4-mapped, or
non-public. IPv4 written in non-standard notation (``2130706433``, ``0x7f000001``,
``0177.0.0.1``, ``127.1``), which many resolvers would quietly turn into 127.0.0.1, is refused.

With ``allow_private`` (``CALLBACK_URL_ALLOW_PRIVATE=1``, local development only) loopback and
private addresses are accepted over ``http`` or ``https``; public hosts always need ``https``, and
link-local (cloud metadata), multicast and reserved ranges stay refused.

The resolver is injectable: pass ``resolver=`` or replace ``system_resolver`` in tests, so the
checks run without DNS. Callers that then connect should connect to one of the returned
``addresses`` (or check again right before sending) to close the DNS-rebinding window.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings

MAX_URL_LENGTH = 2000

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], list[str]]

_PRIVATE_NETWORKS = tuple(
    ipaddress.ip_network(network)
    for network in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7")
)
_SHARED_NETWORK = ipaddress.ip_network("100.64.0.0/10")
_NAT64_NETWORK = ipaddress.ip_network("64:ff9b::/96")
# Special-purpose ranges (IANA registries) that some Python versions still call global.
_EXTRA_NON_PUBLIC = tuple(
    ipaddress.ip_network(network)
    for network in (
        "0.0.0.0/8",  # "this network"
        "192.0.0.0/24",  # IETF protocol assignments
        "192.88.99.0/24",  # 6to4 relay anycast (deprecated)
        "100::/64",  # discard-only
        "2001::/23",  # IETF protocol assignments, Teredo (2001::/32) among them
        "3fff::/20",  # documentation
        "5f00::/16",  # SRv6 SIDs
        "64:ff9b:1::/48",  # local-use IPv4/IPv6 translation
        "fec0::/10",  # site-local (deprecated, still routed inside some networks)
    )
)
_NUMERIC_LABEL_RE = re.compile(r"(?:0x[0-9a-f]*|[0-9]+)", re.ASCII)
_DOTTED_QUAD_RE = re.compile(
    r"(?:(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\.){3}"
    r"(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])",
    re.ASCII,
)
_HOSTNAME_RE = re.compile(
    r"(?=.{1,253}$)(?:[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?\.)*"
    r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?",
    re.ASCII,
)


class UnsafeURLError(ValueError):
    """The URL is not acceptable as an outbound target; the message states why."""


class AddressKind:
    """Why an address is or is not public (used in messages and for ``allow_private``)."""

    PUBLIC = "public"
    LOOPBACK = "loopback"
    PRIVATE = "private"
    LINK_LOCAL = "link-local"
    MULTICAST = "multicast"
    UNSPECIFIED = "unspecified"
    SHARED = "shared (carrier-grade NAT)"
    IPV4_MAPPED = "IPv4-mapped IPv6"
    RESERVED = "reserved"
    NON_PUBLIC = "non-public"


_DEVELOPMENT_KINDS = frozenset({AddressKind.LOOPBACK, AddressKind.PRIVATE})


@dataclass(frozen=True)
class CheckedURL:
    url: str
    scheme: str
    host: str
    port: int
    addresses: tuple[str, ...]


def system_resolver(host: str, port: int) -> list[str]:
    """Every address ``host`` resolves to (A and AAAA), via the system resolver."""
    infos = socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
    return [str(info[4][0]) for info in infos]


def address_kind(address: IPAddress) -> str:
    """Classifies one address; only ``AddressKind.PUBLIC`` may be called in production."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return AddressKind.IPV4_MAPPED
        embedded = _embedded_ipv4(address)
        if embedded is not None and address_kind(embedded) != AddressKind.PUBLIC:
            return AddressKind.NON_PUBLIC
    if address.is_unspecified:
        return AddressKind.UNSPECIFIED
    if address.is_loopback:
        return AddressKind.LOOPBACK
    if address.is_link_local:
        return AddressKind.LINK_LOCAL
    if address.is_multicast:
        return AddressKind.MULTICAST
    if isinstance(address, ipaddress.IPv4Address) and address in _SHARED_NETWORK:
        return AddressKind.SHARED
    if any(address in network for network in _PRIVATE_NETWORKS):
        return AddressKind.PRIVATE
    if address.is_reserved:
        return AddressKind.RESERVED
    if address_is_public(address):
        return AddressKind.PUBLIC
    return AddressKind.NON_PUBLIC


def address_is_public(address: IPAddress) -> bool:
    """The rule: globally reachable by ``ipaddress``'s ``is_global``, in none of the extra
    special-purpose ranges, and not carrying a non-public IPv4 address."""
    if not address.is_global or any(address in network for network in _EXTRA_NON_PUBLIC):
        return False
    if isinstance(address, ipaddress.IPv6Address):
        embedded = address.ipv4_mapped or _embedded_ipv4(address)
        if embedded is not None and not address_is_public(embedded):
            return False
    return True


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address carried by a NAT64 or 6to4 address, which a gateway may reach."""
    if address in _NAT64_NETWORK:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return address.sixtofour


def _parse_ip_literal(host: str) -> IPAddress | None:
    """An IP written the standard way, or ``None`` for a name; odd IPv4 notations are refused."""
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    labels = host.split(".")
    # A final numeric label makes the host an IPv4 address to browsers and resolvers alike.
    if labels and _NUMERIC_LABEL_RE.fullmatch(labels[-1]) and not _DOTTED_QUAD_RE.fullmatch(host):
        raise UnsafeURLError("must not use an IPv4 address in non-standard notation")
    return None


def _split(url: object) -> tuple[str, str, int]:
    if not isinstance(url, str) or not url:
        raise UnsafeURLError("must be an absolute https URL")
    if len(url) > MAX_URL_LENGTH:
        raise UnsafeURLError(f"must be at most {MAX_URL_LENGTH} characters")
    if not url.isascii() or any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in url):
        raise UnsafeURLError("must not contain spaces, control or non-ASCII characters")
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.netloc:
        raise UnsafeURLError("must be an absolute https URL")
    if "@" in parts.netloc:
        raise UnsafeURLError("must not contain user information")
    if "\\" in url:
        raise UnsafeURLError("must not contain backslashes")
    host = (parts.hostname or "").rstrip(".")
    if not host:
        raise UnsafeURLError("must include a host")
    try:
        port = parts.port or (443 if scheme == "https" else 80)
    except ValueError as error:
        raise UnsafeURLError("must have a valid port") from error
    if "%" in host:
        raise UnsafeURLError("must not use an IPv6 zone identifier")
    return scheme, host.lower(), port


def url_check_public(
    url: object,
    *,
    allow_private: bool | None = None,
    resolver: Resolver | None = None,
) -> CheckedURL:
    """Returns the checked URL with the addresses it resolved to, or raises ``UnsafeURLError``.

    ``allow_private`` defaults to ``settings.CALLBACK_URL_ALLOW_PRIVATE``.
    """
    if allow_private is None:
        allow_private = bool(getattr(settings, "CALLBACK_URL_ALLOW_PRIVATE", False))
    scheme, host, port = _split(url)
    if scheme != "https" and not allow_private:
        raise UnsafeURLError("must be an absolute https URL")

    literal = _parse_ip_literal(host)
    if literal is not None:
        addresses: list[IPAddress] = [literal]
    elif host == "localhost" or host.endswith(".localhost"):
        addresses = [ipaddress.ip_address("127.0.0.1")]
    else:
        if _HOSTNAME_RE.fullmatch(host) is None:
            raise UnsafeURLError("must have a valid host name")
        addresses = _resolve(host, port, resolver or system_resolver)

    for address in addresses:
        kind = address_kind(address)
        if kind == AddressKind.PUBLIC:
            if scheme != "https":
                raise UnsafeURLError("must be an absolute https URL")
            continue
        if allow_private and kind in _DEVELOPMENT_KINDS:
            continue
        raise UnsafeURLError(f"must not point to a {kind} address ({address})")
    return CheckedURL(
        url=str(url),
        scheme=scheme,
        host=host,
        port=port,
        addresses=tuple(str(address) for address in addresses),
    )


def _resolve(host: str, port: int, resolver: Resolver) -> list[IPAddress]:
    try:
        raw_addresses = resolver(host, port)
    except (OSError, UnicodeError) as error:
        raise UnsafeURLError(f"host {host} could not be resolved") from error
    addresses: list[IPAddress] = []
    for raw in raw_addresses:
        try:
            addresses.append(ipaddress.ip_address(str(raw).split("%", 1)[0]))
        except ValueError as error:
            raise UnsafeURLError(f"host {host} could not be resolved") from error
    if not addresses:
        raise UnsafeURLError(f"host {host} could not be resolved")
    return addresses
