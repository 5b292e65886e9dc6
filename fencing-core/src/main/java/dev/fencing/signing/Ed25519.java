package dev.fencing.signing;

import dev.fencing.FencingConfigurationException;

import java.security.GeneralSecurityException;
import java.security.Key;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.Signature;
import java.security.interfaces.EdECKey;

/**
 * Ed25519 signing and verification with the JDK's provider. {@link Signature} objects are not thread-safe; one is
 * made per call (its set-up is small next to the curve arithmetic). No key material in any message.
 */
final class Ed25519 {

    private Ed25519() {
    }

    static byte[] sign(PrivateKey key, byte[] content) {
        try {
            Signature signature = Signature.getInstance(SignatureScheme.ED25519.algorithm());
            signature.initSign(key);
            signature.update(content);
            return signature.sign();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("Ed25519 signing failed: " + e.getClass().getName(), e);
        }
    }

    static boolean verify(PublicKey key, byte[] content, byte[] signatureBytes) {
        try {
            Signature signature = Signature.getInstance(SignatureScheme.ED25519.algorithm());
            signature.initVerify(key);
            signature.update(content);
            return signature.verify(signatureBytes);
        } catch (GeneralSecurityException e) {
            return false; // a signature the provider cannot even decode is not a valid one
        }
    }

    /** Fails unless {@code key} is an Ed25519 key (not Ed448, not RSA or EC). */
    static void requireEd25519(String keyId, String kind, Key key) {
        if (key == null) {
            throw new FencingConfigurationException("Ed25519 " + kind + " of signing key '" + keyId + "' is missing");
        }
        if (!(key instanceof EdECKey edec) || !"Ed25519".equalsIgnoreCase(edec.getParams().getName())) {
            throw new FencingConfigurationException("Signing key '" + keyId + "' is a " + key.getAlgorithm() + " "
                    + kind + ", not an Ed25519 one");
        }
    }
}
