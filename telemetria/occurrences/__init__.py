"""Fiscalização (issue 18): occurrences found in the fixes by fix time, live alerts, and the administrative process
from detection through review, the Termo de Comunicação, the contractor's defence and the decision to the fine."""
