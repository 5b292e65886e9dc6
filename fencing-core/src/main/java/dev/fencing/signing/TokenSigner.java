package dev.fencing.signing;

import dev.fencing.token.FencingToken;
import dev.fencing.token.TokenSignature;

import java.security.PrivateKey;
import java.util.Objects;

/**
 * The issuer side: signs tokens with one key, the current one of the key ring, over key id, resource, value and
 * holder. Only a signer holds signing material (an HMAC secret or an Ed25519 private key); resources that must not
 * mint tokens get a {@link TokenVerifier} instead. Thread-safe; {@code toString} never shows key material.
 */
public final class TokenSigner {

    private final String keyId;
    private final SignatureScheme scheme;
    private final MacPool mac;
    private final PrivateKey privateKey;

    private TokenSigner(String keyId, SignatureScheme scheme, MacPool mac, PrivateKey privateKey) {
        this.keyId = keyId;
        this.scheme = scheme;
        this.mac = mac;
        this.privateKey = privateKey;
    }

    /**
     * A signer using HMAC-SHA256 with {@code secret} (at least 32 bytes; see {@link KeyMaterial#hmacSecret}).
     *
     * @throws dev.fencing.FencingConfigurationException when the key id is malformed or the secret too short
     */
    public static TokenSigner hmac(String keyId, byte[] secret) {
        return new TokenSigner(KeyMaterial.keyId(keyId), SignatureScheme.HMAC_SHA256,
                new MacPool(KeyMaterial.checkHmacSecret(keyId, secret)), null);
    }

    /**
     * A signer using Ed25519 with {@code privateKey} (see {@link KeyMaterial#ed25519PrivateKey}).
     *
     * @throws dev.fencing.FencingConfigurationException when the key id is malformed or the key is not Ed25519
     */
    public static TokenSigner ed25519(String keyId, PrivateKey privateKey) {
        KeyMaterial.keyId(keyId);
        Ed25519.requireEd25519(keyId, "private key", privateKey);
        return new TokenSigner(keyId, SignatureScheme.ED25519, null, privateKey);
    }

    /**
     * {@code token} signed with this signer's key (any signature it had is replaced).
     *
     * @throws NullPointerException when {@code token} is null
     */
    public FencingToken sign(FencingToken token) {
        Objects.requireNonNull(token, "token");
        byte[] content = SignedContent.of(scheme, keyId, token);
        byte[] signature = mac != null ? mac.mac(content) : Ed25519.sign(privateKey, content);
        return token.withSignature(TokenSignature.of(keyId, signature));
    }

    /** The id of the key this signer signs with. */
    public String keyId() {
        return keyId;
    }

    public SignatureScheme scheme() {
        return scheme;
    }

    @Override
    public String toString() {
        return "TokenSigner[" + keyId + ", " + scheme.configName() + "]";
    }
}
