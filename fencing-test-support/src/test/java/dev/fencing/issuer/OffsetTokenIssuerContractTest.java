package dev.fencing.issuer;

import dev.fencing.testsupport.TokenIssuerContract;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The offset decorator over the in-memory issuer passes the whole issuer contract (tokens, release, loss and its
 * counting, takeover): it changes only the token's value. In the issuer's package for the in-memory issuer's test
 * hooks, as {@link InMemoryTokenIssuerContractTest}.
 */
class OffsetTokenIssuerContractTest extends TokenIssuerContract {

    private final AtomicLong skew = new AtomicLong();
    private final MeterRegistry registry = new SimpleMeterRegistry();
    private final InMemoryTokenIssuer delegate = new InMemoryTokenIssuer(Duration.ofSeconds(30), 0,
            () -> System.nanoTime() + skew.get(), registry);
    private final OffsetTokenIssuer offset = OffsetTokenIssuer.of(delegate, 1L << 40);

    @Override
    protected MeterRegistry registry() {
        return registry;
    }

    @Override
    protected TokenIssuer issuer() {
        return offset;
    }

    @Override
    protected void afterNextGrant(String resource, Runnable action) {
        delegate.afterGrant = once(resource, action);
    }

    @Override
    protected void expire(Lease lease) {
        skew.addAndGet(Duration.ofSeconds(31).toNanos());
    }
}
