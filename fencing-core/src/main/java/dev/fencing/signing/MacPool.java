package dev.fencing.signing;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.security.GeneralSecurityException;
import java.util.concurrent.ArrayBlockingQueue;

/**
 * HMAC-SHA256 with one secret, for any number of threads: a {@link Mac} is not thread-safe and costly to create,
 * so a few initialised instances are kept for reuse (at most {@link #IDLE}; more threads create and drop their own).
 * Holds no thread-local state. Its {@code toString} never shows the secret.
 */
final class MacPool {

    static final int IDLE = 8;

    private final SecretKeySpec key;
    private final ArrayBlockingQueue<Mac> idle = new ArrayBlockingQueue<>(IDLE);

    MacPool(byte[] secret) {
        this.key = new SecretKeySpec(secret, SignatureScheme.HMAC_SHA256.algorithm());
        idle.offer(create()); // fails now, at configuration time, if the JDK cannot do HMAC-SHA256
    }

    byte[] mac(byte[] content) {
        Mac mac = idle.poll();
        if (mac == null) {
            mac = create();
        }
        byte[] result = mac.doFinal(content); // doFinal resets the Mac for its next use
        idle.offer(mac);
        return result;
    }

    private Mac create() {
        try {
            Mac mac = Mac.getInstance(key.getAlgorithm());
            mac.init(key);
            return mac;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HMAC-SHA256 is not available in this JDK: " + e.getClass().getName(), e);
        }
    }

    @Override
    public String toString() {
        return "MacPool[HmacSHA256]";
    }
}
