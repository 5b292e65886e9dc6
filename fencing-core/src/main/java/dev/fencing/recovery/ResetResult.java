package dev.fencing.recovery;

/**
 * What a {@link MaxSeenReset} did: the resource, max_seen before and after, the issuer's highest token when one was
 * consulted (else -1), and who asked.
 */
public record ResetResult(String resource, long previous, long current, long highestIssued, String actor) {
}
