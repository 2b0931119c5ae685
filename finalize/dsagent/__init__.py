"""DSAgentBench desktop configs with validated evaluators, written into a built DARE tree (build.write_dsagent)."""
