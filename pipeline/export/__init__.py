"""Training-data export of a task tree: families and the contamination-safe split (families.py), the
writer and dataset card (export.py), SFT solutions (sft.py). Rewards live in pipeline/reward.py."""
