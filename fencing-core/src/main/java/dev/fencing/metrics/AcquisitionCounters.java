package dev.fencing.metrics;

import io.micrometer.core.instrument.Counter;

/** The {@code fencing.acquisitions} counters of one resource, created once and reused on every acquire. */
public record AcquisitionCounters(Counter acquired, Counter failed) {
}
