package dev.fencing.metrics;

import io.micrometer.core.instrument.Counter;

/**
 * The {@code fencing.acquisitions} counters of one resource, created once and reused on every acquire: {@code acquired}
 * ({@code exception=none}) and {@code failed}, one counter per {@code exception} tag (see {@link FailureCounters});
 * and its {@code fencing.leases.unchecked} counter: locks given back with no check having presented their token
 * (see {@link dev.fencing.context.TokenUse}).
 */
public record AcquisitionCounters(Counter acquired, FailureCounters failed, Counter unchecked) {
}
