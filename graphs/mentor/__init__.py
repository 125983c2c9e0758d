"""The four-agent mentor: error_classifier -> root_cause_analyst -> hint_composer <-> leakage_checker."""
