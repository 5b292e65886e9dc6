package dev.fencing.signing;

import dev.fencing.token.TokenSignature;

import java.security.PublicKey;

/**
 * One key a {@link KeyRing} verifies with: its id, its scheme and its verifying material, an HMAC secret or an
 * Ed25519 public key. It has no way to sign: an Ed25519 verification key holds no private key at all. Immutable;
 * {@code toString} never shows key material.
 */
public final class VerificationKey {

    private final String keyId;
    private final SignatureScheme scheme;
    private final MacPool mac;
    private final PublicKey publicKey;

    private VerificationKey(String keyId, SignatureScheme scheme, MacPool mac, PublicKey publicKey) {
        this.keyId = keyId;
        this.scheme = scheme;
        this.mac = mac;
        this.publicKey = publicKey;
    }

    /**
     * A key verifying HMAC-SHA256 signatures made with {@code secret} (at least 32 bytes).
     *
     * @throws dev.fencing.FencingConfigurationException when the key id is malformed or the secret too short
     */
    public static VerificationKey hmac(String keyId, byte[] secret) {
        return new VerificationKey(KeyMaterial.keyId(keyId), SignatureScheme.HMAC_SHA256,
                new MacPool(KeyMaterial.checkHmacSecret(keyId, secret)), null);
    }

    /**
     * A key verifying Ed25519 signatures with {@code publicKey} (see {@link KeyMaterial#ed25519PublicKey}).
     *
     * @throws dev.fencing.FencingConfigurationException when the key id is malformed or the key is not Ed25519
     */
    public static VerificationKey ed25519(String keyId, PublicKey publicKey) {
        KeyMaterial.keyId(keyId);
        Ed25519.requireEd25519(keyId, "public key", publicKey);
        return new VerificationKey(keyId, SignatureScheme.ED25519, null, publicKey);
    }

    public String keyId() {
        return keyId;
    }

    public SignatureScheme scheme() {
        return scheme;
    }

    /** Whether {@code signature} is this key's signature over {@code content}. */
    boolean verifies(byte[] content, TokenSignature signature) {
        if (mac != null) {
            return signature.matches(mac.mac(content)); // constant time; a length mismatch is simply false
        }
        byte[] bytes = signature.bytes();
        return bytes.length == scheme.signatureLength() && Ed25519.verify(publicKey, content, bytes);
    }

    @Override
    public String toString() {
        return "VerificationKey[" + keyId + ", " + scheme.configName() + "]";
    }
}
