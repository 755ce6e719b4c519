"""Time-series reasoning: anomaly detection with tools (synthetic) and UCR classification."""
