package dev.fencing.token;

import java.security.MessageDigest;
import java.util.Arrays;
import java.util.Base64;

/**
 * The signature part of a signed {@link FencingToken}: the id of the key that signed it and the signature bytes.
 * Immutable; it says nothing about validity on its own (a {@code dev.fencing.signing.TokenVerifier} decides that).
 * Text form {@code keyId.signature}, the signature in Base64url without padding; {@link #parse(CharSequence)} accepts
 * exactly what {@link #toText()} produces.
 *
 * <p>Key ids are 1 to {@link #MAX_KEY_ID_LENGTH} characters of {@code A-Z a-z 0-9 _ -}; signatures are 1 to
 * {@link #MAX_SIGNATURE_BYTES} bytes.
 */
public final class TokenSignature {

    /** Longest key id, in chars. */
    public static final int MAX_KEY_ID_LENGTH = 64;

    /** Longest signature, in bytes (an Ed25519 signature is 64, an HMAC-SHA256 one 32). */
    public static final int MAX_SIGNATURE_BYTES = 64;

    /** Longest text form: key id, the dot and the Base64url of the longest signature. */
    public static final int MAX_TEXT_LENGTH = MAX_KEY_ID_LENGTH + 1 + (MAX_SIGNATURE_BYTES * 4 + 2) / 3;

    private static final Base64.Encoder ENCODER = Base64.getUrlEncoder().withoutPadding();

    private final String keyId;
    private final byte[] bytes;

    private TokenSignature(String keyId, byte[] bytes) {
        this.keyId = keyId;
        this.bytes = bytes;
    }

    /**
     * A signature made with key {@code keyId}.
     *
     * @throws IllegalArgumentException when the key id or the signature length is out of bounds
     */
    public static TokenSignature of(String keyId, byte[] signature) {
        checkKeyId(keyId);
        if (signature == null || signature.length == 0 || signature.length > MAX_SIGNATURE_BYTES) {
            throw new IllegalArgumentException("Token signature must be 1 to " + MAX_SIGNATURE_BYTES + " bytes, was "
                    + (signature == null ? "null" : signature.length + " bytes"));
        }
        return new TokenSignature(keyId, signature.clone());
    }

    /**
     * Checks a key id: 1 to {@link #MAX_KEY_ID_LENGTH} characters of {@code A-Z a-z 0-9 _ -}.
     *
     * @throws IllegalArgumentException naming the key id and what is wrong with it
     */
    public static String checkKeyId(String keyId) {
        if (keyId == null || keyId.isEmpty()) {
            throw new IllegalArgumentException("Signing key id must not be empty");
        }
        if (keyId.length() > MAX_KEY_ID_LENGTH) {
            throw new IllegalArgumentException("Signing key id '" + keyId.substring(0, MAX_KEY_ID_LENGTH) + "...' is "
                    + keyId.length() + " chars long, longer than the " + MAX_KEY_ID_LENGTH + " allowed");
        }
        for (int i = 0; i < keyId.length(); i++) {
            if (!isKeyIdChar(keyId.charAt(i))) {
                throw new IllegalArgumentException("Signing key id '" + keyId + "' has a character other than "
                        + "A-Z a-z 0-9 _ - at index " + i);
            }
        }
        return keyId;
    }

    /** The id of the key that made this signature. */
    public String keyId() {
        return keyId;
    }

    /** A copy of the signature bytes. */
    public byte[] bytes() {
        return bytes.clone();
    }

    /** Whether the signature bytes equal {@code expected}, in time independent of where they differ. */
    public boolean matches(byte[] expected) {
        return MessageDigest.isEqual(bytes, expected);
    }

    /** {@code keyId.signature}, the signature in Base64url without padding. */
    public String toText() {
        return keyId + '.' + ENCODER.encodeToString(bytes);
    }

    /**
     * Parses the text form strictly: the Base64url must be canonical (no padding, no stray bits), so that one
     * signature has exactly one text.
     *
     * @throws TokenFormatException saying what is wrong (never echoing the signature)
     */
    public static TokenSignature parse(CharSequence text) {
        if (text == null) {
            throw new TokenFormatException("Token signature text is null");
        }
        if (text.length() > MAX_TEXT_LENGTH) {
            throw new TokenFormatException("Token signature is " + text.length() + " chars long, longer than the "
                    + MAX_TEXT_LENGTH + " allowed");
        }
        String s = text.toString();
        int dot = s.indexOf('.');
        if (dot < 0) {
            throw new TokenFormatException("Token signature has no '.' between key id and signature");
        }
        String keyId = s.substring(0, dot);
        try {
            checkKeyId(keyId);
        } catch (IllegalArgumentException e) {
            throw new TokenFormatException("Malformed token signature: " + e.getMessage(), e);
        }
        String encoded = s.substring(dot + 1);
        for (int i = 0; i < encoded.length(); i++) {
            if (!isKeyIdChar(encoded.charAt(i))) { // the Base64url alphabet is the key id alphabet
                throw new TokenFormatException("Token signature of key '" + keyId + "' has a character outside the "
                        + "Base64url alphabet at index " + (dot + 1 + i) + " of the signature part");
            }
        }
        byte[] bytes;
        try {
            bytes = Base64.getUrlDecoder().decode(encoded);
        } catch (IllegalArgumentException e) {
            throw new TokenFormatException("Token signature of key '" + keyId + "' is not valid Base64url");
        }
        if (bytes.length == 0 || bytes.length > MAX_SIGNATURE_BYTES) {
            throw new TokenFormatException("Token signature of key '" + keyId + "' is " + bytes.length
                    + " bytes, expected 1 to " + MAX_SIGNATURE_BYTES);
        }
        if (!ENCODER.encodeToString(bytes).equals(encoded)) {
            throw new TokenFormatException("Token signature of key '" + keyId + "' is not canonical Base64url "
                    + "(unused bits set)");
        }
        return new TokenSignature(keyId, bytes);
    }

    private static boolean isKeyIdChar(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof TokenSignature other && keyId.equals(other.keyId) && Arrays.equals(bytes, other.bytes);
    }

    @Override
    public int hashCode() {
        return 31 * keyId.hashCode() + Arrays.hashCode(bytes);
    }

    /**
     * The key id only, {@code keyId.}{@code \u2026}, as {@link FencingToken#toString()} shows it: with the token's
     * other parts the signature is a credential, so it stays out of logs. {@link #toText()} gives it whole.
     */
    @Override
    public String toString() {
        return keyId + ".\u2026";
    }
}
