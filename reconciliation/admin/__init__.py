"""Back office for reconciliation: import a statement, work its exceptions, the dashboard.

* ``statement_imports``: the imports (``ReconciliationRun``): import, void, the dashboard's page
  (``admin/reconciliation/reconciliationrun/dashboard/``).
* ``lines``: the lines and exceptions (``ReconciliationItem``): clear, re-check, propose a
  resolution.
* ``forms``: their forms, list filters and confirmation texts.

Every import, void, clearing, re-check and proposal writes an audit record (in the services).
"""

from reconciliation.admin.lines import ReconciliationItemAdmin
from reconciliation.admin.statement_imports import ReconciliationRunAdmin

__all__ = ["ReconciliationItemAdmin", "ReconciliationRunAdmin"]
