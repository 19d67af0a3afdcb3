"""Online re-ranking: the live pool of candidates refitted as runs arrive, the anomaly rule and the
candidate variants by machine load."""
