package dev.fencing.issuer;

import dev.fencing.testsupport.TokenIssuerContract;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The core's in-memory issuer passes the issuer contract. It lives here and not in fencing-core because fencing-core
 * cannot depend on this module (which depends on it); it sits in the issuer's package, in test code only, for the
 * package-private clock and after-grant hook, as every issuer's contract test uses its issuer's hook.
 */
class InMemoryTokenIssuerContractTest extends TokenIssuerContract {

    private final AtomicLong skew = new AtomicLong(); // moves the shared issuer's clock forward to expire its leases
    private final MeterRegistry registry = new SimpleMeterRegistry();
    private final InMemoryTokenIssuer shared = new InMemoryTokenIssuer(Duration.ofSeconds(30), 0,
            () -> System.nanoTime() + skew.get(), registry);

    @Override
    protected MeterRegistry registry() {
        return registry;
    }

    @Override
    protected TokenIssuer issuer() {
        return shared;
    }

    @Override
    protected void afterNextGrant(String resource, Runnable action) {
        shared.afterGrant = once(resource, action);
    }

    @Override
    protected void expire(Lease lease) {
        skew.addAndGet(Duration.ofSeconds(31).toNanos()); // the holder paused past its time-to-live
    }
}
