"""Loopback servers that speak the Kaggle and OpenML HTTP APIs, for the real clients to talk to."""
