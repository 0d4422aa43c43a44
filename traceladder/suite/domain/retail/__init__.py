"""The frozen retail domain: 13 tools, users U101-U103, orders W441-W448, products P201-P210."""

from traceladder.suite.domain.retail.domain import RETAIL_DATA_FILES, load_retail_domain

__all__ = ["RETAIL_DATA_FILES", "load_retail_domain"]
