"""The SSRF guard for outbound URLs. No test touches the network: IP literals, ``localhost``
and an injected resolver for names."""

from __future__ import annotations

import socket

import pytest

from core import ssrf
from core.ssrf import UnsafeURLError, url_check_public


def resolver_for(mapping: dict[str, list[str]]):  # type: ignore[no-untyped-def]
    def resolve(host: str, port: int) -> list[str]:
        if host not in mapping:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return mapping[host]

    return resolve


PUBLIC_DNS = resolver_for({"merchant.example.com": ["93.184.216.34", "2606:2800:220:1::1"]})


def check(url: str, *, allow_private: bool = False, resolver=PUBLIC_DNS):  # type: ignore[no-untyped-def]
    return url_check_public(url, allow_private=allow_private, resolver=resolver)


# --- accepted --------------------------------------------------------------------------------


def test_public_https_name_is_accepted_with_its_addresses() -> None:
    checked = check("https://merchant.example.com/payments/callback?x=1")
    assert checked.host == "merchant.example.com"
    assert checked.port == 443
    assert checked.scheme == "https"
    assert checked.addresses == ("93.184.216.34", "2606:2800:220:1::1")


@pytest.mark.parametrize(
    "url", ["https://8.8.8.8/cb", "https://[2001:4860:4860::8888]/cb", "https://1.1.1.1:8443/"]
)
def test_public_ip_literals_over_https_are_accepted(url: str) -> None:
    assert check(url).addresses


def test_explicit_port_is_kept() -> None:
    assert check("https://merchant.example.com:8443/cb").port == 8443


def test_trailing_dot_and_upper_case_host_are_normalised() -> None:
    assert check("https://MERCHANT.example.com./cb").host == "merchant.example.com"


# --- scheme and shape ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "http://merchant.example.com/cb",
        "http://8.8.8.8/cb",
        "ftp://merchant.example.com/cb",
        "javascript:alert(1)",
        "//merchant.example.com/cb",
        "/relative/path",
        "merchant.example.com/cb",
        "",
    ],
)
def test_non_https_or_relative_urls_are_rejected(url: str) -> None:
    with pytest.raises(UnsafeURLError, match="absolute https URL"):
        check(url)


@pytest.mark.parametrize("value", [None, 42, ["https://merchant.example.com"]])
def test_non_strings_are_rejected(value: object) -> None:
    with pytest.raises(UnsafeURLError):
        url_check_public(value, allow_private=False, resolver=PUBLIC_DNS)


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("https://user:pass@merchant.example.com/cb", "user information"),
        ("https://merchant.example.com@127.0.0.1/cb", "user information"),
        ("https://merchant.example.com/c b", "spaces"),
        ("https://merchant.example.com/\x00", "control"),
        ("https://merchänt.example.com/cb", "non-ASCII"),
        ("https://merchant.example.com:99999/cb", "valid port"),
        ("https://merchant.example.com:abc/cb", "valid port"),
        ("https:///cb", "absolute https URL"),
        ("https://merchant.example.com\\@127.0.0.1/", "user information"),
        ("https://-bad-.example.com/", "valid host name"),
        ("https://[fe80::1%25eth0]/", "zone identifier"),
        ("https://merchant.example.com/" + "a" * 2000, "at most"),
    ],
)
def test_malformed_urls_are_rejected(url: str, reason: str) -> None:
    with pytest.raises(UnsafeURLError, match=reason):
        check(url)


# --- IPv4 ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("127.0.0.1", "loopback"),
        ("127.255.255.254", "loopback"),
        ("10.1.2.3", "private"),
        ("172.16.0.1", "private"),
        ("172.31.255.255", "private"),
        ("192.168.1.1", "private"),
        ("169.254.169.254", "link-local"),
        ("224.0.0.1", "multicast"),
        ("239.255.255.250", "multicast"),
        ("0.0.0.0", "unspecified"),  # noqa: S104 - a target under test, not a bind address
        ("100.64.0.1", "shared"),
        ("100.127.255.254", "shared"),
        ("240.0.0.1", "reserved"),
        ("255.255.255.255", "non-public|reserved"),
        ("192.0.2.10", "non-public"),
        ("198.18.0.1", "non-public"),
        ("192.0.0.8", "non-public"),
    ],
)
def test_non_public_ipv4_literals_are_rejected(address: str, kind: str) -> None:
    with pytest.raises(UnsafeURLError, match=kind):
        check(f"https://{address}/cb")


def test_just_outside_private_ranges_is_public() -> None:
    assert check("https://172.32.0.1/cb").addresses == ("172.32.0.1",)
    assert check("https://100.128.0.1/cb").addresses == ("100.128.0.1",)


@pytest.mark.parametrize(
    "host",
    [
        "2130706433",  # 127.0.0.1 as one decimal number
        "0x7f000001",  # hexadecimal
        "0x7f.0.0.1",
        "0177.0.0.1",  # octal first octet
        "017700000001",
        "127.1",  # short forms
        "127.0.1",
        "3232235777",  # 192.168.1.1
        "134744072",  # 8.8.8.8 written as a number is refused too
        "1.2.3.4.5",
        "08.8.8.8",
    ],
)
def test_non_standard_ipv4_notation_is_rejected(host: str) -> None:
    with pytest.raises(UnsafeURLError, match="non-standard notation"):
        check(f"https://{host}/cb", allow_private=True)


def test_decimal_encoded_loopback_over_http_is_rejected() -> None:
    with pytest.raises(UnsafeURLError):
        check("http://2130706433/", allow_private=True)


# --- IPv6 ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("::1", "loopback"),
        ("::", "unspecified"),
        ("fc00::1", "private"),
        ("fd12:3456:789a::1", "private"),
        ("fe80::1", "link-local"),
        ("ff02::1", "multicast"),
        ("::ffff:127.0.0.1", "IPv4-mapped"),
        ("::ffff:10.0.0.1", "IPv4-mapped"),
        ("::ffff:8.8.8.8", "IPv4-mapped"),
        ("::ffff:7f00:1", "IPv4-mapped"),
        ("64:ff9b::a00:1", "non-public"),  # NAT64 of 10.0.0.1
        ("2002:a00:1::1", "non-public"),  # 6to4 of 10.0.0.1
        ("2001:db8::1", "non-public"),  # documentation
        ("::127.0.0.1", "reserved|non-public"),  # IPv4-compatible (deprecated)
    ],
)
def test_non_public_ipv6_literals_are_rejected(address: str, kind: str) -> None:
    with pytest.raises(UnsafeURLError, match=kind):
        check(f"https://[{address}]/cb")


def test_ipv4_mapped_loopback_is_refused_even_for_development() -> None:
    with pytest.raises(UnsafeURLError, match="IPv4-mapped"):
        check("http://[::ffff:127.0.0.1]/cb", allow_private=True)


# --- names -----------------------------------------------------------------------------------


@pytest.mark.parametrize("host", ["localhost", "LOCALHOST", "api.localhost", "localhost."])
def test_localhost_names_are_rejected_without_resolving(host: str) -> None:
    def must_not_resolve(host: str, port: int) -> list[str]:
        raise AssertionError("localhost must not be resolved")

    with pytest.raises(UnsafeURLError, match="loopback"):
        check(f"https://{host}/cb", resolver=must_not_resolve)


@pytest.mark.parametrize(
    ("addresses", "kind"),
    [
        (["127.0.0.1"], "loopback"),
        (["10.0.0.7"], "private"),
        (["169.254.169.254"], "link-local"),
        (["100.64.1.1"], "shared"),
        (["::1"], "loopback"),
        (["fd00::5"], "private"),
        (["::ffff:192.168.0.1"], "IPv4-mapped"),
        (["93.184.216.34", "10.0.0.7"], "private"),  # one bad address is enough
        (["2606:2800:220:1::1", "fe80::1%eth0"], "link-local"),
    ],
)
def test_names_resolving_to_non_public_addresses_are_rejected(
    addresses: list[str], kind: str
) -> None:
    resolver = resolver_for({"rebind.example.net": addresses})
    with pytest.raises(UnsafeURLError, match=kind):
        check("https://rebind.example.net/cb", resolver=resolver)


def test_unresolvable_name_is_rejected() -> None:
    with pytest.raises(UnsafeURLError, match="could not be resolved"):
        check("https://nowhere.invalid/cb")


def test_name_resolving_to_nothing_is_rejected() -> None:
    with pytest.raises(UnsafeURLError, match="could not be resolved"):
        check("https://empty.example.com/cb", resolver=resolver_for({"empty.example.com": []}))


def test_resolver_garbage_is_rejected() -> None:
    resolver = resolver_for({"odd.example.com": ["not-an-ip"]})
    with pytest.raises(UnsafeURLError, match="could not be resolved"):
        check("https://odd.example.com/cb", resolver=resolver)


def test_resolver_receives_host_and_port() -> None:
    calls: list[tuple[str, int]] = []

    def recording(host: str, port: int) -> list[str]:
        calls.append((host, port))
        return ["93.184.216.34"]

    check("https://merchant.example.com:8443/cb", resolver=recording)
    assert calls == [("merchant.example.com", 8443)]


def test_ip_literals_are_not_resolved() -> None:
    def must_not_resolve(host: str, port: int) -> list[str]:
        raise AssertionError("IP literals must not be resolved")

    assert check("https://8.8.4.4/cb", resolver=must_not_resolve).addresses == ("8.8.4.4",)


def test_system_resolver_is_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ssrf, "system_resolver", resolver_for({"svc.example.org": ["10.9.9.9"]}))
    with pytest.raises(UnsafeURLError, match="private"):
        url_check_public("https://svc.example.org/cb", allow_private=False)


def test_system_resolver_reads_getaddrinfo(monkeypatch: pytest.MonkeyPatch) -> None:
    def fake_getaddrinfo(host, port, *args, **kwargs):  # type: ignore[no-untyped-def]
        assert (host, port) == ("svc.example.org", 443)
        return [
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.216.34", 443)),
            (socket.AF_INET6, socket.SOCK_STREAM, 6, "", ("2606:2800:220:1::1", 443, 0, 0)),
        ]

    monkeypatch.setattr(socket, "getaddrinfo", fake_getaddrinfo)
    assert ssrf.system_resolver("svc.example.org", 443) == ["93.184.216.34", "2606:2800:220:1::1"]


# --- CALLBACK_URL_ALLOW_PRIVATE ----------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:9000/cb",
        "http://localhost:8000/cb",
        "https://localhost/cb",
        "http://10.0.0.2/cb",
        "http://192.168.1.20/cb",
        "http://[::1]:9000/cb",
        "http://[fd00::2]/cb",
    ],
)
def test_allow_private_accepts_loopback_and_private_over_http(url: str) -> None:
    assert check(url, allow_private=True).addresses


def test_allow_private_accepts_a_name_resolving_to_private_over_http() -> None:
    resolver = resolver_for({"dev.internal": ["192.168.5.5"]})
    assert check("http://dev.internal/cb", allow_private=True, resolver=resolver).addresses == (
        "192.168.5.5",
    )


def test_allow_private_still_needs_https_for_public_hosts() -> None:
    with pytest.raises(UnsafeURLError, match="https"):
        check("http://merchant.example.com/cb", allow_private=True)
    with pytest.raises(UnsafeURLError, match="https"):
        check("http://8.8.8.8/cb", allow_private=True)


UNSPECIFIED_IPV4 = "0.0.0.0"  # noqa: S104 - a target under test, not a bind address


@pytest.mark.parametrize(
    "address",
    ["169.254.169.254", "224.0.0.1", UNSPECIFIED_IPV4, "100.64.0.1", "[fe80::1]", "240.0.0.1"],
)
def test_allow_private_still_refuses_metadata_multicast_and_reserved(address: str) -> None:
    with pytest.raises(UnsafeURLError):
        check(f"http://{address}/cb", allow_private=True)


def test_allow_private_defaults_to_the_setting(settings) -> None:  # type: ignore[no-untyped-def]
    settings.CALLBACK_URL_ALLOW_PRIVATE = True
    assert url_check_public("http://127.0.0.1:8000/cb").addresses == ("127.0.0.1",)
    settings.CALLBACK_URL_ALLOW_PRIVATE = False
    with pytest.raises(UnsafeURLError):
        url_check_public("http://127.0.0.1:8000/cb")
