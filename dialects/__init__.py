"""The dialects of xrelay: relay (and, later, qnn)."""
