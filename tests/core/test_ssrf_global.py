"""The SSRF guard refuses every address that is not globally reachable: ``ipaddress``'s
``is_global`` is the rule, with the special-purpose ranges it still calls global refused too."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.ssrf import AddressKind, UnsafeURLError, address_kind, url_check_public

PROPERTY_SETTINGS = settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.filter_too_much]
)


def _url_for(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str:
    host = f"[{address}]" if address.version == 6 else str(address)
    return f"https://{host}/callback"


def _no_dns(host: str, port: int) -> list[str]:
    raise AssertionError(f"an IP literal must not be resolved ({host})")


# Addresses from the ranges below, each written the way it would appear in a URL or in an
# answer from DNS.
NAMED_RANGES = [
    pytest.param("fec0::1", id="IPv6 site-local fec0::/10"),
    pytest.param("feff:ffff::1", id="IPv6 site-local, top of fec0::/10"),
    pytest.param("::ffff:10.0.0.1", id="IPv4-mapped private"),
    pytest.param("::ffff:127.0.0.1", id="IPv4-mapped loopback"),
    pytest.param("::ffff:169.254.169.254", id="IPv4-mapped metadata"),
    pytest.param("64:ff9b::a00:1", id="NAT64 of 10.0.0.1"),
    pytest.param("64:ff9b::a9fe:a9fe", id="NAT64 of 169.254.169.254"),
    pytest.param("64:ff9b:1::a00:1", id="local-use NAT64 64:ff9b:1::/48"),
    pytest.param("2002:a00:1::1", id="6to4 of 10.0.0.1"),
    pytest.param("2002:7f00:1::1", id="6to4 of 127.0.0.1"),
    pytest.param("2002:c0a8:101::1", id="6to4 of 192.168.1.1"),
    pytest.param("2001:0:4136:e378:8000:63bf:3fff:fdd2", id="Teredo"),
    pytest.param("2001:db8::1", id="documentation 2001:db8::/32"),
    pytest.param("3fff::1", id="documentation 3fff::/20"),
    pytest.param("192.0.2.10", id="documentation TEST-NET-1"),
    pytest.param("198.51.100.10", id="documentation TEST-NET-2"),
    pytest.param("203.0.113.10", id="documentation TEST-NET-3"),
    pytest.param("192.88.99.1", id="6to4 relay anycast"),
    pytest.param("100::1", id="IPv6 discard-only"),
    pytest.param("5f00::1", id="SRv6 SIDs"),
    pytest.param("fc00::1", id="IPv6 unique local"),
    pytest.param("fe80::1", id="IPv6 link-local"),
    pytest.param("10.0.0.1", id="RFC 1918 10/8"),
    pytest.param("172.16.0.1", id="RFC 1918 172.16/12"),
    pytest.param("192.168.1.1", id="RFC 1918 192.168/16"),
    pytest.param("100.64.0.1", id="shared CGNAT"),
    pytest.param("169.254.169.254", id="IPv4 link-local metadata"),
    pytest.param("127.0.0.1", id="IPv4 loopback"),
    pytest.param("0.0.0.0", id="IPv4 unspecified"),  # noqa: S104 - a refused address
    pytest.param("192.0.0.8", id="IETF protocol assignments"),
    pytest.param("198.18.0.1", id="benchmarking"),
    pytest.param("240.0.0.1", id="reserved class E"),
    pytest.param("255.255.255.255", id="limited broadcast"),
    pytest.param("224.0.0.1", id="IPv4 multicast"),
    pytest.param("ff02::1", id="IPv6 multicast"),
    pytest.param("::1", id="IPv6 loopback"),
    pytest.param("::", id="IPv6 unspecified"),
]


@pytest.mark.parametrize("literal", NAMED_RANGES)
def test_named_non_global_ranges_are_refused_as_ip_literals(literal: str) -> None:
    address = ipaddress.ip_address(literal)
    assert address_kind(address) != AddressKind.PUBLIC
    with pytest.raises(UnsafeURLError, match="must not point to"):
        url_check_public(_url_for(address), allow_private=False, resolver=_no_dns)


@pytest.mark.parametrize("literal", NAMED_RANGES)
def test_named_non_global_ranges_are_refused_when_a_name_resolves_to_them(literal: str) -> None:
    def resolve(host: str, port: int) -> list[str]:
        return ["93.184.216.34", literal]

    with pytest.raises(UnsafeURLError, match="must not point to"):
        url_check_public("https://merchant.example.com/cb", allow_private=False, resolver=resolve)


@pytest.mark.parametrize("literal", ["fec0::1", "::ffff:169.254.169.254", "3fff::1", "2001::1"])
def test_development_mode_still_refuses_the_non_private_special_ranges(literal: str) -> None:
    with pytest.raises(UnsafeURLError):
        url_check_public(
            _url_for(ipaddress.ip_address(literal)), allow_private=True, resolver=_no_dns
        )


@pytest.mark.parametrize(
    "literal", ["93.184.216.34", "8.8.8.8", "2606:2800:220:1::1", "2001:4860:4860::8888"]
)
def test_global_addresses_stay_accepted(literal: str) -> None:
    address = ipaddress.ip_address(literal)
    assert address_kind(address) == AddressKind.PUBLIC
    assert url_check_public(_url_for(address), allow_private=False, resolver=_no_dns).addresses


@PROPERTY_SETTINGS
@given(address=st.ip_addresses().filter(lambda address: not address.is_global))
def test_any_address_that_is_not_global_is_refused(
    address: ipaddress.IPv4Address | ipaddress.IPv6Address,
) -> None:
    assert address_kind(address) != AddressKind.PUBLIC
    with pytest.raises(UnsafeURLError):
        url_check_public(_url_for(address), allow_private=False, resolver=_no_dns)


@PROPERTY_SETTINGS
@given(
    address=st.ip_addresses(v=6, network="fec0::/10")
    | st.ip_addresses(v=6, network="3fff::/20")
    | st.ip_addresses(v=6, network="64:ff9b:1::/48")
    | st.ip_addresses(v=6, network="2001::/32")
    | st.ip_addresses(v=4, network="192.88.99.0/24")
)
def test_special_ranges_python_calls_global_are_refused(
    address: ipaddress.IPv4Address | ipaddress.IPv6Address,
) -> None:
    with pytest.raises(UnsafeURLError):
        url_check_public(_url_for(address), allow_private=False, resolver=_no_dns)


@PROPERTY_SETTINGS
@given(
    embedded=st.ip_addresses(v=4).filter(lambda address: not address.is_global),
    wrapper=st.sampled_from(["mapped", "nat64", "6to4"]),
)
def test_ipv6_carrying_a_non_global_ipv4_is_refused(
    embedded: ipaddress.IPv4Address, wrapper: str
) -> None:
    value = int(embedded)
    if wrapper == "mapped":
        address = ipaddress.IPv6Address((0xFFFF << 32) | value)
    elif wrapper == "nat64":
        address = ipaddress.IPv6Address((0x64FF9B << 96) | value)
    else:
        address = ipaddress.IPv6Address((0x2002 << 112) | (value << 80) | 1)
    with pytest.raises(UnsafeURLError):
        url_check_public(_url_for(address), allow_private=False, resolver=_no_dns)
