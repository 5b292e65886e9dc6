package dev.fencing.signing;

import dev.fencing.FencingConfigurationException;

import java.util.Locale;

/**
 * The two ways a token can be signed, both with the JDK's own providers. {@link #HMAC_SHA256}: one shared secret
 * signs and verifies (fastest; every resource that can verify can also mint tokens). {@link #ED25519}: the issuer
 * holds the private key and resources only the public key, so a compromised resource cannot mint tokens.
 */
public enum SignatureScheme {

    /** HMAC with SHA-256 ({@code HmacSHA256}), a secret of at least 256 bits; 32-byte signatures. */
    HMAC_SHA256("hmac-sha256", "HmacSHA256", 32),

    /** Ed25519 ({@code Ed25519}, RFC 8032) signatures of 64 bytes. */
    ED25519("ed25519", "Ed25519", 64);

    private final String configName;
    private final String algorithm;
    private final int signatureLength;

    SignatureScheme(String configName, String algorithm, int signatureLength) {
        this.configName = configName;
        this.algorithm = algorithm;
        this.signatureLength = signatureLength;
    }

    /** The name used in configuration: {@code hmac-sha256} or {@code ed25519}. */
    public String configName() {
        return configName;
    }

    /** The JCA algorithm name. */
    public String algorithm() {
        return algorithm;
    }

    /** The length of a signature, in bytes. */
    public int signatureLength() {
        return signatureLength;
    }

    /**
     * The scheme named {@code name} ({@link #configName()}, case-insensitive; {@code _} for {@code -} allowed).
     *
     * @throws FencingConfigurationException naming the value and the choices
     */
    public static SignatureScheme fromName(String name) {
        if (name != null) {
            String normalized = name.strip().toLowerCase(Locale.ROOT).replace('_', '-');
            for (SignatureScheme scheme : values()) {
                if (scheme.configName.equals(normalized)) {
                    return scheme;
                }
            }
        }
        throw new FencingConfigurationException("Unknown token signature scheme '" + name
                + "'; expected hmac-sha256 or ed25519");
    }
}
