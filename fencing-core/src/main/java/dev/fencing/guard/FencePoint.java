package dev.fencing.guard;

import dev.fencing.FencingConfigurationException;
import dev.fencing.metrics.AcquisitionCounters;
import dev.fencing.metrics.CheckCounters;
import dev.fencing.metrics.FencingMetrics;

import java.util.Objects;

/**
 * Everything the guard needs about one fenced method, resolved once and cached by the adapter: the operation's
 * name for messages, the resource, the optional key, whether it acquires, and its counters.
 */
public final class FencePoint {

    private final String operation;
    private final String resource;
    private final KeyFunction key;
    private final String keySource;
    private final boolean acquire;
    private final CheckCounters checks;
    private final AcquisitionCounters acquisitions;

    /**
     * @param operation human-readable method name, e.g. {@code AccountRepository.save(Account)}
     * @param resource  the annotation's resource, not blank
     * @param key       key function, or {@code null} to fence the whole resource
     * @param keySource the key as written (for messages), or {@code null}
     * @param acquire   whether this method acquires when no token is bound
     * @param metrics   where its counters come from
     * @throws FencingConfigurationException when the resource is blank
     */
    public FencePoint(String operation, String resource, KeyFunction key, String keySource, boolean acquire,
                      FencingMetrics metrics) {
        this.operation = Objects.requireNonNull(operation, "operation");
        if (resource == null || resource.isBlank()) {
            throw new FencingConfigurationException("@Fenced on " + operation + " has a blank resource; "
                    + "name the lock, e.g. @Fenced(resource = \"accounts\")");
        }
        this.resource = resource;
        this.key = key;
        this.keySource = keySource;
        this.acquire = acquire;
        this.checks = metrics.checks(resource);
        this.acquisitions = metrics.acquisitions(resource);
    }

    /** The effective resource for these arguments: the resource, or {@code resource:key}. */
    public String effectiveResource(Object[] args) {
        if (key == null) {
            return resource;
        }
        Object value = key.keyOf(args);
        if (value == null) {
            throw new InvalidKeyException(resource, "Fencing key '" + keySource + "' of " + operation
                    + " evaluated to null: cannot tell which '" + resource + "' entity to fence, so the call is refused");
        }
        return resource + ':' + value;
    }

    public String operation() {
        return operation;
    }

    public String resource() {
        return resource;
    }

    public boolean hasKey() {
        return key != null;
    }

    public boolean acquire() {
        return acquire;
    }

    public CheckCounters checks() {
        return checks;
    }

    public AcquisitionCounters acquisitions() {
        return acquisitions;
    }

    @Override
    public String toString() {
        return "FencePoint[" + operation + ", resource=" + resource + (key == null ? "" : ", key=" + keySource)
                + (acquire ? ", acquire" : "") + "]";
    }
}
