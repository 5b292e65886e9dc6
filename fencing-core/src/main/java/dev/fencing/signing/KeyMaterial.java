package dev.fencing.signing;

import dev.fencing.FencingConfigurationException;
import dev.fencing.token.TokenSignature;

import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.spec.PKCS8EncodedKeySpec;
import java.security.spec.X509EncodedKeySpec;
import java.util.Base64;
import java.util.HexFormat;

/**
 * Reads key material from configuration text: an HMAC secret in Base64, Ed25519 keys as PEM or Base64 (X.509
 * SubjectPublicKeyInfo, PKCS#8, or the raw 32-byte key). Errors are {@link FencingConfigurationException}s naming the
 * key id and what is wrong; they never contain the key text, any of its bytes, or a provider message that might.
 */
public final class KeyMaterial {

    /** Shortest HMAC secret accepted, in bytes: 256 bits, the output size of SHA-256. */
    public static final int MIN_HMAC_SECRET_BYTES = 32;

    private static final byte[] ED25519_SPKI_PREFIX = HexFormat.of().parseHex("302a300506032b6570032100");
    private static final byte[] ED25519_PKCS8_PREFIX = HexFormat.of().parseHex("302e020100300506032b657004220420");

    private KeyMaterial() {
    }

    /**
     * The HMAC secret in {@code base64} (standard or URL alphabet, padding and whitespace allowed).
     *
     * @throws FencingConfigurationException when it is missing, not Base64, or shorter than
     *                                       {@link #MIN_HMAC_SECRET_BYTES}
     */
    public static byte[] hmacSecret(String keyId, String base64) {
        return checkHmacSecret(keyId, decode(keyId, "HMAC secret", base64));
    }

    /**
     * The Ed25519 public key in {@code text}: a {@code -----BEGIN PUBLIC KEY-----} PEM block, or the Base64 of its DER
     * (X.509 SubjectPublicKeyInfo), or the Base64 of the raw 32-byte key.
     *
     * @throws FencingConfigurationException when it is missing, malformed, a private key, or not Ed25519
     */
    public static PublicKey ed25519PublicKey(String keyId, String text) {
        byte[] der = decodePem(keyId, "Ed25519 public key", text, "PUBLIC KEY");
        if (der.length == 32) {
            der = concat(ED25519_SPKI_PREFIX, der);
        }
        try {
            return KeyFactory.getInstance("Ed25519").generatePublic(new X509EncodedKeySpec(der));
        } catch (GeneralSecurityException | RuntimeException e) {
            throw new FencingConfigurationException("Ed25519 public key of signing key '" + keyId + "' is not an "
                    + "Ed25519 X.509 public key (" + der.length + " bytes decoded); expected a PEM 'PUBLIC KEY' block, "
                    + "its Base64, or the Base64 of the raw 32-byte key");
        }
    }

    /**
     * The Ed25519 private key in {@code text}: a {@code -----BEGIN PRIVATE KEY-----} PEM block, or the Base64 of its
     * DER (PKCS#8), or the Base64 of the raw 32-byte seed.
     *
     * @throws FencingConfigurationException when it is missing, malformed, a public key, or not Ed25519
     */
    public static PrivateKey ed25519PrivateKey(String keyId, String text) {
        byte[] der = decodePem(keyId, "Ed25519 private key", text, "PRIVATE KEY");
        if (der.length == 32) {
            der = concat(ED25519_PKCS8_PREFIX, der);
        }
        try {
            return KeyFactory.getInstance("Ed25519").generatePrivate(new PKCS8EncodedKeySpec(der));
        } catch (GeneralSecurityException | RuntimeException e) {
            throw new FencingConfigurationException("Ed25519 private key of signing key '" + keyId + "' is not an "
                    + "Ed25519 PKCS#8 private key (" + der.length + " bytes decoded); expected a PEM 'PRIVATE KEY' "
                    + "block, its Base64, or the Base64 of the raw 32-byte key");
        }
    }

    /**
     * The key a resource verifies {@code scheme}'s tokens with, from configuration text: for HMAC the Base64 secret,
     * for Ed25519 the public key (PEM or Base64). For building a {@link KeyRing} from properties.
     *
     * @throws FencingConfigurationException as the parser for that scheme does
     */
    public static VerificationKey verificationKey(SignatureScheme scheme, String keyId, String text) {
        return switch (scheme) {
            case HMAC_SHA256 -> VerificationKey.hmac(keyId, hmacSecret(keyId, text));
            case ED25519 -> VerificationKey.ed25519(keyId, ed25519PublicKey(keyId, text));
        };
    }

    /**
     * The signer of an issuer, from configuration text: for HMAC the Base64 secret, for Ed25519 the private key (PEM
     * or Base64).
     *
     * @throws FencingConfigurationException as the parser for that scheme does
     */
    public static TokenSigner signer(SignatureScheme scheme, String keyId, String text) {
        return switch (scheme) {
            case HMAC_SHA256 -> TokenSigner.hmac(keyId, hmacSecret(keyId, text));
            case ED25519 -> TokenSigner.ed25519(keyId, ed25519PrivateKey(keyId, text));
        };
    }

    /** Checks a key id, as a configuration error. */
    static String keyId(String keyId) {
        try {
            return TokenSignature.checkKeyId(keyId);
        } catch (IllegalArgumentException e) {
            throw new FencingConfigurationException(e.getMessage(), e);
        }
    }

    static byte[] checkHmacSecret(String keyId, byte[] secret) {
        keyId(keyId);
        if (secret == null || secret.length < MIN_HMAC_SECRET_BYTES) {
            throw new FencingConfigurationException("HMAC secret of signing key '" + keyId + "' is "
                    + (secret == null ? "missing" : secret.length + " bytes (" + secret.length * 8 + " bits)")
                    + "; at least " + MIN_HMAC_SECRET_BYTES + " bytes (256 bits) are required, e.g. "
                    + "`openssl rand -base64 32`");
        }
        return secret;
    }

    private static byte[] decodePem(String keyId, String what, String text, String label) {
        if (text == null || text.isBlank()) {
            throw new FencingConfigurationException(what + " of signing key '" + keyId + "' is missing");
        }
        String body = text.strip();
        if (body.startsWith("-----BEGIN ")) {
            String begin = "-----BEGIN " + label + "-----";
            String end = "-----END " + label + "-----";
            if (!body.startsWith(begin)) {
                int close = body.indexOf("-----", 11);
                String found = close < 0 ? "?" : body.substring(11, Math.min(close, 40));
                throw new FencingConfigurationException(what + " of signing key '" + keyId + "' is a PEM '"
                        + found.replaceAll("[^A-Z0-9 ]", "?") + "' block; expected '" + label + "'");
            }
            int stop = body.indexOf(end);
            if (stop < 0) {
                throw new FencingConfigurationException(what + " of signing key '" + keyId + "' has no '" + end
                        + "' line");
            }
            body = body.substring(begin.length(), stop);
        }
        return decode(keyId, what, body);
    }

    private static byte[] decode(String keyId, String what, String base64) {
        if (base64 == null || base64.isBlank()) {
            throw new FencingConfigurationException(what + " of signing key '" + keyId + "' is missing");
        }
        String compact = base64.replaceAll("\\s+", "");
        int placeholder = compact.indexOf("${");
        if (placeholder >= 0 && compact.indexOf('}', placeholder) > placeholder) {
            // the name of the placeholder is no secret: it is what the configuration says, not the key
            throw new FencingConfigurationException(what + " of signing key '" + keyId + "' is the placeholder "
                    + compact.substring(placeholder, compact.indexOf('}', placeholder) + 1) + ", never resolved: "
                    + "set that environment variable or property where the application runs");
        }
        boolean url = compact.indexOf('-') >= 0 || compact.indexOf('_') >= 0;
        try {
            return (url ? Base64.getUrlDecoder() : Base64.getDecoder()).decode(compact);
        } catch (IllegalArgumentException e) {
            // the JDK's message quotes the offending character of the key: not repeated here
            throw new FencingConfigurationException(what + " of signing key '" + keyId + "' is not valid Base64 ("
                    + compact.length() + " characters)");
        }
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = new byte[a.length + b.length];
        System.arraycopy(a, 0, out, 0, a.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
