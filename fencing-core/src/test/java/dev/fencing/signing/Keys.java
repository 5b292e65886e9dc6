package dev.fencing.signing;

import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.SecureRandom;

/** Fresh key material for tests. */
final class Keys {

    private static final SecureRandom RANDOM = new SecureRandom();

    private Keys() {
    }

    static byte[] secret() {
        byte[] secret = new byte[32];
        RANDOM.nextBytes(secret);
        return secret;
    }

    static KeyPair ed25519() {
        try {
            return KeyPairGenerator.getInstance("Ed25519").generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A signer and the verifier of one key, of either scheme. */
    record Pair(TokenSigner signer, VerificationKey key) {

        TokenVerifier verifier() {
            return new TokenVerifier(KeyRing.of(key));
        }

        static Pair of(SignatureScheme scheme, String keyId) {
            if (scheme == SignatureScheme.HMAC_SHA256) {
                byte[] secret = secret();
                return new Pair(TokenSigner.hmac(keyId, secret), VerificationKey.hmac(keyId, secret));
            }
            KeyPair pair = ed25519();
            return new Pair(TokenSigner.ed25519(keyId, pair.getPrivate()),
                    VerificationKey.ed25519(keyId, pair.getPublic()));
        }
    }
}
