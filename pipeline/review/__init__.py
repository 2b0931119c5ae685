"""Tree review: the application commands that read a built tree (score, verify, diff, reports) rather than build it."""
