package dev.fencing.signing;

import dev.fencing.FencingConfigurationException;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The keys a {@link TokenVerifier} accepts, by key id, and the ids of retired keys, whose tokens are refused. Rotation
 * adds the new key to every verifier's ring first, then switches the issuer's {@link TokenSigner} to it, and finally
 * retires the old key once no token signed with it can still be in use. Immutable: {@link #with} and {@link #retire}
 * return new rings.
 */
public final class KeyRing {

    private final Map<String, VerificationKey> active;
    private final Set<String> retired;

    private KeyRing(Map<String, VerificationKey> active, Set<String> retired) {
        this.active = Collections.unmodifiableMap(active);
        this.retired = Collections.unmodifiableSet(retired);
    }

    /**
     * A ring verifying with {@code keys}.
     *
     * @throws FencingConfigurationException when two keys share an id or none is given
     */
    public static KeyRing of(VerificationKey... keys) {
        return of(List.of(keys));
    }

    /** {@link #of(VerificationKey...)} for a collection. */
    public static KeyRing of(Iterable<VerificationKey> keys) {
        Map<String, VerificationKey> active = new LinkedHashMap<>();
        for (VerificationKey key : keys) {
            if (active.putIfAbsent(key.keyId(), key) != null) {
                throw new FencingConfigurationException("Key ring has two keys with id '" + key.keyId()
                        + "'; give every key its own id");
            }
        }
        if (active.isEmpty()) {
            throw new FencingConfigurationException("Key ring has no key: a verifier without keys would refuse "
                    + "every token");
        }
        return new KeyRing(active, new LinkedHashSet<>());
    }

    /**
     * This ring plus {@code key}.
     *
     * @throws FencingConfigurationException when its id is already in the ring, active or retired
     */
    public KeyRing with(VerificationKey key) {
        if (active.containsKey(key.keyId()) || retired.contains(key.keyId())) {
            throw new FencingConfigurationException("Key ring already has a key with id '" + key.keyId() + "'"
                    + (retired.contains(key.keyId()) ? " (retired; a retired id is never reused)" : ""));
        }
        Map<String, VerificationKey> next = new LinkedHashMap<>(active);
        next.put(key.keyId(), key);
        return new KeyRing(next, new LinkedHashSet<>(retired));
    }

    /**
     * This ring with {@code keyIds} retired: tokens signed with them are refused from now on. Ids the ring never had
     * may be retired too (a key removed from configuration stays refused by name).
     *
     * @throws FencingConfigurationException when that would leave no active key
     */
    public KeyRing retire(String... keyIds) {
        Map<String, VerificationKey> next = new LinkedHashMap<>(active);
        Set<String> nextRetired = new LinkedHashSet<>(retired);
        for (String keyId : keyIds) {
            next.remove(KeyMaterial.keyId(keyId));
            nextRetired.add(keyId);
        }
        if (next.isEmpty()) {
            throw new FencingConfigurationException("Retiring " + String.join(", ", keyIds)
                    + " would leave the key ring without an active key");
        }
        return new KeyRing(next, nextRetired);
    }

    /** The ids of the keys tokens may be signed with, in the order they were added. */
    public Set<String> activeKeyIds() {
        return active.keySet();
    }

    /** The ids whose tokens are refused as signed with a retired key. */
    public Set<String> retiredKeyIds() {
        return retired;
    }

    /** The active key {@code keyId}, or {@code null}. */
    VerificationKey find(String keyId) {
        return active.get(keyId);
    }

    boolean isRetired(String keyId) {
        return retired.contains(keyId);
    }

    @Override
    public String toString() {
        return "KeyRing[active=" + active.keySet() + ", retired=" + retired + "]";
    }
}
