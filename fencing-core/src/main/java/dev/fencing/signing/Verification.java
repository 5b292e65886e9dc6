package dev.fencing.signing;

import dev.fencing.token.FencingToken;

/**
 * The result of verifying one token's signature with a {@link TokenVerifier}: {@link #VALID}, or why not. Every
 * result but {@link #VALID} makes the token forged; {@link #reason(FencingToken)} says why in words that contain no
 * key material and no signature.
 */
public enum Verification {

    /** Signed with an active key of the ring, and the signature matches. */
    VALID,

    /** The token carries no signature; a verifier fails closed on it. */
    UNSIGNED,

    /** Signed with a key id the ring does not know. */
    UNKNOWN_KEY,

    /** Signed with a key the ring has retired. */
    RETIRED_KEY,

    /** Signed with a known key, but the signature does not match the token (altered, or made for another token). */
    BAD_SIGNATURE;

    /** Whether the token may go on to the fence store. */
    public boolean valid() {
        return this == VALID;
    }

    /** Why {@code token} failed, for messages and logs; names the key id at most. */
    public String reason(FencingToken token) {
        String keyId = token.isSigned() ? token.signature().keyId() : null;
        return switch (this) {
            case VALID -> "the signature is valid";
            case UNSIGNED -> "the token is unsigned and this fence requires signed tokens (one acquired from a "
                    + "TokenIssuer that does not sign: code that acquires from the issuer itself must sign, through "
                    + "new SigningTokenIssuer(issuer, signer))";
            case UNKNOWN_KEY -> "it is signed with key '" + keyId + "', which this fence does not know";
            case RETIRED_KEY -> "it is signed with key '" + keyId + "', which is retired";
            case BAD_SIGNATURE -> "its signature (key '" + keyId + "') does not match its resource, value and holder";
        };
    }
}
