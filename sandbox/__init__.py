"""Run one argv in isolation and report what happened."""
