"""Reading the audit log: its API and its CSV, in words. A package of its own above auth/ (the guard) and reports/
(the CSV writer), which import each other's layers the other way."""
