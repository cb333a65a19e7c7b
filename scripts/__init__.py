"""Ops scripts run as commands (`python scripts/<name>.py`); importable as ``scripts.<name>``."""
