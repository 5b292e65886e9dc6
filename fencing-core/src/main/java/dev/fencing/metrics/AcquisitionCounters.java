package dev.fencing.metrics;

import io.micrometer.core.instrument.Counter;

/**
 * The {@code fencing.acquisitions} counters of one resource tag, created once and reused on every acquire:
 * {@code acquired} ({@code exception=none}) and {@code failed}, one counter per {@code exception} tag (see
 * {@link FailureCounters}); and its {@code fencing.leases.unchecked} counter: locks given back with no check having
 * presented their token (see {@link dev.fencing.context.TokenUse}).
 *
 * @param resource the {@code resource} tag they count under (a static resource or a family, never an entity), which
 *                 an observation of the same acquisitions takes too
 */
public record AcquisitionCounters(String resource, Counter acquired, FailureCounters failed, Counter unchecked) {
}
