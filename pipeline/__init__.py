"""The shared core of daregen: typed records, file-name constants, seeding, hashing, IO and the CLI."""
