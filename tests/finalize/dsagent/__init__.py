"""Tests of finalize/dsagent."""
