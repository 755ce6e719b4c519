"""The trainer: verl's loss, the learner, weight sync and recipes (``envhub-train``)."""
