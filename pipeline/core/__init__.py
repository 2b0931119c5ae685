"""The kernel: typed records, the all_metadata.json model, every tree and file name, seeding, hashing,
JSON IO, the environment fingerprint, metrics, time formats, licences, cache paths and SQLite access.

Every stage and the application import it; it imports nothing else of the project, so the
whole dependency graph points down to here (README, "Layout"; lint-imports checks it).
"""
