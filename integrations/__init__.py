"""Clients for third-party vendors, one package per vendor: URL, authentication, timeouts, the
raw exchange kept for audit and signature checks. Domain apps reach vendors through their
provider adapters, which map a client's answers onto their own dataclasses."""
