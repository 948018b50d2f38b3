"""Daily seals (issue 19): each closed vehicle-day's fixes sealed by SHA-256, chained, with daily Merkle roots."""
