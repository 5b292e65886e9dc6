package dev.fencing.boot.autoconfigure;

import dev.fencing.FencingConfigurationException;
import dev.fencing.signing.KeyMaterial;
import dev.fencing.signing.KeyRing;
import dev.fencing.signing.SignatureScheme;
import dev.fencing.signing.TokenSigner;
import dev.fencing.signing.TokenVerifier;
import dev.fencing.signing.VerificationKey;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Builds the {@link TokenVerifier} and {@link TokenSigner} from the {@code fencing.signing.*} properties, checking
 * them first: every error is a {@link FencingConfigurationException} that names the property at fault and what to
 * do, never the key material (the core's key parsers never put it in their messages either).
 */
final class SigningKeys {

    static final String PREFIX = "fencing.signing";

    private SigningKeys() {
    }

    /** A verifier over every key that is not retired, the retired ids refused by name. */
    static TokenVerifier verifier(FencingProperties.Signing signing) {
        SignatureScheme scheme = check(signing);
        List<VerificationKey> active = new ArrayList<>();
        List<String> retired = new ArrayList<>();
        for (Map.Entry<String, FencingProperties.Key> entry : signing.getKeys().entrySet()) {
            String id = entry.getKey();
            FencingProperties.Key key = entry.getValue();
            if (key.isRetired()) {
                retired.add(id);
            } else {
                boolean hmac = scheme == SignatureScheme.HMAC_SHA256;
                active.add(named(property(id, hmac ? "secret" : "public-key"),
                        () -> KeyMaterial.verificationKey(scheme, id, hmac ? key.getSecret() : key.getPublicKey())));
            }
        }
        if (active.isEmpty()) {
            throw new FencingConfigurationException(PREFIX + ".keys has no key that is not retired, so every token "
                    + "would be refused: keep at least one key without retired=true");
        }
        KeyRing ring = KeyRing.of(active);
        return new TokenVerifier(retired.isEmpty() ? ring : ring.retire(retired.toArray(String[]::new)));
    }

    /**
     * The signer of the current key, or {@code null} when this application does not sign (no current key id, or
     * the current key has no secret or private key here).
     */
    static TokenSigner signer(FencingProperties.Signing signing) {
        SignatureScheme scheme = check(signing);
        String id = signing.getCurrentKeyId();
        if (!signs(signing)) {
            return null;
        }
        FencingProperties.Key key = signing.getKeys().get(id);
        boolean hmac = scheme == SignatureScheme.HMAC_SHA256;
        return named(property(id, hmac ? "secret" : "private-key"),
                () -> KeyMaterial.signer(scheme, id, hmac ? key.getSecret() : key.getPrivateKey()));
    }

    /** Whether the properties make this application sign: a current key id whose key has a secret or private key. */
    static boolean signs(FencingProperties.Signing signing) {
        String id = signing.getCurrentKeyId();
        FencingProperties.Key key = id == null ? null : signing.getKeys().get(id);
        return key != null && (present(key.getSecret()) || present(key.getPrivateKey()));
    }

    /** Checks what does not depend on parsing key material; returns the scheme. */
    private static SignatureScheme check(FencingProperties.Signing signing) {
        SignatureScheme scheme = signing.getScheme();
        if (scheme == null) {
            throw new FencingConfigurationException(PREFIX + ".scheme is not set but " + (signing.getKeys().isEmpty()
                    ? PREFIX + ".current-key-id is ('" + signing.getCurrentKeyId() + "'), with no key: signing asked "
                    + "for and nothing to sign with (keys in a profile that is not active?); set " + PREFIX
                    + ".scheme to hmac-sha256 or ed25519 and the keys, or remove " + PREFIX + ".current-key-id"
                    : PREFIX + ".keys is: set it to hmac-sha256 or ed25519"));
        }
        if (signing.getKeys().isEmpty()) {
            throw new FencingConfigurationException(PREFIX + ".scheme is set but " + PREFIX + ".keys has no key: add "
                    + PREFIX + ".keys.ID." + (scheme == SignatureScheme.HMAC_SHA256 ? "secret" : "public-key"));
        }
        Map<String, String> byLowerCase = new HashMap<>();
        for (String id : signing.getKeys().keySet()) {
            String other = byLowerCase.putIfAbsent(id.toLowerCase(Locale.ROOT), id);
            if (other != null) {
                // an environment variable (FENCING_SIGNING_KEYS_KEY1_RETIRED) binds the id in lower case: retiring
                // "key1" left "Key1" verifying
                throw new FencingConfigurationException(PREFIX + ".keys has the ids '" + other + "' and '" + id
                        + "', which differ only in case: they are two keys, so what is set under one (retired=true, "
                        + "an environment variable's id is lower case) does not apply to the other; spell the key id "
                        + "the same everywhere");
            }
        }
        boolean privateKey = false;
        for (Map.Entry<String, FencingProperties.Key> entry : signing.getKeys().entrySet()) {
            FencingProperties.Key key = entry.getValue();
            String other = scheme == SignatureScheme.HMAC_SHA256
                    ? (present(key.getPublicKey()) ? "public-key" : present(key.getPrivateKey()) ? "private-key" : null)
                    : (present(key.getSecret()) ? "secret" : null);
            if (other != null) {
                throw new FencingConfigurationException(property(entry.getKey(), other) + " is set, but it belongs "
                        + "to the other scheme than " + PREFIX + ".scheme=" + scheme.configName() + ": "
                        + (scheme == SignatureScheme.HMAC_SHA256 ? "an hmac-sha256 key has a secret only"
                        : "an ed25519 key has a public-key (and, on issuers, a private-key)"));
            }
            privateKey |= present(key.getPrivateKey());
        }
        String current = signing.getCurrentKeyId();
        if (current == null || current.isBlank()) {
            if (privateKey) {
                throw new FencingConfigurationException("An Ed25519 private-key is set under " + PREFIX + ".keys but "
                        + PREFIX + ".current-key-id is not: set it to the id of the key this issuer signs with");
            }
            return scheme;
        }
        FencingProperties.Key key = signing.getKeys().get(current);
        if (key == null) {
            throw new FencingConfigurationException(PREFIX + ".current-key-id is '" + current + "', which is not "
                    + "one of " + PREFIX + ".keys " + signing.getKeys().keySet());
        }
        if (key.isRetired()) {
            throw new FencingConfigurationException(PREFIX + ".current-key-id is '" + current + "', which is retired ("
                    + property(current, "retired") + "=true): issuers must sign with an active key, so switch "
                    + "current-key-id to the new key before retiring the old one");
        }
        return scheme;
    }

    static String property(String keyId, String name) {
        return PREFIX + ".keys." + keyId + "." + name;
    }

    private static boolean present(String value) {
        return value != null && !value.isBlank();
    }

    /** Runs {@code build}, prefixing a configuration error with the property it came from. */
    private static <T> T named(String property, Supplier<T> build) {
        try {
            return build.get();
        } catch (FencingConfigurationException e) {
            throw new FencingConfigurationException(property + ": " + e.getMessage(), e);
        }
    }
}
