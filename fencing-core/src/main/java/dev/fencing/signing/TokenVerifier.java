package dev.fencing.signing;

import dev.fencing.rule.ForgedTokenException;
import dev.fencing.token.FencingToken;
import dev.fencing.token.TokenSignature;

import java.util.Objects;
import java.util.concurrent.atomic.LongAdder;

/**
 * The resource side: verifies a token's signature with a {@link KeyRing} before the token is compared with max_seen.
 * A token is valid only when signed with an active key of the ring over exactly its resource, value and holder;
 * unsigned tokens fail (fail closed). It holds verifying material only, so it cannot sign. Thread-safe.
 *
 * <p>Valid results are cached per token instance: a token bound once and checked by many fenced calls is verified
 * once. The cache is a fixed array of {@code cacheSize} slots indexed by the token's identity hash; a hit is the very
 * same instance (tokens are immutable, so it cannot have changed), a collision only costs a second verification.
 * It never grows and holds at most {@code cacheSize} tokens.
 */
public final class TokenVerifier {

    /** Slots of the verification cache when none is given. */
    public static final int DEFAULT_CACHE_SIZE = 1024;

    private final KeyRing ring;
    private final FencingToken[] verified;
    private final int mask;
    private final LongAdder verifications = new LongAdder();

    /** A verifier with {@link #DEFAULT_CACHE_SIZE} cache slots. */
    public TokenVerifier(KeyRing ring) {
        this(ring, DEFAULT_CACHE_SIZE);
    }

    /**
     * @param ring      the keys to verify with
     * @param cacheSize slots of the per-instance cache, rounded up to a power of two; 0 for no cache (every check
     *                  verifies)
     * @throws IllegalArgumentException when {@code cacheSize} is negative or above 2^20
     */
    public TokenVerifier(KeyRing ring, int cacheSize) {
        this.ring = Objects.requireNonNull(ring, "ring");
        if (cacheSize < 0 || cacheSize > 1 << 20) {
            throw new IllegalArgumentException("cacheSize must be between 0 and " + (1 << 20) + ", was " + cacheSize);
        }
        int slots = cacheSize <= 1 ? cacheSize : Integer.highestOneBit(cacheSize - 1) << 1;
        this.verified = slots == 0 ? null : new FencingToken[slots];
        this.mask = slots - 1;
    }

    /** Verifies {@code token}'s signature; a {@link Verification#VALID} result is cached for this instance. */
    public Verification verify(FencingToken token) {
        FencingToken[] cache = verified;
        int slot = 0;
        if (cache != null) {
            slot = System.identityHashCode(token) & mask;
            if (cache[slot] == token) {
                return Verification.VALID;
            }
        }
        Verification result = verifyNow(token);
        if (result == Verification.VALID && cache != null) {
            // a racy write is harmless: a reader sees this token, another valid one, or an older entry
            cache[slot] = token;
        }
        return result;
    }

    /**
     * Verifies {@code token} and throws when it is forged: for a caller that has the resource and the operation at
     * hand, such as a servlet filter.
     *
     * @param resource  the effective resource the token is presented for, for the message
     * @param operation what the token was presented to (a method, a request), for the message; may be {@code null}
     * @return {@code token}, valid
     * @throws ForgedTokenException naming the resource, the operation and why (never key material)
     */
    public FencingToken requireValid(FencingToken token, String resource, String operation) {
        Verification result = verify(token);
        if (!result.valid()) {
            throw new ForgedTokenException(resource, token, result.reason(token), operation);
        }
        return token;
    }

    /** The keys this verifier accepts. */
    public KeyRing keyRing() {
        return ring;
    }

    /** How many verifications ran the cryptography (cache misses): for tests of the cache. */
    long verificationsRun() {
        return verifications.sum();
    }

    private Verification verifyNow(FencingToken token) {
        verifications.increment();
        TokenSignature signature = token.signature();
        if (signature == null) {
            return Verification.UNSIGNED;
        }
        VerificationKey key = ring.find(signature.keyId());
        if (key == null) {
            return ring.isRetired(signature.keyId()) ? Verification.RETIRED_KEY : Verification.UNKNOWN_KEY;
        }
        byte[] content = SignedContent.of(key.scheme(), key.keyId(), token);
        return key.verifies(content, signature) ? Verification.VALID : Verification.BAD_SIGNATURE;
    }

    @Override
    public String toString() {
        return "TokenVerifier[" + ring + (verified == null ? ", no cache" : ", cache " + verified.length) + "]";
    }
}
