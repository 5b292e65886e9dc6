package dev.fencing.boot.autoconfigure;

import org.apache.commons.logging.LogFactory;

import java.util.List;

/**
 * The startup warning of a token filter that accepts {@code Fencing-Token} headers without a verifier, on either web
 * stack: any caller that reaches its paths can present any token, and one far above max_seen locks its resource out
 * of every real holder. A warning, not a failure: the paths were named on purpose, for trusted callers.
 */
final class UnsignedHeaders {

    private UnsignedHeaders() {
    }

    /** @param bounded whether the stack's store can bound one advance ({@code fencing.store.jdbc.max-advance}) */
    static void warn(String property, List<String> patterns, boolean bounded) {
        LogFactory.getLog(UnsignedHeaders.class).warn("fencing: Fencing-Token headers are accepted on "
                + String.join(", ", patterns) + " (" + property + ") unsigned: any caller that reaches those paths "
                + "can present any token, and one far above max_seen would lock its resource out of every real "
                + "holder (its next token refused as stale" + (bounded ? "; fencing.store.jdbc.max-advance bounds "
                + "one step, not a walk of several" : "") + "). Keep the paths to trusted callers, or sign the "
                + "tokens (fencing.signing.*, docs/signing.md)");
    }
}
